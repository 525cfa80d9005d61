// A non-owning view of tensor memory: what a pointer argument is made from.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>

#include <dlpack/dlpack.h>

#include "kiln/device.hpp"
#include "kiln/dtype.hpp"

namespace kiln {

/// Data pointer, element type, device and (up to 4-D) shape. kiln never owns
/// or frees the memory; the caller keeps it alive for the launch.
struct Tensor {
  static constexpr int kMaxDims = 4;
  /// The device of a tensor nobody labelled (index -1): a launch leaves its
  /// pointer to the driver's check. A labelled tensor (a Buffer's, a DLPack
  /// one, or one given a Device) must be on the launch's device.
  static constexpr Device kUnlabelled{Backend::cpu, -1};

  void *data = nullptr;
  DType dtype = DType::f32;
  Device device = kUnlabelled;
  int ndim = 0;
  std::array<int64_t, kMaxDims> shape{};

  Tensor() = default;
  Tensor(void *p, DType t, std::initializer_list<int64_t> dims = {}, Device d = kUnlabelled);
  template <class T>
  Tensor(T *p, std::initializer_list<int64_t> dims = {}, Device d = kUnlabelled)
      : Tensor(static_cast<void *>(const_cast<std::remove_const_t<T> *>(p)),
               dtype_of<std::remove_const_t<T>>(), dims, d) {}

  /// A view of a DLPack tensor (kDLCPU or kDLCUDA; the dtype must be one of kiln's).
  static Tensor from_dlpack(const DLTensor &t);

  bool labelled() const { return device.index >= 0; }
  int64_t numel() const;
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }
};

} // namespace kiln
