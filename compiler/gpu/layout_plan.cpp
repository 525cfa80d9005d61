#include "compiler/gpu/layout_plan.hpp"

#include <algorithm>
#include <functional>

#include "compiler/gpu/mma_layout.hpp"
#include "kiln/dtype.hpp"

namespace kiln::gpu {

using ir::OpKind;

Shape shape_of(const ir::Type &t) {
  return Shape(t.shape.begin(), t.shape.begin() + t.rank);
}

namespace {
int count_dots(const ir::Block &b) {
  int n = 0;
  for (const ir::Op *op : b.ops) {
    n += op->kind == ir::OpKind::Dot;
    for (const ir::Block *r : op->regions)
      n += count_dots(*r);
  }
  return n;
}
} // namespace

LayoutPlan::LayoutPlan(const ir::Program &p, int num_warps, int sm, bool wgmma)
    : warps_(num_warps), sm_(sm), wgmma_(wgmma), axis_(p) {
  for (const auto &f : p.functions)
    dots_ += count_dots(f->body);
  std::function<void(const ir::Block &)> count = [&](const ir::Block &blk) {
    for (const ir::Op *o : blk.ops) {
      for (const ir::Value *v : o->operands)
        users_[v].push_back(o);
      for (const ir::Block *r : o->regions)
        count(*r);
    }
  };
  for (const auto &f : p.functions) {
    count(f->body);
    find_fragment_loads(f->body);
  }
  // Loop-carried layouts feed back into the values they are computed from:
  // iterate until they stop changing (each round can only fill in more).
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    memo_.clear();
    for (const auto &f : p.functions)
      settle(f->body, changed);
    if (!changed)
      break;
  }
}

void LayoutPlan::carry(const ir::Value *v, const EncodingPtr &e, bool &changed) {
  if (!e || !v->type.is_block())
    return;
  EncodingPtr &slot = carried_[v];
  if (!slot || slot->str() != e->str()) {
    slot = e;
    changed = true;
  }
}

void LayoutPlan::settle(const ir::Block &b, bool &changed) {
  for (const ir::Op *op : b.ops) {
    for (const ir::Block *r : op->regions)
      settle(*r, changed);
    auto pick = [&](const ir::Value *yielded, const ir::Value *init) {
      EncodingPtr e = natural(yielded);
      return e ? e : init ? natural(init) : nullptr;
    };
    if (op->kind == OpKind::For) {
      const ir::Block &body = *op->regions[0];
      const ir::Op &yield = *body.ops.back();
      for (size_t i = 0; i < op->results.size(); ++i) {
        EncodingPtr e = pick(yield.operands[i], op->operands[3 + i]);
        // Carried pointers (a_ptrs += BK) in the layout their loads will ask for.
        if (!e && body.args[1 + i]->type.is_block() && body.args[1 + i]->type.pointer) {
          // (fp8_gemm's `a_s_ptrs += 1`: in the slice layout its load takes)
          for (const ir::Op *l : users_[body.args[1 + i]])
            if (!e && l->kind == OpKind::Load && l->operands[0] == body.args[1 + i])
              e = accumulator_slice(l->result());
          if (!e)
            e = access_layout(body.args[1 + i]);
        }
        carry(body.args[1 + i], e, changed);
        carry(op->results[i], e, changed);
      }
    } else if (op->kind == OpKind::While) {
      const ir::Block &before = *op->regions[0], &after = *op->regions[1];
      const ir::Op &yield = *after.ops.back();
      for (size_t i = 0; i < op->results.size(); ++i) {
        EncodingPtr e = pick(yield.operands[i], op->operands[i]);
        carry(before.args[i], e, changed);
        carry(after.args[i], e, changed);
        carry(op->results[i], e, changed);
      }
    } else if (op->kind == OpKind::If) {
      for (size_t i = 0; i < op->results.size(); ++i) {
        EncodingPtr e =
            pick(op->regions[0]->ops.back()->operands[i], op->regions[1]->ops.back()->operands[i]);
        carry(op->results[i], e, changed);
      }
    }
  }
}

EncodingPtr LayoutPlan::natural(const ir::Value *v) {
  if (!v->type.is_block())
    return nullptr;
  if (auto it = memo_.find(v); it != memo_.end())
    return it->second;
  EncodingPtr e = compute(v);
  memo_[v] = e;
  return e;
}

EncodingPtr LayoutPlan::layout(const ir::Value *v) {
  EncodingPtr e = natural(v);
  return e ? e : default_layout(v->type);
}

EncodingPtr LayoutPlan::default_layout(const ir::Type &t) const {
  const int64_t per_thread = t.numel() / (32 * warps_);
  return default_blocked(shape_of(t), warps_,
                         static_cast<int>(std::clamp<int64_t>(per_thread, 1, 4)));
}

void LayoutPlan::find_fragment_loads(const ir::Block &b) {
  for (const ir::Op *op : b.ops) {
    for (const ir::Block *r : op->regions)
      find_fragment_loads(*r);
    if (op->kind != OpKind::For)
      continue;
    // Dots at the top of this loop's body whose A is a load from before the loop.
    const std::vector<ir::Op *> &body = op->regions[0]->ops;
    for (const ir::Op *d : body) {
      if (d->kind != OpKind::Dot)
        continue;
      const ir::Value *a = d->operands[0];
      EncodingPtr e = dot_layout(*d);
      for (int k = 0; k < 2 && e->kind == Encoding::Kind::Mma; ++k) {
        const ir::Op *l = d->operands[k]->def;
        if (l && l->kind == OpKind::Load && only_user(d->operands[k]) &&
            std::find(body.begin(), body.end(), l) != body.end())
          dot_ptrs_.insert(l->operands[0]);
      }
      if (e->kind != Encoding::Kind::Mma || !a->def || a->def->kind != OpKind::Load ||
          dtype_size(a->type.elem) != 2 ||
          std::find(b.ops.begin(), b.ops.end(), a->def) == b.ops.end())
        continue;
      // Every use the A operand of a tensor-core dot wanting the same
      // fragments: causal attention reads q in two loops (the diagonal
      // blocks and the rest), and a q staged through shared memory would be
      // stored again every iteration of both.
      const EncodingPtr want = dot_operand(0, e, 2);
      bool fragments = true;
      for (const ir::Op *u : users_[a]) {
        const EncodingPtr ue = u->kind == OpKind::Dot ? dot_layout(*u) : nullptr;
        fragments &= ue && ue->kind == Encoding::Kind::Mma && u->operands[0] == a &&
                     u->operands[1] != a && dot_operand(0, ue, 2)->str() == want->str();
      }
      if (fragments)
        fragment_loads_[a] = want;
    }
  }
}

MmaKind LayoutPlan::mma_kind(const ir::Op &op) const {
  const ir::Type &a = op.operands[0]->type, &r = op.result()->type;
  if (a.rank != 2)
    return MmaKind::None; // batched (3-D) dots run as FMAs
  return gpu::mma_kind(a.elem, r.elem, op.str, a.shape[0], r.shape[1], a.shape[1], sm_);
}

bool LayoutPlan::wgmma(const ir::Op &op) const {
  const ir::Type &a = op.operands[0]->type, &r = op.result()->type;
  if (a.rank != 2)
    return false;
  const int64_t M = a.shape[0], K = a.shape[1], N = r.shape[1];
  return wgmma_ && gpu::wgmma_split(mma_kind(op), M, N, K, warps_).has_value();
}

EncodingPtr LayoutPlan::dot_layout(const ir::Op &op) const {
  const ir::Type &a = op.operands[0]->type, &r = op.result()->type;
  const int64_t M = a.shape[0], N = r.shape[1];
  if (mma_kind(op) == MmaKind::None)
    return default_layout(r);
  // A warpgroup's accumulator is the mma one with its 4 warps over M;
  // warpgroups beyond M's 64-row tiles take contiguous columns.
  if (wgmma(op)) {
    const std::array<int, 2> w = *gpu::wgmma_split(mma_kind(op), M, N, a.shape[1], warps_);
    return w[1] == 1 ? mma(w) : mma(w, static_cast<int>(N / w[1]));
  }
  // Chained dots (attention) keep rows within a warp so that the row
  // reductions between them need no shared memory.
  return mma(mma_warps(M, N, warps_, dots_ > 1 && M >= 16 * warps_));
}

EncodingPtr LayoutPlan::access_layout(const ir::Value *ptr) {
  if (EncodingPtr e = natural(ptr))
    return e; // the addresses come from data some layout already holds
  const analysis::AxisInfo &a = axis_.get(ptr);
  const int rank = ptr->type.rank;
  int fast = rank - 1;
  for (int d = rank - 1; d >= 0; --d)
    if (a.contig[d] > a.contig[fast])
      fast = d;
  std::vector<int> order = {fast};
  for (int d = rank - 1; d >= 0; --d)
    if (d != fast)
      order.push_back(d);
  const int64_t bytes = std::max<int64_t>(static_cast<int64_t>(dtype_size(ptr->type.elem)), 1);
  // A thread's run is one vector access, so it is only as long as the
  // alignment allows: a run of scalar accesses would leave gaps in each
  // warp's access that stores pay for in L2 (partial sectors written
  // several times) and loads in L1 wavefronts; one element per thread keeps
  // every warp access contiguous.
  const int64_t aligned = dot_ptrs_.count(ptr) ? 16 / bytes : a.div[fast] / bytes;
  int64_t vec =
      std::max<int64_t>(std::min({a.contig[fast], 16 / bytes, std::max<int64_t>(aligned, 1)}), 1);
  vec = std::min<int64_t>(vec, std::max<int64_t>(ptr->type.numel() / (32 * warps_), 1));
  while (vec & (vec - 1))
    vec &= vec - 1;
  return default_blocked(shape_of(ptr->type), warps_, static_cast<int>(vec), order);
}

const ir::Op *LayoutPlan::only_user(const ir::Value *v) const {
  auto it = users_.find(v);
  return it == users_.end() || it->second.size() != 1 ? nullptr : it->second[0];
}

/// A 1-D load read only as `x[:, None]` / `x[None, :]` beside a tensor-core
/// accumulator (DeepSeek-V3's fp8_gemm scales per row and per column, a
/// bias in a matmul's epilogue) is loaded in the accumulator's slice
/// layout, as Triton's layout propagation does: each thread reads the rows
/// or columns it holds (neighbours' loads share a sector), where a blocked
/// load needs a conversion through shared memory, two barriers, each time.
EncodingPtr LayoutPlan::accumulator_slice(const ir::Value *load) {
  const ir::Op *x = only_user(load);
  if (load->type.rank != 1 || !x || x->kind != OpKind::ExpandDims || asking_.count(load))
    return nullptr;
  const ir::Value *e = x->result();
  const ir::Op *u = only_user(e);
  while (u && u->kind == OpKind::Broadcast) {
    e = u->result();
    u = only_user(e);
  }
  if (!u || (u->kind != OpKind::Binary && u->kind != OpKind::Fma) ||
      !u->result()->type.same_shape(e->type))
    return nullptr;
  asking_.insert(load);
  EncodingPtr acc;
  for (const ir::Value *o : u->operands)
    if (o != e && !acc)
      if (EncodingPtr l = natural(o); l && l->kind == Encoding::Kind::Mma)
        acc = l;
  asking_.erase(load);
  return acc ? slice(acc, x->axis) : nullptr;
}

EncodingPtr LayoutPlan::compute(const ir::Value *v) {
  if (!v->def) {
    auto it = carried_.find(v);
    return it == carried_.end() ? nullptr : it->second;
  }
  const ir::Op &op = *v->def;
  switch (op.kind) {
  case OpKind::Constant:
  case OpKind::Splat:
  case OpKind::Arange:
    return nullptr;
  case OpKind::Load:
    if (auto it = fragment_loads_.find(v); it != fragment_loads_.end())
      return it->second;
    if (EncodingPtr e = accumulator_slice(v))
      return e;
    [[fallthrough]];
  case OpKind::AtomicRMW:
  case OpKind::AtomicCAS:
    return access_layout(op.operands[0]);
  case OpKind::Reduce:
    return slice(layout(op.operands[0]), op.axis);
  case OpKind::Scan:
    return scan_blocked(shape_of(v->type), op.axis, warps_);
  case OpKind::Dot:
    return dot_layout(op);
  case OpKind::Gather:
    return layout(op.operands[1]); // read from shared memory in the index's layout
  case OpKind::For:
  case OpKind::While:
  case OpKind::If: {
    auto it = carried_.find(v);
    return it == carried_.end() ? nullptr : it->second;
  }
  case OpKind::Call:
    return nullptr;
  default:
    break;
  }
  // Elementwise and shape ops: the first operand that has a layout.
  const ir::Value *from = nullptr;
  EncodingPtr e;
  for (const ir::Value *o : op.operands)
    if ((e = natural(o))) {
      from = o;
      break;
    }
  if (!e)
    return nullptr;
  switch (op.kind) {
  case OpKind::Broadcast:
    if (e->kind == Encoding::Kind::Linear)
      return nullptr;
    return e;
  case OpKind::ExpandDims: {
    if (e->kind == Encoding::Kind::Slice && e->dim == op.axis)
      return e->parent;
    if (e->kind == Encoding::Kind::Blocked) {
      auto ins = [&](std::vector<int> x) {
        x.insert(x.begin() + op.axis, 1);
        return x;
      };
      std::vector<int> order;
      for (int d : e->order)
        order.push_back(d >= op.axis ? d + 1 : d);
      order.push_back(op.axis);
      return blocked(ins(e->size_per_thread), ins(e->threads_per_warp), ins(e->warps_per_cta),
                     order);
    }
    return linear(map(e, from->type), shape_of(v->type)); // a dim of 1 adds no index bits
  }
  case OpKind::Reshape:
    return linear(map(e, from->type), shape_of(v->type)); // same row-major index
  case OpKind::Trans: {
    if (e->kind == Encoding::Kind::Blocked) {
      auto perm = [&](const std::vector<int> &x) {
        std::vector<int> r;
        for (int64_t p : op.ints)
          r.push_back(x[p]);
        return r;
      };
      std::vector<int> inv(op.ints.size()), order;
      for (size_t d = 0; d < op.ints.size(); ++d)
        inv[op.ints[d]] = static_cast<int>(d);
      for (int d : e->order)
        order.push_back(inv[d]);
      return blocked(perm(e->size_per_thread), perm(e->threads_per_warp), perm(e->warps_per_cta),
                     order);
    }
    return linear(trans_forward(map(e, from->type), shape_of(from->type), op.ints),
                  shape_of(v->type));
  }
  default:
    return from->type.same_shape(v->type) ? e : nullptr;
  }
}

} // namespace kiln::gpu
