// Tensor-core layouts as data: the accumulator of mma.sync m16n8kK (one
// 16x8 tile per warp per instruction, warps tiled over M and N, the tile
// repeated in each thread's registers) and the fragments of its A and B
// operands, as BitMaps (gpu/layout.hpp) so that the conversion machinery
// compares and converts them like any other layout.
//
// Per warp, as PTX's mma.m16n8k16 defines them (lane = 4*g + t):
//   accumulator c0..c3: row g (+8 for c2, c3), column 2t (+1 for c1, c3);
//   A (16-bit) a0..a7:  row g (+8 for bit 1), column 2t (+1 for bit 0,
//                       +8 for bit 2);
//   B (16-bit) b0..b3:  row 2t (+1 for bit 0, +8 for bit 1), column g;
//   tf32 (32-bit, k8):  A a0..a3 row g (+8 bit 0), column t (+4 bit 1);
//                       B b0, b1 row t (+4 bit 0), column g.
// int8 (k32) words are the 16-bit ones with four K-consecutive bytes each
// (A a0..a3 row g (+8 for a1, a3), columns 4t.. (+16 for a2, a3); B b0, b1
// rows 4t.. (+16 for b1), column g): only ever read by ldmatrix from
// K-major shared memory, so no operand layout below describes them.
// Which dot gets which instruction is decided here once, for the layout plan
// and the lowering alike.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "compiler/gpu/layout.hpp"
#include "kiln/dtype.hpp"

namespace kiln::gpu {

/// The tensor-core instruction a tl.dot gets, or None for the FMA path:
/// F16, BF16 (f32 accumulators), F16F16 (f16 operands and accumulators:
/// out_dtype float16), TF32, TF32X3 (input_precision "tf32x3": three tf32
/// instructions a step, as Triton splits them), I8 (int8 operands, int32
/// accumulators, m16n8k32 / wgmma k32), F8E4M3 and F8E5M2 (fp8e4nv or
/// fp8e5 operands, f32 accumulators, m16n8k32 on sm_89+ / wgmma k32).
enum class MmaKind : uint8_t { None, F16, BF16, F16F16, TF32, TF32X3, I8, F8E4M3, F8E5M2 };

/// Whether `k` takes 8-bit operands (K-major in shared memory, 32 a step).
inline bool is_8bit(MmaKind k) {
  return k == MmaKind::I8 || k == MmaKind::F8E4M3 || k == MmaKind::F8E5M2;
}

/// Tensor cores need sm_80 or newer, operands and result as Triton pairs
/// them on NVIDIA (f16 -> f32 or f16, bf16 -> f32, f32 -> f32 with
/// input_precision "tf32" or "tf32x3" ("ieee" keeps exact FMAs), i8 -> i32,
/// fp8e4nv / fp8e5 -> f32 on sm_89 and newer),
/// and at least one instruction's tile (M >= 16, N >= 8, K >= mma_k).
MmaKind mma_kind(DType operand, DType result, const std::string &precision, int64_t M, int64_t N,
                 int64_t K, int sm);

/// Elements of K one instruction takes: 16 (f16, bf16), 8 (tf32), 32 (i8).
int mma_k(MmaKind k);
/// Bytes of one operand element: 2, 4 (tf32) or 1 (i8).
int mma_operand_bytes(MmaKind k);

/// Whether a dot of kind `k` fits sm_90's wgmma.mma_async m64nNk16 (k32
/// for i8) as it is lowered (llvm/lower_wgmma.cpp): f16 (f32 or f16
/// accumulators), bf16 or i8; all warps over M, in warpgroups of 4 taking
/// 64 rows each (M a multiple of 16 * num_warps); 16 <= N <= 256 (one
/// instruction spans N; i8: N <= 224 as Triton, so 128). Its accumulator layout is then
/// mma({num_warps, 1}): per warp, the m16n8 one, N tiles in registers.
bool wgmma_fits(MmaKind k, int64_t M, int64_t N, int64_t K, int num_warps);

/// How wgmma's warpgroups share an M x N dot: {warps over M, warps over N}.
/// All over M where M allows (wgmma_fits above); else, as Triton's
/// warpsPerCTA [4, 2] for BM = 64 with 8 warps, warpgroups of 64 rows over
/// M and the rest over N, each then issuing N / (warps over N) columns: a
/// multiple of 8 from 16 up, and for 16-bit operands of 64 (a whole
/// swizzled row of an N-major B, whose descriptor must start at one).
/// nullopt when neither fits.
std::optional<std::array<int, 2>> wgmma_split(MmaKind k, int64_t M, int64_t N, int64_t K,
                                              int num_warps);

/// How the warps split an M x N result: {over M, over N}, powers of two
/// with 16 * wm <= M and 8 * wn <= N (warps beyond that hold copies).
/// `m_first`: all warps over M first (attention's chained dots: row
/// reductions then stay inside a warp).
std::array<int, 2> mma_warps(int64_t M, int64_t N, int num_warps, bool m_first);

EncodingPtr mma(std::array<int, 2> warps, int wg_cols = 0);
/// The fragment layout of operand `index` (0: A, M x K; 1: B, K x N) of an
/// mma with accumulator `parent`, for elements of `elem_bytes` (2 or 4).
EncodingPtr dot_operand(int index, EncodingPtr parent, int elem_bytes);

/// map_of for the two kinds above.
BitMap mma_map(const Encoding &e, const Shape &shape, int num_warps);

} // namespace kiln::gpu
