// The shapes of the compute backends' image operations, as plain structs
// (the CUDA kernels include this header too).
#ifndef LOCKSTEP_WORKER_COMPUTE_GEOMETRY_H_
#define LOCKSTEP_WORKER_COMPUTE_GEOMETRY_H_

#include <cstdint>

namespace lockstep {

// A same-padded, stride-1 convolution's input and kernel, per batch.
struct ConvGeometry {
  uint64_t batch = 0;
  uint32_t height = 0;
  uint32_t width = 0;
  uint32_t channels = 0;  // input channels
  uint32_t kernel = 0;    // odd; padding kernel / 2 on every side
  // Floats per patch row: kernel * kernel * channels.
  uint64_t patch() const {
    return static_cast<uint64_t>(kernel) * kernel * channels;
  }
  // Patch rows: one per output pixel, batch * height * width.
  uint64_t rows() const { return batch * height * width; }
};

// A max-pool over size x size windows with stride size (a partial window
// at the right or bottom edge is dropped).
struct PoolGeometry {
  uint64_t batch = 0;
  uint32_t height = 0;
  uint32_t width = 0;
  uint32_t channels = 0;
  uint32_t size = 0;
  uint32_t out_height() const { return height / size; }
  uint32_t out_width() const { return width / size; }
  uint64_t out_size() const {
    return batch * out_height() * out_width() * channels;
  }
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_COMPUTE_GEOMETRY_H_
