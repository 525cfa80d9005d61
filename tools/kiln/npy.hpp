// NumPy .npy files: the `kiln` command's tensor input and output format.
//
// Read: format versions 1.0, 2.0 and 3.0; little-endian or byte-order-free
// numeric dtypes ('<f2' '<f4' '<f8', '<i1'..'<i8', '<u1'..'<u8', '|b1',
// '|i1', '|u1'); C order; any shape, 0-d included. Everything else (big-endian,
// Fortran order, object or structured dtypes, truncated data, a bad magic or
// header) is an ArgumentError naming the file, the problem and what is
// supported. Write: version 1.0 with the dict header padded to a multiple of
// 64 bytes ending in '\n', as numpy.save does (2.0 only when the header
// would not fit, as NumPy too).
//
// NumPy has no bfloat16 and no fp8: a bf16 tensor is written as '<u2' bit
// patterns and an fp8 one as '|u1' bytes; read_npy(path, DType::bf16) reads
// a '<u2' file as bf16, read_npy(path, DType::f8e4nv) a '|u1' file as fp8.
//
// Functions here are thread-safe (no shared state); files are not locked.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kiln/dtype.hpp"
#include "tools/kiln/host_tensor.hpp"

namespace kiln::cli {

/// The .npy descr of `t` ("<f4", "|b1", "<u2" for bf16).
std::string npy_descr(DType t);

/// Reads `path`. `read_as` may only be DType::bf16 or an fp8 type, and then the file must
/// hold uint16. Throws ArgumentError for content kiln does not support and
/// RuntimeError when the file cannot be opened or read.
HostTensor read_npy(const std::string &path, std::optional<DType> read_as = std::nullopt);

/// Writes `t` to `path`, replacing the file. Throws RuntimeError when it
/// cannot be written.
void write_npy(const std::string &path, const HostTensor &t);

} // namespace kiln::cli
