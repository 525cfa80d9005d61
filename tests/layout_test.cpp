// GPU layouts as data: the bit maps of blocked and slice layouts, the views
// a consumer reads through (broadcast, transpose) and when they need no
// conversion. Pure data, no LLVM, no GPU.
#include <doctest/doctest.h>

#include "compiler/gpu/layout.hpp"

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
