#include "compiler/gpu/layout.hpp"

#include "compiler/gpu/mma_layout.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace kiln::gpu {

int dim_offset(const Shape &shape, int d) {
  int off = 0;
  for (size_t e = d + 1; e < shape.size(); ++e)
    off += log2_exact(shape[e]);
  return off;
}

std::pair<int, int> bit_owner(const Shape &shape, int b) {
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    const int nb = log2_exact(shape[d]);
    if (b < nb)
      return {d, b};
    b -= nb;
  }
  throw std::logic_error("kiln internal error: layout bit beyond its shape");
}

int64_t drop_dim_bits(int64_t index, const Shape &shape, int dim) {
  const int off = dim_offset(shape, dim), nb = log2_exact(shape[dim]);
  const int64_t low = index & ((int64_t{1} << off) - 1);
  return low | ((index >> (off + nb)) << off);
}

int run_bits(const BitMap &m, const Shape &shape, int *dim) {
  if (m.reg.empty() || m.reg[0] < 0)
    return 0;
  const auto [d, j] = bit_owner(shape, m.reg[0]);
  if (j != 0)
    return 0;
  *dim = d;
  const int nb = log2_exact(shape[d]);
  int k = 1;
  while (k < static_cast<int>(m.reg.size()) && k < nb && m.reg[k] == m.reg[0] + k)
    ++k;
  return k;
}

namespace {

int total_bits(const Shape &shape) {
  int b = 0;
  for (int64_t n : shape)
    b += log2_exact(n);
  return b;
}

/// Applies `f` to every basis (-1 stays -1); slots keep their numbering.
BitMap remap(const BitMap &m, int bits, const std::function<int(int)> &f) {
  BitMap r;
  r.bits = bits;
  auto g = [&](int b) { return b < 0 ? -1 : f(b); };
  for (int b : m.reg)
    r.reg.push_back(g(b));
  for (int i = 0; i < BitMap::kLaneBits; ++i)
    r.lane[i] = g(m.lane[i]);
  for (int b : m.warp)
    r.warp.push_back(g(b));
  return r;
}

std::string list(const std::vector<int> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

int64_t tile(const Encoding &e, int d) {
  switch (e.kind) {
  case Encoding::Kind::Blocked:
    return int64_t{e.size_per_thread[d]} * e.threads_per_warp[d] * e.warps_per_cta[d];
  case Encoding::Kind::Slice:
    return tile(*e.parent, d >= e.dim ? d + 1 : d);
  case Encoding::Kind::Linear:
    return e.linear_shape[d];
  case Encoding::Kind::Mma:
    return int64_t{d == 0 ? 16 : e.wg_cols ? e.wg_cols : 8} * e.mma_warps[d];
  case Encoding::Kind::DotOperand:
    return tile(*e.parent, d);
  }
  return 1;
}

} // namespace

int64_t BitMap::reg_offset(int64_t s) const {
  int64_t off = 0;
  for (size_t i = 0; i < reg.size(); ++i)
    if ((s >> i) & 1 && reg[i] >= 0)
      off |= int64_t{1} << reg[i];
  return off;
}

uint32_t BitMap::copy_lane_mask() const {
  uint32_t m = 0;
  for (int i = 0; i < kLaneBits; ++i)
    if (lane[i] < 0)
      m |= 1u << i;
  return m;
}

uint32_t BitMap::copy_warp_mask() const {
  uint32_t m = 0;
  for (size_t i = 0; i < warp.size(); ++i)
    if (warp[i] < 0)
      m |= 1u << i;
  return m;
}

std::string BitMap::str() const {
  return "reg=" + list(reg) + " lane=" + list(std::vector<int>(lane.begin(), lane.end())) +
         " warp=" + list(warp);
}

int Encoding::rank() const {
  switch (kind) {
  case Kind::Blocked:
    return static_cast<int>(order.size());
  case Kind::Slice:
    return parent->rank() - 1;
  case Kind::Linear:
    return static_cast<int>(linear_shape.size());
  case Kind::Mma:
  case Kind::DotOperand:
    return 2;
  }
  return 0;
}

std::string Encoding::str() const {
  switch (kind) {
  case Kind::Blocked:
    return "#blocked<spt=" + list(size_per_thread) + " tpw=" + list(threads_per_warp) +
           " wpc=" + list(warps_per_cta) + " order=" + list(order) + ">";
  case Kind::Slice:
    return "#slice<dim=" + std::to_string(dim) + " " + parent->str() + ">";
  case Kind::Linear:
    return "#linear<" + linear.str() + ">";
  case Kind::Mma:
    return "#mma<warps=" + list({mma_warps[0], mma_warps[1]}) +
           (wg_cols ? " wg_cols=" + std::to_string(wg_cols) : "") + ">";
  case Kind::DotOperand:
    return "#dot_operand<" + std::to_string(dim) + " " + parent->str() +
           " bytes=" + std::to_string(elem_bytes) + ">";
  }
  return "";
}

EncodingPtr blocked(std::vector<int> spt, std::vector<int> tpw, std::vector<int> wpc,
                    std::vector<int> order) {
  auto e = std::make_shared<Encoding>();
  e->kind = Encoding::Kind::Blocked;
  e->size_per_thread = std::move(spt);
  e->threads_per_warp = std::move(tpw);
  e->warps_per_cta = std::move(wpc);
  e->order = std::move(order);
  return e;
}

EncodingPtr slice(EncodingPtr parent, int dim) {
  auto e = std::make_shared<Encoding>();
  e->kind = Encoding::Kind::Slice;
  e->dim = dim;
  e->parent = std::move(parent);
  return e;
}

EncodingPtr linear(BitMap map, Shape shape) {
  auto e = std::make_shared<Encoding>();
  e->kind = Encoding::Kind::Linear;
  e->linear = std::move(map);
  e->linear_shape = std::move(shape);
  return e;
}

EncodingPtr default_blocked(const Shape &shape, int num_warps, int vec, std::vector<int> order) {
  const int r = static_cast<int>(shape.size());
  if (order.empty())
    for (int d = r - 1; d >= 0; --d)
      order.push_back(d);
  std::vector<int> spt(r, 1), tpw(r, 1), wpc(r, 1);
  spt[order[0]] = static_cast<int>(std::clamp<int64_t>(shape[order[0]], 1, std::max(vec, 1)));
  int lanes = 32, warps = num_warps;
  for (int d : order) {
    const int64_t room = std::max<int64_t>(shape[d] / spt[d], 1);
    tpw[d] = static_cast<int>(std::min<int64_t>(lanes, room));
    lanes /= tpw[d];
  }
  tpw[order.back()] *= lanes; // what is left holds copies
  for (int d : order) {
    const int64_t room = std::max<int64_t>(shape[d] / (int64_t{spt[d]} * tpw[d]), 1);
    wpc[d] = static_cast<int>(std::min<int64_t>(warps, room));
    warps /= wpc[d];
  }
  wpc[order.back()] *= warps;
  return blocked(spt, tpw, wpc, order);
}

EncodingPtr scan_blocked(const Shape &shape, int axis, int num_warps) {
  const int r = static_cast<int>(shape.size());
  std::vector<int> order = {axis};
  for (int d = r - 1; d >= 0; --d)
    if (d != axis)
      order.push_back(d);
  // Lanes and warps first along the axis, so each thread's run is the low bits.
  EncodingPtr b = default_blocked(shape, num_warps, 1, order);
  auto e = std::make_shared<Encoding>(*b);
  const int64_t threads = int64_t{e->threads_per_warp[axis]} * e->warps_per_cta[axis];
  e->size_per_thread[axis] = static_cast<int>(std::max<int64_t>(shape[axis] / threads, 1));
  return e;
}

BitMap map_of(const Encoding &e, const Shape &shape, int num_warps) {
  const int warp_bits = log2_exact(num_warps);
  switch (e.kind) {
  case Encoding::Kind::Linear:
    if (e.linear_shape != shape)
      throw std::logic_error("kiln internal error: a linear layout used for another shape");
    return e.linear;
  case Encoding::Kind::Slice: {
    Shape parent_shape = shape;
    parent_shape.insert(parent_shape.begin() + e.dim, tile(*e.parent, e.dim));
    if (e.parent->kind == Encoding::Kind::Linear)
      parent_shape = e.parent->linear_shape;
    return drop_dim(map_of(*e.parent, parent_shape, num_warps), parent_shape, e.dim);
  }
  case Encoding::Kind::Mma:
  case Encoding::Kind::DotOperand:
    return mma_map(e, shape, num_warps);
  case Encoding::Kind::Blocked:
    break;
  }
  BitMap m;
  m.bits = total_bits(shape);
  m.warp.assign(warp_bits, -1);
  int li = 0, wi = 0;
  std::vector<int> wrap;
  for (int d : e.order) {
    const int nb = log2_exact(shape[d]), base = dim_offset(shape, d);
    int pos = 0;
    for (int i = 0; i < log2_exact(e.size_per_thread[d]); ++i, ++pos)
      if (pos < nb)
        m.reg.push_back(base + pos);
    for (int i = 0; i < log2_exact(e.threads_per_warp[d]); ++i, ++pos)
      m.lane.at(li++) = pos < nb ? base + pos : -1;
    for (int i = 0; i < log2_exact(e.warps_per_cta[d]); ++i, ++pos) {
      if (wi >= warp_bits)
        throw std::logic_error(
            "kiln internal error: a blocked layout for more warps than the kernel has");
      m.warp[wi++] = pos < nb ? base + pos : -1;
    }
    for (; pos < nb; ++pos)
      wrap.push_back(base + pos);
  }
  if (li != BitMap::kLaneBits || wi != warp_bits)
    throw std::logic_error(
        "kiln internal error: a blocked layout that does not use 32 lanes and every warp: " +
        e.str());
  m.reg.insert(m.reg.end(), wrap.begin(), wrap.end());
  return m;
}

BitMap drop_dim(const BitMap &m, const Shape &shape, int dim) {
  const int off = dim_offset(shape, dim), nb = log2_exact(shape[dim]);
  BitMap r = remap(m, m.bits - nb, [&](int b) { return b < off ? b : b < off + nb ? -1 : b - nb; });
  return without_slot_copies(r);
}

BitMap view_through_broadcast(const BitMap &m, const Shape &result, const Shape &operand) {
  return remap(m, total_bits(operand), [&](int b) {
    const auto [d, j] = bit_owner(result, b);
    return operand[d] == 1 ? -1 : dim_offset(operand, d) + j;
  });
}

BitMap view_through_trans(const BitMap &m, const Shape &result, const std::vector<int64_t> &perm) {
  Shape operand(result.size());
  for (size_t d = 0; d < result.size(); ++d)
    operand[perm[d]] = result[d];
  return remap(m, m.bits, [&](int b) {
    const auto [d, j] = bit_owner(result, b);
    return dim_offset(operand, static_cast<int>(perm[d])) + j;
  });
}

BitMap trans_forward(const BitMap &m, const Shape &operand, const std::vector<int64_t> &perm) {
  Shape result(operand.size());
  std::vector<int> inv(operand.size());
  for (size_t d = 0; d < operand.size(); ++d) {
    result[d] = operand[perm[d]];
    inv[perm[d]] = static_cast<int>(d);
  }
  return remap(m, m.bits, [&](int b) {
    const auto [d, j] = bit_owner(operand, b);
    return dim_offset(result, inv[d]) + j;
  });
}

std::optional<std::vector<int>> slot_map(const BitMap &view, const BitMap &held) {
  if (view.bits != held.bits || view.lane != held.lane || view.warp != held.warp)
    return std::nullopt;
  std::vector<int> sm;
  for (int b : view.reg) {
    if (b < 0) {
      sm.push_back(-1);
      continue;
    }
    auto it = std::find(held.reg.begin(), held.reg.end(), b);
    if (it == held.reg.end())
      return std::nullopt;
    sm.push_back(static_cast<int>(it - held.reg.begin()));
  }
  return sm;
}

int64_t apply_slot_map(const std::vector<int> &sm, int64_t slot) {
  int64_t s = 0;
  for (size_t i = 0; i < sm.size(); ++i)
    if ((slot >> i) & 1 && sm[i] >= 0)
      s |= int64_t{1} << sm[i];
  return s;
}

BitMap without_slot_copies(const BitMap &m) {
  BitMap r = m;
  r.reg.clear();
  for (int b : m.reg)
    if (b >= 0)
      r.reg.push_back(b);
  return r;
}

} // namespace kiln::gpu
