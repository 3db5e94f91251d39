// An in-memory image of a shard's arrays as they were at one instant,
// taken without holding training: the shard freezes the instant by
// creating a capture (cost independent of the arrays' size), a background
// thread copies chunk after chunk at memory speed (Run), and the thread
// that updates the arrays calls BeforeWrite first, which copies only the
// chunks it is about to change that the background thread has not reached.
// Either way each chunk is copied exactly once, and the image is the
// arrays' content at the freeze, byte for byte.
// A capture that takes over an earlier one's image (recycle) compares each
// unit of bytes with what that image held before overwriting it, and
// records which units changed: what an incremental round stores.
// Thread-safety: Run on one thread; BeforeWrite, CaptureAll on the one
// mutating thread; Done and Wait from any thread. The arrays must not be
// written by anyone but the caller of BeforeWrite, and must not move
// (reallocate) before CaptureAll returns.
#ifndef LOCKSTEP_SERVER_MODEL_SNAPSHOT_CAPTURE_H_
#define LOCKSTEP_SERVER_MODEL_SNAPSHOT_CAPTURE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace lockstep {

// One array to capture: its name (as stored), its bytes, and the unit its
// changes are recorded in (0: a chunk; a sparse table's row otherwise).
struct CaptureArray {
  std::string name;
  std::span<const std::byte> bytes;
  size_t unit = 0;
};

class SnapshotCapture {
 public:
  // Freezes `arrays`; chunk_bytes >= 1 is the unit of copying (the last
  // chunk of an array may be shorter). Allocates the image without
  // touching its pages, so the cost here does not grow with the arrays.
  // `recycle`, when given, is an earlier capture (not in use any more)
  // whose image buffers this one takes over where they are large enough:
  // a round after the first then neither maps nor faults in fresh pages,
  // and no old image is unmapped here. `recycle` holds no image after.
  // When `recycle` is Done, an array of the same name and position is
  // compared with its image (the basis; one too small is kept aside until
  // this capture is destroyed) and changed() says what differs.
  SnapshotCapture(std::vector<CaptureArray> arrays, size_t chunk_bytes,
                  SnapshotCapture* recycle = nullptr);
  ~SnapshotCapture() = default;
  SnapshotCapture(const SnapshotCapture&) = delete;
  SnapshotCapture& operator=(const SnapshotCapture&) = delete;

  // Background: copies every chunk not yet copied, then returns.
  void Run();
  // Mutator: copies the not yet copied chunks of array `array` that bytes
  // [offset, offset + size) touch. Waits at most for one chunk being
  // copied by Run. Cheap once the capture is done.
  void BeforeWrite(size_t array, size_t offset, size_t size);
  // Mutator: copies every chunk not yet copied (before the arrays move).
  void CaptureAll();

  // True once every chunk is copied (acquire: the image is then readable).
  bool Done() const;
  // Blocks until Done().
  void Wait() const;

  size_t arrays() const { return arrays_.size(); }
  const std::string& name(size_t array) const { return arrays_[array].name; }
  size_t chunk_bytes() const { return chunk_bytes_; }
  // The image of `array`. REQUIRES: Done().
  std::span<const std::byte> image(size_t array) const;
  // Chunks copied by BeforeWrite / CaptureAll rather than by Run: how much
  // of the copying landed on the training path.
  uint64_t chunks_copied_by_mutator() const {
    return by_mutator_.load(std::memory_order_relaxed);
  }
  uint64_t chunks() const { return states_size_; }

  // Whether `array` was compared with a basis; without one every unit
  // counts as changed.
  bool compared(size_t array) const { return arrays_[array].compared; }
  // The unit of `array`'s changes in bytes, and how many units it has (the
  // last may be shorter).
  size_t unit(size_t array) const { return arrays_[array].unit; }
  size_t units(size_t array) const;
  // Whether unit `u` of `array` differs from the basis (or lies past its
  // end, or there is none). REQUIRES: Done().
  bool changed(size_t array, size_t u) const;

 private:
  enum State : uint8_t { kPending = 0, kCopying = 1, kCopied = 2 };
  struct Array {
    std::string name;
    std::span<const std::byte> live;
    std::unique_ptr<std::byte[]> image;
    size_t capacity = 0;     // bytes the image buffer holds
    size_t first_chunk = 0;  // index of its chunk 0 in states_
    size_t unit = 0;
    // The basis: the recycled image's bytes before this capture, in image
    // itself (in place) or in `previous` when the image had to grow.
    bool compared = false;
    size_t basis_bytes = 0;
    std::unique_ptr<std::byte[]> previous;
    std::unique_ptr<std::atomic<uint8_t>[]> changed;  // one flag per unit
  };

  static size_t UnitsOf(const Array& a);
  // Takes over `old`'s image (or keeps it as the basis) for `array`.
  void Recycle(Array& old, bool compare, Array* array) const;
  // Copies chunk `chunk` of `array` unless someone else did or does (then
  // waits for it). Returns true when this call copied it.
  bool CopyChunk(size_t array, size_t chunk);
  // Copies bytes [offset, offset + size) of `a` into its image, recording
  // which units differ from the basis.
  static void CompareAndCopy(Array& a, size_t offset, size_t size);
  void ChunkDone();

  std::vector<Array> arrays_;
  const size_t chunk_bytes_;
  size_t states_size_ = 0;
  std::unique_ptr<std::atomic<uint8_t>[]> states_;
  std::atomic<uint64_t> remaining_;
  std::atomic<uint64_t> by_mutator_{0};
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_MODEL_SNAPSHOT_CAPTURE_H_
