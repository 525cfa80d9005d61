// Where a kernel runs.
#pragma once

#include <cstdint>
#include <string>

namespace kiln {

enum class Backend : uint8_t { cpu, cuda };

/// A device: the host CPU (index 0) or a CUDA device by ordinal.
struct Device {
  Backend backend = Backend::cpu;
  int index = 0;

  friend bool operator==(const Device &, const Device &) = default;
  std::string str() const; // "cpu", "cuda:0"
};

/// The device the calling thread's launches use, as the seed's current
/// device (torch.cuda.set_device) is per thread: a thread that never calls
/// set_device uses the process default (KILN_BACKEND; auto is cuda:0 where
/// a GPU works, else the cpu). Affects this thread's launches that start after.
void set_device(Device d);
Device current_device();

/// An opaque stream handle (a CUstream on cuda; ignored on cpu). Null is the default stream.
using Stream = void *;

} // namespace kiln
