#include "worker/data/idx_loader.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace lockstep {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803;
constexpr uint32_t kLabelsMagic = 0x00000801;
constexpr uint64_t kMaxImageBytes = uint64_t{1} << 20;
// Bytes handed to one gzread call; large enough to amortise the call,
// small enough that a lying header cannot make us allocate before we notice
// the data is not there.
constexpr uint64_t kChunkBytes = uint64_t{1} << 20;

// "<path>: <what> at offset <offset>[: <detail>]".
std::string At(const std::string& path, const std::string& what,
               uint64_t offset, const std::string& detail = "") {
  std::string message =
      path + ": " + what + " at offset " + std::to_string(offset);
  if (!detail.empty()) message += ": " + detail;
  return message;
}

// Sequential reader over one gzip file that tracks the offset in the
// decompressed stream. Not thread-safe.
class GzReader {
 public:
  GzReader() = default;
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;
  ~GzReader() {
    if (file_ != nullptr) gzclose(file_);
  }

  // Opens `path`, rejecting files that do not start with the gzip magic
  // (zlib would otherwise read them transparently as raw bytes).
  Status Open(const std::string& path);

  // Reads up to `n` bytes into `buf`; returns how many were read (fewer
  // only at end of data). Errors: Corruption on a broken gzip stream.
  StatusOr<uint64_t> Read(uint8_t* buf, uint64_t n);

  // The Corruption status for a read that stopped short: `expected` bytes
  // of `what` were wanted, `got` arrived.
  Status Truncated(uint64_t expected, uint64_t got,
                   const std::string& what) const;

  const std::string& path() const { return path_; }
  uint64_t offset() const { return offset_; }

 private:
  std::string path_;
  gzFile file_ = nullptr;
  uint64_t offset_ = 0;
  bool stream_ended_early_ = false;
};

Status GzReader::Open(const std::string& path) {
  path_ = path;
  std::FILE* raw = std::fopen(path.c_str(), "rb");
  if (raw == nullptr) {
    const int err = errno;
    const std::string what = "cannot open file";
    if (err == ENOENT) return NotFound(At(path, what, 0, std::strerror(err)));
    return IOError(At(path, what, 0, std::strerror(err)));
  }
  std::array<unsigned char, 2> magic = {0, 0};
  const size_t got = std::fread(magic.data(), 1, magic.size(), raw);
  std::fclose(raw);
  if (got != magic.size() || magic[0] != 0x1f || magic[1] != 0x8b) {
    return Corruption(At(path, "not a gzip file", 0,
                         "expected magic bytes 1f 8b in the compressed file"));
  }
  file_ = gzopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    return IOError(At(path, "gzopen failed", 0, std::strerror(errno)));
  }
  gzbuffer(file_, 1 << 17);
  return Status::Ok();
}

StatusOr<uint64_t> GzReader::Read(uint8_t* buf, uint64_t n) {
  uint64_t total = 0;
  while (total < n) {
    const uint64_t want =
        std::min<uint64_t>(n - total, std::numeric_limits<int>::max());
    const int got = gzread(file_, buf + total, static_cast<unsigned>(want));
    if (got < 0) {
      int errnum = Z_OK;
      const char* message = gzerror(file_, &errnum);
      return Corruption(At(path_, "broken gzip stream", offset_ + total,
                           message != nullptr ? message : "unknown error"));
    }
    total += static_cast<uint64_t>(got);
    if (static_cast<uint64_t>(got) < want) {
      int errnum = Z_OK;
      gzerror(file_, &errnum);
      stream_ended_early_ = errnum == Z_BUF_ERROR;
      break;
    }
  }
  offset_ += total;
  return total;
}

Status GzReader::Truncated(uint64_t expected, uint64_t got,
                           const std::string& what) const {
  std::string detail = "expected " + std::to_string(expected) + " bytes of " +
                       what + ", got " + std::to_string(got);
  if (stream_ended_early_) detail += " (compressed stream ends early)";
  return Corruption(At(path_, "truncated", offset_, detail));
}

StatusOr<uint32_t> ReadBigEndianU32(GzReader& reader, const std::string& what) {
  std::array<uint8_t, 4> bytes = {};
  LS_ASSIGN_OR_RETURN(uint64_t got, reader.Read(bytes.data(), bytes.size()));
  if (got != bytes.size()) return reader.Truncated(bytes.size(), got, what);
  return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) |
         (uint32_t{bytes[2]} << 8) | uint32_t{bytes[3]};
}

Status CheckMagic(const GzReader& reader, uint32_t magic, uint32_t expected) {
  if (magic == expected) return Status::Ok();
  char detail[96];
  std::snprintf(detail, sizeof(detail), "got 0x%08x, expected 0x%08x%s", magic,
                expected,
                magic == kImagesMagic   ? " (an image file)"
                : magic == kLabelsMagic ? " (a label file)"
                                        : "");
  return Corruption(At(reader.path(), "bad IDX magic", 0, detail));
}

struct ImagesHeader {
  uint32_t count = 0;
  uint32_t rows = 0;
  uint32_t cols = 0;
};

StatusOr<ImagesHeader> ReadImagesHeader(GzReader& reader) {
  LS_ASSIGN_OR_RETURN(uint32_t magic, ReadBigEndianU32(reader, "IDX magic"));
  LS_RETURN_IF_ERROR(CheckMagic(reader, magic, kImagesMagic));
  ImagesHeader header;
  LS_ASSIGN_OR_RETURN(header.count, ReadBigEndianU32(reader, "image count"));
  LS_ASSIGN_OR_RETURN(header.rows, ReadBigEndianU32(reader, "row count"));
  LS_ASSIGN_OR_RETURN(header.cols, ReadBigEndianU32(reader, "column count"));
  if (header.count == 0) {
    return Corruption(At(reader.path(), "image count is 0", 4));
  }
  if (header.rows == 0 || header.cols == 0) {
    return Corruption(
        At(reader.path(), "zero image dimension", 8,
           std::to_string(header.rows) + "x" + std::to_string(header.cols)));
  }
  const uint64_t pixels = uint64_t{header.rows} * header.cols;
  if (pixels > kMaxImageBytes) {
    return Corruption(At(reader.path(), "image too large", 8,
                         std::to_string(header.rows) + "x" +
                             std::to_string(header.cols) + " > 2^20 pixels"));
  }
  return header;
}

StatusOr<uint32_t> ReadLabelsHeader(GzReader& reader) {
  LS_ASSIGN_OR_RETURN(uint32_t magic, ReadBigEndianU32(reader, "IDX magic"));
  LS_RETURN_IF_ERROR(CheckMagic(reader, magic, kLabelsMagic));
  return ReadBigEndianU32(reader, "label count");
}

// Appends `count` images of `dim` bytes each, scaled to [0, 1].
Status ReadImages(GzReader& reader, uint64_t count, uint64_t dim,
                  std::vector<float>* features) {
  std::array<float, 256> scale = {};
  for (int p = 0; p < 256; ++p) scale[p] = static_cast<float>(p) / 255.0f;
  const uint64_t per_chunk = std::max<uint64_t>(1, kChunkBytes / dim);
  std::vector<uint8_t> buf;
  for (uint64_t first = 0; first < count; first += per_chunk) {
    const uint64_t images = std::min(per_chunk, count - first);
    buf.resize(images * dim);
    LS_ASSIGN_OR_RETURN(uint64_t got, reader.Read(buf.data(), buf.size()));
    if (got < buf.size()) {
      const uint64_t image = first + got / dim;
      return reader.Truncated(dim, got % dim, "image " + std::to_string(image));
    }
    const size_t old_size = features->size();
    features->resize(old_size + buf.size());
    std::transform(buf.begin(), buf.end(),
                   std::span(*features).subspan(old_size).begin(),
                   [&scale](uint8_t pixel) { return scale[pixel]; });
  }
  return Status::Ok();
}

// Appends `count` labels, each checked to be < classes.
Status ReadLabels(GzReader& reader, uint64_t count, uint32_t classes,
                  std::vector<int32_t>* labels) {
  std::vector<uint8_t> buf;
  for (uint64_t first = 0; first < count; first += kChunkBytes) {
    const uint64_t chunk_offset = reader.offset();
    buf.resize(std::min(kChunkBytes, count - first));
    LS_ASSIGN_OR_RETURN(uint64_t got, reader.Read(buf.data(), buf.size()));
    if (got < buf.size()) {
      return reader.Truncated(1, 0, "label " + std::to_string(first + got));
    }
    for (uint64_t i = 0; i < buf.size(); ++i) {
      if (buf[i] >= classes) {
        return Corruption(At(reader.path(), "label out of range",
                             chunk_offset + i,
                             "label " + std::to_string(buf[i]) + " of sample " +
                                 std::to_string(first + i) + " is not in [0, " +
                                 std::to_string(classes) + ")"));
      }
      labels->push_back(buf[i]);
    }
  }
  return Status::Ok();
}

// After a full load the stream must end here; reading on also makes zlib
// verify the gzip trailer (CRC and length).
Status ExpectEnd(GzReader& reader) {
  uint8_t extra = 0;
  LS_ASSIGN_OR_RETURN(uint64_t got, reader.Read(&extra, 1));
  if (got != 0) {
    return Corruption(
        At(reader.path(), "unexpected trailing data", reader.offset() - 1));
  }
  return Status::Ok();
}

// Opens an image file and its label file, reads both headers and checks
// that they describe the same number of examples.
StatusOr<ImagesHeader> OpenPair(const std::string& images_path,
                                const std::string& labels_path,
                                GzReader* images, GzReader* labels) {
  LS_RETURN_IF_ERROR(images->Open(images_path));
  LS_RETURN_IF_ERROR(labels->Open(labels_path));
  LS_ASSIGN_OR_RETURN(ImagesHeader header, ReadImagesHeader(*images));
  LS_ASSIGN_OR_RETURN(uint32_t label_count, ReadLabelsHeader(*labels));
  if (label_count != header.count) {
    return Corruption(At(labels_path, "label count mismatch", 4,
                         std::to_string(label_count) + " labels but " +
                             images_path + " holds " +
                             std::to_string(header.count) + " images"));
  }
  return header;
}

}  // namespace

StatusOr<DenseRows> LoadIdxGz(const std::string& images_path,
                              const std::string& labels_path, uint64_t limit,
                              uint32_t classes) {
  if (classes == 0 || classes > 256) {
    return InvalidArgument("LoadIdxGz: classes must be in [1, 256], got " +
                           std::to_string(classes));
  }
  GzReader images;
  GzReader labels;
  LS_ASSIGN_OR_RETURN(ImagesHeader header,
                      OpenPair(images_path, labels_path, &images, &labels));
  const uint64_t take =
      limit == 0 ? header.count : std::min<uint64_t>(limit, header.count);
  DenseRows data;
  data.dim = uint64_t{header.rows} * header.cols;
  data.classes = classes;
  LS_RETURN_IF_ERROR(ReadImages(images, take, data.dim, &data.features));
  LS_RETURN_IF_ERROR(ReadLabels(labels, take, classes, &data.labels));
  if (take == header.count) {
    LS_RETURN_IF_ERROR(ExpectEnd(images));
    LS_RETURN_IF_ERROR(ExpectEnd(labels));
  }
  data.size = take;
  return data;
}

StatusOr<IdxShape> ProbeIdxGz(const std::string& images_path,
                              const std::string& labels_path) {
  GzReader images;
  GzReader labels;
  LS_ASSIGN_OR_RETURN(ImagesHeader header,
                      OpenPair(images_path, labels_path, &images, &labels));
  return IdxShape{header.count, uint64_t{header.rows} * header.cols};
}

FashionMnistFiles FashionMnistPaths(const std::string& dir, bool train) {
  const std::string prefix = train ? "train" : "t10k";
  const std::filesystem::path base(dir);
  return {(base / (prefix + "-images-idx3-ubyte.gz")).string(),
          (base / (prefix + "-labels-idx1-ubyte.gz")).string()};
}

StatusOr<DenseRows> LoadFashionMnist(const std::string& dir, bool train,
                                     uint64_t limit) {
  const FashionMnistFiles files = FashionMnistPaths(dir, train);
  return LoadIdxGz(files.images, files.labels, limit, kFashionMnistClasses);
}

}  // namespace lockstep
