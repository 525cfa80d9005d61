#include "tools/kiln/host_tensor.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

#include "kiln/error.hpp"
#include "tools/kiln/npy.hpp"

namespace kiln::cli {

namespace {

constexpr std::string_view kDTypeList =
    "f16 bf16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 i1 f8e4nv f8e5 f8e4b15 f8e4b8 f8e5b16";

// Appends rather than "'" + std::string(s): GCC 12 at -O3 reports a false
// -Wrestrict for a literal prepended to a temporary string (GCC PR 105651).
std::string in_quotes(std::string_view s) {
  std::string q(1, '\'');
  q.append(s);
  q += '\'';
  return q;
}

/// numel and byte size of `shape`, or ArgumentError when they do not fit.
std::pair<int64_t, std::size_t> checked_size(DType dtype, const std::vector<int64_t> &shape) {
  // Keep the byte count below PTRDIFF_MAX so pointer arithmetic over the
  // buffer, ours and the kernel's, is defined.
  constexpr auto kMaxBytes = static_cast<uint64_t>(std::numeric_limits<std::ptrdiff_t>::max());
  const uint64_t elem = dtype_size(dtype);
  uint64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0)
      throw ArgumentError("tensor shape " + format_shape(shape) + " has a negative extent");
    if (d != 0 && numel > kMaxBytes / elem / static_cast<uint64_t>(d))
      throw ArgumentError("tensor shape " + format_shape(shape) + " of " +
                          std::string(dtype_short_name(dtype)) + " is too large to allocate");
    numel *= static_cast<uint64_t>(d);
  }
  return {static_cast<int64_t>(numel), static_cast<std::size_t>(numel * elem)};
}

} // namespace

void HostTensor::Free::operator()(std::byte *p) const {
  std::free(p);
}

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  std::tie(numel_, nbytes_) = checked_size(dtype_, shape_);
  // aligned_alloc wants a multiple of the alignment; round up, and allocate
  // at least one block so data() is never null.
  const std::size_t alloc =
      std::max<std::size_t>(kAlignment, (nbytes_ + kAlignment - 1) / kAlignment * kAlignment);
  auto *p = static_cast<std::byte *>(std::aligned_alloc(kAlignment, alloc));
  if (p == nullptr)
    throw std::bad_alloc();
  data_.reset(p);
}

HostTensor HostTensor::empty(DType dtype, std::vector<int64_t> shape) {
  return HostTensor(dtype, std::move(shape));
}

HostTensor HostTensor::zeros(DType dtype, std::vector<int64_t> shape) {
  HostTensor t(dtype, std::move(shape));
  std::memset(t.data(), 0, t.nbytes());
  return t;
}

void HostTensor::reinterpret_as(DType t) {
  if (dtype_size(t) != dtype_size(dtype_))
    throw ArgumentError("cannot read " + std::string(dtype_short_name(dtype_)) + " elements as " +
                        std::string(dtype_short_name(t)) + ": their sizes differ");
  dtype_ = t;
}

HostTensor HostTensor::clone() const {
  HostTensor t(dtype_, shape_);
  std::memcpy(t.data(), data(), nbytes_);
  return t;
}

void HostTensor::copy_from(const HostTensor &src) {
  if (src.nbytes_ != nbytes_)
    throw ArgumentError("cannot copy a tensor of " + std::to_string(src.nbytes_) +
                        " bytes into one of " + std::to_string(nbytes_));
  std::memcpy(data(), src.data(), nbytes_);
}

Tensor HostTensor::view(Device device) {
  Tensor t;
  t.data = data();
  t.dtype = dtype_;
  t.device = device;
  const int ndim = static_cast<int>(shape_.size());
  const int folded = std::max(0, ndim - Tensor::kMaxDims);
  t.ndim = ndim - folded;
  for (int i = 0; i < t.ndim; ++i)
    t.shape[i] = shape_[i + folded];
  for (int i = 0; i < folded; ++i)
    t.shape[0] *= shape_[i];
  return t;
}

std::string format_shape(std::span<const int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += 'x';
    s += std::to_string(shape[i]);
  }
  return s;
}

std::vector<int64_t> parse_shape(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return ArgumentError("bad shape " + in_quotes(text) + ": " + std::string(why) +
                         "; write extents joined by 'x', like 1000 or 1000x64");
  };
  if (text.empty())
    throw bad("it is empty");
  std::vector<int64_t> shape;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = std::min(text.find('x', start), text.size());
    const std::string_view part = text.substr(start, end - start);
    if (part.empty())
      throw bad("an extent is missing");
    int64_t v = 0;
    // from_chars accepts no '+' and no spaces, and a leading '-' is refused
    // below, so only plain decimal digits pass.
    const auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec == std::errc::result_out_of_range)
      throw bad(in_quotes(part) + " is too large");
    if (ec != std::errc() || p != part.data() + part.size() || part.front() == '-')
      throw bad(in_quotes(part) + " is not a non-negative integer");
    shape.push_back(v);
    if (end == text.size())
      return shape;
    start = end + 1;
  }
}

std::optional<TensorSpec> parse_tensor_spec(std::string_view text) {
  TensorSpec spec;
  if (text.starts_with('@')) {
    spec.kind = TensorSpec::Kind::npy;
    std::string_view path = text.substr(1);
    // "@x.npy:bf16": a suffix after a path ending in .npy is a dtype
    // override. A ':' elsewhere is part of the path.
    if (const std::size_t colon = path.rfind(':');
        colon != std::string_view::npos && path.substr(0, colon).ends_with(".npy")) {
      const std::string_view suffix = path.substr(colon + 1);
      const std::optional<DType> as = parse_dtype(suffix);
      if (as != DType::bf16 && !(as && is_fp8(*as)))
        throw ArgumentError(in_quotes(text) +
                            ": only ':bf16' or an fp8 type (':fp8e4nv', ...) may follow a .npy path (NumPy "
                            "has neither; the file holds uint16 / uint8 bit patterns); other dtypes "
                            "come from the file itself");
      spec.read_as = *as;
      path = path.substr(0, colon);
    }
    if (path.empty())
      throw ArgumentError(in_quotes(text) + ": the file name after '@' is missing");
    spec.path = std::string(path);
    return spec;
  }

  if (text.starts_with("zeros:"))
    spec.kind = TensorSpec::Kind::zeros;
  else if (text.starts_with("empty:"))
    spec.kind = TensorSpec::Kind::empty;
  else
    return std::nullopt;
  const std::string_view rest = text.substr(6);
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos)
    throw ArgumentError(in_quotes(text) + ": the dtype is missing; write " +
                        std::string(text.substr(0, 6)) + "SHAPE:DTYPE, like zeros:1000x64:f32");
  const std::string_view dt = rest.substr(colon + 1);
  const std::optional<DType> dtype = parse_dtype(dt);
  if (!dtype)
    throw ArgumentError(in_quotes(text) + ": unknown dtype " + in_quotes(dt) + "; one of " +
                        std::string(kDTypeList));
  spec.dtype = *dtype;
  try {
    spec.shape = parse_shape(rest.substr(0, colon));
  } catch (const ArgumentError &e) {
    throw ArgumentError(in_quotes(text) + ": " + e.what());
  }
  // Fail here, at parse time, rather than when allocating.
  (void)checked_size(spec.dtype, spec.shape);
  return spec;
}

HostTensor make_host_tensor(const TensorSpec &spec) {
  switch (spec.kind) {
  case TensorSpec::Kind::zeros:
    return HostTensor::zeros(spec.dtype, spec.shape);
  case TensorSpec::Kind::empty:
    return HostTensor::empty(spec.dtype, spec.shape);
  case TensorSpec::Kind::npy:
    break;
  }
  return read_npy(spec.path, spec.read_as);
}

} // namespace kiln::cli
