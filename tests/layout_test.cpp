// GPU layouts as data: the bit maps of blocked and slice layouts, the views
// a consumer reads through (broadcast, transpose) and when they need no
// conversion. Pure data, no LLVM, no GPU.
#include <doctest/doctest.h>

#include "compiler/gpu/layout.hpp"
#include "compiler/gpu/mma_layout.hpp"

using namespace kiln::gpu;

namespace {
std::vector<int> lanes(const BitMap &m) {
  return {m.lane.begin(), m.lane.end()};
}
} // namespace

TEST_CASE(
    "layout: the default blocked layout of a 16x64 tile runs 4 along rows, lanes then warps") {
  EncodingPtr e = default_blocked({16, 64}, 4, 4);
  CHECK(e->str() == "#blocked<spt=[1,4] tpw=[2,16] wpc=[4,1] order=[1,0]>");
  const BitMap m = map_of(*e, {16, 64}, 4);
  // Index bits 0-5 are the column, 6-9 the row.
  CHECK(m.reg == std::vector<int>{0, 1, 9}); // a run of 4 columns, and the rows beyond one CTA's 8
  CHECK(lanes(m) == std::vector<int>{2, 3, 4, 5, 6});
  CHECK(m.warp == std::vector<int>{7, 8});
  CHECK(m.copy_lane_mask() == 0);
  CHECK(m.reg_offset(0b101) == (1 | 1 << 9));
}

TEST_CASE("layout: a reduction's slice is free to broadcast back over the reduced dim") {
  EncodingPtr e = default_blocked({16, 64}, 4, 4);
  const BitMap parent = map_of(*e, {16, 64}, 4);
  const BitMap rows = map_of(*slice(e, 1), {16}, 4);
  CHECK(rows == drop_dim(parent, {16, 64}, 1));
  CHECK(rows.reg == std::vector<int>{3});
  CHECK(lanes(rows) == std::vector<int>{-1, -1, -1, -1, 0}); // the column lanes hold copies
  CHECK(rows.warp == std::vector<int>{1, 2});
  // x[:, None] broadcast to 16x64, read in the parent's layout.
  const BitMap view = view_through_broadcast(parent, {16, 64}, {16, 1});
  auto sm = slot_map(view, rows);
  REQUIRE(sm);
  CHECK(*sm == std::vector<int>{-1, -1, 0});
  CHECK(apply_slot_map(*sm, 0b111) == 1);
  // A plain 1-D layout of the same 16 values is another layout: a conversion.
  CHECK_FALSE(slot_map(view, map_of(*default_blocked({16}, 4, 1), {16}, 4)));
}

TEST_CASE("layout: small blocks leave lanes and warps holding copies") {
  const BitMap m = map_of(*default_blocked({16}, 4, 1), {16}, 4);
  CHECK(m.reg.empty());
  CHECK(lanes(m) == std::vector<int>{0, 1, 2, 3, -1});
  CHECK(m.copy_lane_mask() == 0b10000);
  CHECK(m.copy_warp_mask() == 0b11);
}

TEST_CASE("layout: a transpose reads a permuted blocked layout in place, and the original needs a "
          "conversion") {
  EncodingPtr e = default_blocked({32, 64}, 4, 4);
  const BitMap x = map_of(*e, {32, 64}, 4);
  const EncodingPtr t = blocked({4, 1}, {16, 2}, {1, 4}, {0, 1}); // e with its dims swapped
  const BitMap xt = map_of(*t, {64, 32}, 4);
  CHECK(slot_map(view_through_trans(xt, {64, 32}, {1, 0}), x));
  CHECK(trans_forward(x, {32, 64}, {1, 0}) == xt);
  const BitMap coalesced = map_of(*default_blocked({64, 32}, 4, 4), {64, 32}, 4);
  CHECK_FALSE(slot_map(view_through_trans(coalesced, {64, 32}, {1, 0}), x));
}

TEST_CASE(
    "layout: a scan layout gives each thread one run along the axis, then lanes, then warps") {
  const BitMap m = map_of(*scan_blocked({1024}, 0, 4), {1024}, 4);
  CHECK(m.reg == std::vector<int>{0, 1, 2});
  CHECK(lanes(m) == std::vector<int>{3, 4, 5, 6, 7});
  CHECK(m.warp == std::vector<int>{8, 9});
  int dim = -1;
  CHECK(run_bits(m, {1024}, &dim) == 3);
  CHECK(dim == 0);
}

TEST_CASE("layout: a column-major load runs along dim 0") {
  const BitMap m = map_of(*default_blocked({64, 32}, 4, 4, {0, 1}), {64, 32}, 4);
  int dim = -1;
  CHECK(run_bits(m, {64, 32}, &dim) == 2);
  CHECK(dim == 0);
  CHECK(m.reg[0] == dim_offset({64, 32}, 0));
  CHECK(drop_dim_bits(0b1111100000, {64, 32}, 1) == 0b11111);
}

TEST_CASE("layout: the mma accumulator of one warp is PTX's m16n8 fragment") {
  // Index bits 0-2 are the column, 3-6 the row: c0..c3 at row g (+8), column 2t (+1).
  const BitMap m = map_of(*mma({1, 1}), {16, 8}, 1);
  CHECK(m.reg == std::vector<int>{0, 6});
  CHECK(lanes(m) == std::vector<int>{1, 2, 3, 4, 5});
  CHECK(m.warp.empty());
}

TEST_CASE("layout: mma warps tile M and N, the tile repeats in registers, N tiles first") {
  const std::array<int, 2> w = mma_warps(128, 128, 4, false);
  CHECK(w == std::array<int, 2>{2, 2});
  const BitMap m = map_of(*mma(w), {128, 128}, 4);
  CHECK(m.reg == std::vector<int>{0, 10, 4, 5, 6, 12, 13});
  CHECK(lanes(m) == std::vector<int>{1, 2, 7, 8, 9});
  CHECK(m.warp == std::vector<int>{3, 11});
  CHECK(mma_warps(128, 256, 8, false) == std::array<int, 2>{2, 4});
  CHECK(mma_warps(128, 64, 4, true) == std::array<int, 2>{4, 1});
  // Too small for every warp: the rest hold copies.
  CHECK(mma_warps(16, 16, 4, false) == std::array<int, 2>{1, 2});
  CHECK(map_of(*mma({1, 2}), {16, 16}, 4).copy_warp_mask() == 0b10);
}

TEST_CASE("layout: wgmma warpgroups that split N own contiguous columns, 4 warps over M each") {
  // BM 64 with 8 warps: a warpgroup per half of N (Triton's warpsPerCTA [4, 2]).
  CHECK(wgmma_split(MmaKind::F8E4M3, 64, 128, 128, 8) == std::array<int, 2>{4, 2});
  CHECK(wgmma_split(MmaKind::F8E4M3, 64, 64, 128, 8) == std::array<int, 2>{4, 2});
  CHECK(wgmma_split(MmaKind::F16, 64, 256, 64, 16) == std::array<int, 2>{4, 4});
  CHECK(wgmma_split(MmaKind::F16, 128, 128, 64, 8) == std::array<int, 2>{8, 1}); // all over M
  // 16-bit halves narrower than a swizzled row (64 columns), and M under a warpgroup's 64 rows.
  CHECK_FALSE(wgmma_split(MmaKind::F16, 64, 64, 64, 8));
  CHECK_FALSE(wgmma_split(MmaKind::F16, 32, 128, 64, 8));
  // 64 x 128, warps 0-1 bits over M (rows 16, 32), warp bit 2 over N (column 64);
  // a warp's 8 n tiles are slots 2-4, below it.
  const BitMap m = map_of(*mma({4, 2}, 64), {64, 128}, 8);
  CHECK(m.reg == std::vector<int>{0, 10, 3, 4, 5});
  CHECK(lanes(m) == std::vector<int>{1, 2, 7, 8, 9});
  CHECK(m.warp == std::vector<int>{11, 12, 6});
  // Operand A: the warps over N hold copies.
  const BitMap a = map_of(*dot_operand(0, mma({4, 2}, 64), 2), {64, 32}, 8);
  CHECK(a.warp == std::vector<int>{9, 10, -1});
}

TEST_CASE("layout: a row reduction of the mma layout, broadcast back, needs no conversion") {
  const EncodingPtr e = mma({4, 1});
  const BitMap parent = map_of(*e, {128, 64}, 4);
  const BitMap rows = map_of(*slice(e, 1), {128}, 4);
  CHECK(rows == drop_dim(parent, {128, 64}, 1));
  CHECK(slot_map(view_through_broadcast(parent, {128, 64}, {128, 1}), rows));
}

TEST_CASE("layout: dot operand fragments, with warps only over M the accumulator is operand A") {
  // A (16-bit): a0..a7 at row g (+8 bit 1), column 2t (+1 bit 0, +8 bit 2).
  const BitMap a = map_of(*dot_operand(0, mma({1, 1}), 2), {16, 16}, 1);
  CHECK(a.reg == std::vector<int>{0, 7, 3});
  CHECK(lanes(a) == std::vector<int>{1, 2, 4, 5, 6});
  // B (16-bit, K x N): b0..b3 at row 2t (+1 bit 0, +8 bit 1), column g.
  const BitMap b = map_of(*dot_operand(1, mma({1, 1}), 2), {16, 8}, 1);
  CHECK(b.reg == std::vector<int>{3, 6});
  CHECK(lanes(b) == std::vector<int>{4, 5, 0, 1, 2});
  // tf32 A: a0..a3 at row g (+8 bit 0), column t (+4 bit 1).
  const BitMap t = map_of(*dot_operand(0, mma({1, 1}), 4), {16, 8}, 1);
  CHECK(t.reg == std::vector<int>{6, 2});
  // Attention's p = softmax(q k^T) feeds the next dot from registers.
  const EncodingPtr acc = mma({4, 1});
  CHECK(slot_map(map_of(*dot_operand(0, acc, 2), {128, 64}, 4), map_of(*acc, {128, 64}, 4)));
  // Warps over N hold copies of A.
  CHECK(map_of(*dot_operand(0, mma({2, 2}), 2), {128, 32}, 4).warp == std::vector<int>{-1, 9});
}

TEST_CASE("layout: which tensor-core dots fit sm_90's wgmma") {
  CHECK(wgmma_fits(MmaKind::F16, 128, 128, 32, 4));
  CHECK(wgmma_fits(MmaKind::BF16, 128, 256, 64, 8));
  CHECK(wgmma_fits(MmaKind::F16, 64, 16, 16, 4));
  CHECK(wgmma_fits(MmaKind::F16F16, 128, 128, 32, 4));
  CHECK(wgmma_fits(MmaKind::I8, 128, 128, 64, 4));
  CHECK_FALSE(wgmma_fits(MmaKind::I8, 128, 256, 64, 4));   // int8: N <= 224, as Triton
  CHECK_FALSE(wgmma_fits(MmaKind::TF32, 128, 128, 32, 4)); // f16, bf16 and int8 only
  CHECK_FALSE(wgmma_fits(MmaKind::TF32X3, 128, 128, 32, 4));
  CHECK_FALSE(wgmma_fits(MmaKind::F16, 64, 64, 32, 8));    // 8 warps need 128 rows
  CHECK_FALSE(wgmma_fits(MmaKind::F16, 64, 64, 32, 2));    // not a warpgroup
  CHECK_FALSE(wgmma_fits(MmaKind::F16, 64, 512, 32, 4));   // one instruction spans N
  CHECK_FALSE(wgmma_fits(MmaKind::F16, 64, 8, 32, 4));
  // Its accumulator: per warp the m16n8 one, warp w at rows 16w, N tiles then M tiles in registers.
  const BitMap m = map_of(*mma({4, 1}), {128, 64}, 4);
  CHECK(m.reg == std::vector<int>{0, 9, 3, 4, 5, 12});
  CHECK(m.warp == std::vector<int>{10, 11});
}

TEST_CASE("layout: which dots run on tensor cores") {
  CHECK(mma_kind(kiln::DType::f16, kiln::DType::f32, "tf32", 128, 128, 32, 90) == MmaKind::F16);
  CHECK(mma_kind(kiln::DType::bf16, kiln::DType::f32, "tf32", 16, 16, 16, 80) == MmaKind::BF16);
  CHECK(mma_kind(kiln::DType::f32, kiln::DType::f32, "tf32", 64, 64, 16, 90) == MmaKind::TF32);
  CHECK(mma_kind(kiln::DType::f32, kiln::DType::f32, "ieee", 64, 64, 16, 90) == MmaKind::None);
  CHECK(mma_kind(kiln::DType::f32, kiln::DType::f32, "tf32x3", 64, 64, 16, 80) == MmaKind::TF32X3);
  CHECK(mma_kind(kiln::DType::f16, kiln::DType::f16, "tf32", 64, 64, 16, 90) == MmaKind::F16F16);
  CHECK(mma_kind(kiln::DType::f16, kiln::DType::f32, "tf32", 8, 64, 16, 90) == MmaKind::None);
  CHECK(mma_kind(kiln::DType::f16, kiln::DType::f32, "tf32", 64, 64, 16, 75) == MmaKind::None);
  CHECK(mma_kind(kiln::DType::i8, kiln::DType::i32, "tf32", 64, 64, 32, 80) == MmaKind::I8);
  CHECK(mma_kind(kiln::DType::i8, kiln::DType::i32, "tf32", 64, 64, 16, 90) == MmaKind::None);
  CHECK(mma_kind(kiln::DType::u8, kiln::DType::i32, "tf32", 64, 64, 32, 90) == MmaKind::None);
}
