#include "compiler/gpu/mma_layout.hpp"

#include <stdexcept>

namespace kiln::gpu {

namespace {

/// Where one bit of a dim comes from: a fragment register bit, a lane bit
/// or a warp bit.
struct Src {
  enum Kind : uint8_t { Reg, Lane, Warp } kind;
  int i;
};

/// A map from per-dim sources, low bits first: bits of a dim beyond its
/// sources wrap into more register slots (dims in `wrap_order`, each from
/// its low bits up) after the fragment's; sources beyond a dim's size hold
/// copies (lanes, warps) or are dropped (fragment registers).
BitMap build(const Shape &shape, int num_warps, int frag_regs,
             const std::array<std::vector<Src>, 2> &srcs, std::array<int, 2> wrap_order) {
  if (shape.size() != 2)
    throw std::logic_error("kiln internal error: a tensor-core layout of a block that is not 2-D");
  BitMap m;
  m.bits = log2_exact(shape[0]) + log2_exact(shape[1]);
  m.warp.assign(log2_exact(num_warps), -1);
  std::vector<int> frag(frag_regs, -1);
  std::array<std::vector<int>, 2> wrap;
  for (int d = 0; d < 2; ++d) {
    const int nb = log2_exact(shape[d]), base = dim_offset(shape, d);
    int pos = 0;
    for (const Src &s : srcs[d]) {
      const int b = pos < nb ? base + pos : -1;
      ++pos;
      if (s.kind == Src::Reg)
        frag[s.i] = b;
      else if (s.kind == Src::Lane)
        m.lane[s.i] = b;
      else if (s.i < static_cast<int>(m.warp.size()))
        m.warp[s.i] = b;
      else
        throw std::logic_error("kiln internal error: a tensor-core layout for more warps than the "
                               "kernel has");
    }
    for (; pos < nb; ++pos)
      wrap[d].push_back(base + pos);
  }
  for (int b : frag)
    if (b >= 0)
      m.reg.push_back(b);
  for (int d : wrap_order)
    m.reg.insert(m.reg.end(), wrap[d].begin(), wrap[d].end());
  return m;
}

std::vector<Src> warps(int first, int n) {
  std::vector<Src> r;
  for (int i = 0; i < n; ++i)
    r.push_back({Src::Warp, first + i});
  return r;
}

std::vector<Src> cat(std::vector<Src> a, const std::vector<Src> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

} // namespace

MmaKind mma_kind(DType operand, DType result, const std::string &precision, int64_t M, int64_t N,
                 int64_t K, int sm) {
  if (sm < 80 || M < 16 || N < 8)
    return MmaKind::None;
  MmaKind k = MmaKind::None;
  if (operand == DType::f16 && result == DType::f32)
    k = MmaKind::F16;
  else if (operand == DType::f16 && result == DType::f16)
    k = MmaKind::F16F16;
  else if (operand == DType::bf16 && result == DType::f32)
    k = MmaKind::BF16;
  else if (operand == DType::f32 && result == DType::f32 &&
           (precision.empty() || precision == "tf32"))
    k = MmaKind::TF32;
  else if (operand == DType::f32 && result == DType::f32 && precision == "tf32x3")
    k = MmaKind::TF32X3;
  else if (operand == DType::i8 && result == DType::i32)
    k = MmaKind::I8;
  else if (operand == DType::f8e4nv && result == DType::f32 && sm >= 89)
    k = MmaKind::F8E4M3;
  else if (operand == DType::f8e5 && result == DType::f32 && sm >= 89)
    k = MmaKind::F8E5M2;
  return k != MmaKind::None && K >= mma_k(k) ? k : MmaKind::None;
}

int mma_k(MmaKind k) {
  switch (k) {
  case MmaKind::TF32:
  case MmaKind::TF32X3:
    return 8;
  case MmaKind::I8:
  case MmaKind::F8E4M3:
  case MmaKind::F8E5M2:
    return 32;
  default:
    return 16;
  }
}

int mma_operand_bytes(MmaKind k) {
  return is_8bit(k) ? 1 : k == MmaKind::TF32 || k == MmaKind::TF32X3 ? 4 : 2;
}

bool wgmma_fits(MmaKind k, int64_t M, int64_t N, int64_t K, int num_warps) {
  const bool kind = k == MmaKind::F16 || k == MmaKind::BF16 || k == MmaKind::F16F16 ||
                    (k == MmaKind::I8 && N <= 224) || k == MmaKind::F8E4M3 || k == MmaKind::F8E5M2;
  return kind && num_warps % 4 == 0 && M % (16 * num_warps) == 0 && N >= 16 && N <= 256 &&
         K % mma_k(k) == 0;
}

std::optional<std::array<int, 2>> wgmma_split(MmaKind k, int64_t M, int64_t N, int64_t K,
                                              int num_warps) {
  if (wgmma_fits(k, M, N, K, num_warps))
    return std::array<int, 2>{num_warps, 1};
  if (num_warps % 4 != 0 || M % 64 != 0 || !wgmma_fits(k, M, N, K, static_cast<int>(M / 16)))
    return std::nullopt;
  const int wm = static_cast<int>(M / 16),
            wn = num_warps / wm; // wm: a multiple of 4, under num_warps
  if (wn < 2 || num_warps % wm != 0 || (wm & (wm - 1)) != 0 || N % wn != 0)
    return std::nullopt;
  const int64_t cols = N / wn;
  if (cols < 16 || cols % 8 != 0 || (!is_8bit(k) && cols % 64 != 0))
    return std::nullopt;
  return std::array<int, 2>{wm, wn};
}

std::array<int, 2> mma_warps(int64_t M, int64_t N, int num_warps, bool m_first) {
  int wm = 1, wn = 1;
  while (wm * wn < num_warps) {
    const bool m_room = 16 * wm * 2 <= M, n_room = 8 * wn * 2 <= N;
    if (m_room && (m_first || !n_room || M / (16 * wm) >= N / (8 * wn)))
      wm *= 2;
    else if (n_room)
      wn *= 2;
    else
      break; // the remaining warps hold copies
  }
  return {wm, wn};
}

EncodingPtr mma(std::array<int, 2> warps, int wg_cols) {
  auto e = std::make_shared<Encoding>();
  e->kind = Encoding::Kind::Mma;
  e->mma_warps = warps;
  e->wg_cols = wg_cols;
  return e;
}

EncodingPtr dot_operand(int index, EncodingPtr parent, int elem_bytes) {
  auto e = std::make_shared<Encoding>();
  e->kind = Encoding::Kind::DotOperand;
  e->dim = index;
  e->mma_warps = parent->mma_warps;
  e->wg_cols = parent->wg_cols;
  e->parent = std::move(parent);
  e->elem_bytes = elem_bytes;
  return e;
}

BitMap mma_map(const Encoding &e, const Shape &shape, int num_warps) {
  const int wm = log2_exact(e.mma_warps[0]), wn = log2_exact(e.mma_warps[1]);
  // Warp bits: the low ones over N, then over M; for warpgroups that split
  // N (wg_cols), over M first, so that 4 consecutive warps make one.
  const std::vector<Src> wn_bits = e.wg_cols ? warps(wm, wn) : warps(0, wn),
                         wm_bits = e.wg_cols ? warps(0, wm) : warps(wn, wm);
  const Src r0{Src::Reg, 0}, r1{Src::Reg, 1}, r2{Src::Reg, 2};
  const Src l0{Src::Lane, 0}, l1{Src::Lane, 1}, l2{Src::Lane, 2}, l3{Src::Lane, 3},
      l4{Src::Lane, 4};
  if (e.kind == Encoding::Kind::Mma && e.wg_cols) {
    // A warpgroup's columns are contiguous: its n tiles (slots) below the
    // warp bits over N. Slots stay c index | n tile << 2 | m tile << ...
    const int tiles = log2_exact(e.wg_cols / 8);
    std::vector<Src> n = {r0, l0, l1};
    for (int t = 0; t < tiles; ++t)
      n.push_back({Src::Reg, 2 + t});
    return build(shape, num_warps, 2 + tiles, {cat({l2, l3, l4, r1}, wm_bits), cat(n, wn_bits)},
                 {1, 0});
  }
  if (e.kind == Encoding::Kind::Mma) // slot = c index | n tile << 2 | m tile << ...
    return build(shape, num_warps, 2, {cat({l2, l3, l4, r1}, wm_bits), cat({r0, l0, l1}, wn_bits)},
                 {1, 0});
  const bool wide = e.elem_bytes == 4;
  if (e.dim == 0) { // A, M x K; warps over N hold copies; K steps, then M tiles
    if (wide)
      return build(shape, num_warps, 2, {cat({l2, l3, l4, r0}, wm_bits), {l0, l1, r1}}, {1, 0});
    return build(shape, num_warps, 3, {cat({l2, l3, l4, r1}, wm_bits), {r0, l0, l1, r2}}, {1, 0});
  }
  // B, K x N; warps over M hold copies; K steps, then N tiles
  if (wide)
    return build(shape, num_warps, 1, {std::vector<Src>{l0, l1, r0}, cat({l2, l3, l4}, wn_bits)},
                 {0, 1});
  return build(shape, num_warps, 2, {std::vector<Src>{r0, l0, l1, r1}, cat({l2, l3, l4}, wn_bits)},
               {0, 1});
}

} // namespace kiln::gpu
