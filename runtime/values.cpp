// Small value types of the public API: Tensor, Device, Options, CompiledKernel.
#include <dlpack/dlpack.h>

#include "kiln/arg.hpp"
#include "kiln/compiled_kernel.hpp"
#include "kiln/device.hpp"
#include "kiln/error.hpp"
#include "kiln/options.hpp"
#include "kiln/tensor.hpp"

namespace kiln {

Tensor::Tensor(void *p, DType t, std::initializer_list<int64_t> dims, Device d) : data(p), dtype(t), device(d) {
  if (dims.size() > kMaxDims)
    throw ArgumentError("a kiln::Tensor has at most 4 dimensions");
  for (int64_t x : dims)
    shape[ndim++] = x;
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i)
    n *= shape[i];
  return n;
}

namespace {

DType from_dlpack_dtype(const DLDataType &t) {
  if (t.lanes != 1)
    throw ArgumentError("DLPack tensors with vector lanes are not supported");
  switch (t.code) {
  case kDLInt:
    switch (t.bits) {
    case 8: return DType::i8;
    case 16: return DType::i16;
    case 32: return DType::i32;
    case 64: return DType::i64;
    }
    break;
  case kDLUInt:
    switch (t.bits) {
    case 1: return DType::i1;
    case 8: return DType::u8;
    case 16: return DType::u16;
    case 32: return DType::u32;
    case 64: return DType::u64;
    }
    break;
  case kDLFloat:
    switch (t.bits) {
    case 16: return DType::f16;
    case 32: return DType::f32;
    case 64: return DType::f64;
    }
    break;
  case kDLBfloat:
    if (t.bits == 16)
      return DType::bf16;
    break;
  }
  throw ArgumentError("DLPack dtype (code " + std::to_string(t.code) + ", " + std::to_string(t.bits) +
                      " bits) has no kiln equivalent");
}

} // namespace

Tensor Tensor::from_dlpack(const DLTensor &t) {
  Tensor out;
  out.data = static_cast<char *>(t.data) + t.byte_offset;
  out.dtype = from_dlpack_dtype(t.dtype);
  if (t.device.device_type == kDLCPU)
    out.device = Device{Backend::cpu, 0};
  else if (t.device.device_type == kDLCUDA)
    out.device = Device{Backend::cuda, t.device.device_id};
  else
    throw ArgumentError("DLPack device type " + std::to_string(t.device.device_type) + " is not supported");
  if (t.ndim > kMaxDims)
    throw ArgumentError("a kiln::Tensor has at most 4 dimensions");
  out.ndim = t.ndim;
  for (int i = 0; i < t.ndim; ++i)
    out.shape[i] = t.shape[i];
  return out;
}

Arg::Arg(const DLTensor *t) : Arg(Tensor::from_dlpack(*t)) {}

std::string Device::str() const {
  return backend == Backend::cpu ? "cpu" : "cuda:" + std::to_string(index);
}

std::string Options::str() const {
  return "num_warps=" + std::to_string(num_warps) + ", num_ctas=" + std::to_string(num_ctas) +
         ", num_stages=" + std::to_string(num_stages) + ", enable_fp_fusion=" + (enable_fp_fusion ? "true" : "false") +
         (debug ? ", debug=true" : "");
}

double CompiledKernel::total_ms() const {
  double t = 0;
  for (const StageTime &s : times)
    t += s.ms;
  return t;
}

} // namespace kiln
