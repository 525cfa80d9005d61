#include "compiler/analysis/axis_info.hpp"

#include <algorithm>
#include <numeric>

#include "kiln/dtype.hpp"

namespace kiln::analysis {
namespace {

constexpr int64_t kBig = int64_t{1} << 30;

int64_t cap(int64_t v) {
  return std::min(v, kBig);
}

/// An integer constant 1, or a block of them, also widened or narrowed
/// (descriptors compute their addresses in i64: `offs * (i64)1`).
bool is_one(const ir::Value *v) {
  while (v->def && (v->def->kind == ir::OpKind::Splat || v->def->kind == ir::OpKind::Broadcast ||
                    v->def->kind == ir::OpKind::ExpandDims ||
                    (v->def->kind == ir::OpKind::Cast && v->type.is_int() &&
                     v->def->operands[0]->type.is_int())))
    v = v->def->operands[0];
  return v->def && v->def->kind == ir::OpKind::Constant && v->type.is_int() && v->def->i == 1;
}

} // namespace

int64_t AxisInfoAnalysis::pow2_divisor(int64_t v) {
  if (v == 0)
    return kBig;
  int64_t d = 1;
  while ((v & d) == 0 && d < kBig)
    d <<= 1;
  return d;
}

AxisInfoAnalysis::AxisInfoAnalysis(const ir::Program &p) {
  for (const auto &f : p.functions)
    find_loops(f->body);
}

void AxisInfoAnalysis::find_loops(const ir::Block &b) {
  for (const ir::Op *op : b.ops) {
    if (op->kind == ir::OpKind::For) {
      induction_[op->regions[0]->args[0]] = op;
      for (size_t i = 1; i < op->regions[0]->args.size(); ++i)
        carried_[op->regions[0]->args[i]] = {op, i - 1};
    }
    for (const ir::Block *r : op->regions)
      find_loops(*r);
  }
}

void AxisInfoAnalysis::forget(const ir::Block &b) {
  for (const ir::Value *a : b.args)
    memo_.erase(a);
  for (const ir::Op *op : b.ops) {
    for (const ir::Value *r : op->results)
      memo_.erase(r);
    solved_.erase(op); // an inner loop solved from the outer loop's guess
    for (const ir::Block *r : op->regions)
      forget(*r);
  }
}

AxisInfo AxisInfoAnalysis::carried(const ir::Op &loop, size_t i) {
  if (auto it = solved_.find(&loop); it != solved_.end())
    return it->second[i];
  const ir::Block &body = *loop.regions[0];
  if (solving_[&loop]) // reached again from its own body before a guess was set: no facts
    return AxisInfo{};
  auto meet = [](const AxisInfo &x, const AxisInfo &y) {
    AxisInfo m;
    for (size_t d = 0; d < m.contig.size(); ++d) {
      m.contig[d] = std::gcd(x.contig[d], y.contig[d]);
      m.div[d] = std::gcd(x.div[d], y.div[d]);
      m.constancy[d] = std::gcd(x.constancy[d], y.constancy[d]);
    }
    return m;
  };
  auto same = [](const AxisInfo &x, const AxisInfo &y) {
    return x.contig == y.contig && x.div == y.div && x.constancy == y.constancy;
  };
  const size_t n = body.args.size() - 1;
  solving_[&loop] = true;
  std::vector<AxisInfo> cur(n);
  for (size_t k = 0; k < n; ++k)
    cur[k] = get(loop.operands[3 + k]);
  // Every carried value gets its guess before the body is read (the body
  // may compute one from another); each round can only lose facts, and
  // what the body computed from a guess that did not hold is forgotten.
  bool settled = false;
  for (int round = 0; round < 4 && !settled; ++round) {
    // A hint on a carried value (tutorial 08's `tl.multiple_of(b_ptrs,
    // [16, 16])` in the loop) holds in every iteration.
    for (size_t k = 0; k < n; ++k)
      memo_[body.args[1 + k]] = with_hints(body.args[1 + k], cur[k]);
    std::vector<AxisInfo> next(n);
    settled = true;
    for (size_t k = 0; k < n; ++k) {
      next[k] = meet(cur[k], get(body.ops.back()->operands[k]));
      settled &= same(next[k], cur[k]);
    }
    if (!settled) {
      forget(body);
      cur = std::move(next);
    }
  }
  if (!settled) {
    forget(body);
    cur.assign(n, AxisInfo{});
    for (size_t k = 0; k < n; ++k)
      memo_[body.args[1 + k]] = with_hints(body.args[1 + k], cur[k]);
  }
  solving_.erase(&loop);
  return (solved_[&loop] = std::move(cur))[i];
}

AxisInfo AxisInfoAnalysis::with_hints(const ir::Value *v, AxisInfo a) {
  // The kernel's hints (Triton's multiple_of / max_contiguous /
  // max_constancy), where they say more than the analysis found: `% N` of
  // an arange loses the runs that a real kernel then restores this way.
  for (int d = 0; d < ir::Type::kMaxRank; ++d) {
    a.div[d] = std::max<int64_t>(a.div[d], v->facts.multiple_of[d]);
    a.contig[d] = std::max<int64_t>(a.contig[d], v->facts.max_contiguous[d]);
    a.constancy[d] = std::max<int64_t>(a.constancy[d], v->facts.max_constancy[d]);
  }
  return a;
}

const AxisInfo &AxisInfoAnalysis::get(const ir::Value *v) {
  if (auto it = memo_.find(v); it != memo_.end())
    return it->second;
  return memo_[v] = with_hints(v, compute(v)); // unordered_map keeps references stable
}

AxisInfo AxisInfoAnalysis::compute(const ir::Value *v) {
  using ir::BinaryOp;
  using ir::OpKind;
  AxisInfo a;
  const int rank = std::max<int>(v->type.rank, 1);
  auto extent = [&](int d) { return v->type.rank ? v->type.shape[d] : int64_t{1}; };
  if (!v->def) {
    if (auto it = induction_.find(v); it != induction_.end()) {
      // lower + k * step
      a.div[0] = std::gcd(get(it->second->operands[0]).div[0], get(it->second->operands[2]).div[0]);
      return a;
    }
    if (auto it = carried_.find(v); it != carried_.end())
      return carried(*it->second.first, it->second.second);
    // A parameter: D is 16 (bytes for pointers, the value for integers).
    a.div.fill(v->facts.divisible16 ? 16 : 1);
    return a;
  }
  const ir::Op &op = *v->def;
  if (op.kind == OpKind::For) // a loop's result: what it carried
    for (size_t i = 0; i < op.results.size(); ++i)
      if (op.results[i] == v)
        return carried(op, i);
  auto in = [&](size_t i) { return get(op.operands[i]); };
  const int64_t elem = v->type.pointer ? static_cast<int64_t>(dtype_size(v->type.elem)) : 1;
  // Dim d as the operand's dim sd (shape ops move dims around).
  auto take = [&](int d, size_t sd) {
    const AxisInfo s = in(0);
    a.contig[d] = s.contig[sd];
    a.div[d] = s.div[sd];
    a.constancy[d] = s.constancy[sd];
  };
  for (int d = 0; d < rank; ++d) {
    const int64_t n = extent(d);
    switch (op.kind) {
    case OpKind::Constant:
      a.div[d] = v->type.is_float() ? 1 : pow2_divisor(op.i);
      a.constancy[d] = n;
      break;
    case OpKind::Splat:
      a.div[d] = in(0).div[0];
      a.constancy[d] = n;
      break;
    case OpKind::Arange:
      a.contig[d] = n;
      a.div[d] = pow2_divisor(op.i);
      break;
    case OpKind::Binary: {
      const AxisInfo x = in(0), y = in(1);
      const auto b = static_cast<BinaryOp>(op.sub);
      a.constancy[d] = std::gcd(x.constancy[d], y.constancy[d]);
      if (b == BinaryOp::Add || b == BinaryOp::Sub) {
        a.contig[d] =
            std::max(std::gcd(x.contig[d], y.constancy[d]), std::gcd(y.contig[d], x.constancy[d]));
        a.div[d] = std::gcd(x.div[d], y.div[d]);
      } else if (b == BinaryOp::Mul) {
        a.div[d] = cap(x.div[d] * y.div[d]);
        // `offs * stride` with a stride specialized to 1 keeps offs' runs.
        if (is_one(op.operands[1]))
          a.contig[d] = x.contig[d];
        else if (is_one(op.operands[0]))
          a.contig[d] = y.contig[d];
      } else if ((b == BinaryOp::Rem || b == BinaryOp::IDiv) && v->type.is_int() &&
                 y.constancy[d] >= n) {
        // By a value uniform along d (`% N`, `// N`): a run of x that starts
        // at a multiple of g = gcd(run, x's and N's divisors) never crosses a
        // multiple of N inside g elements, so `% N` keeps runs of g
        // (tutorial 03's `(pid * BLOCK + arange) % N` with N specialized D)
        // and `// N` is constant over them.
        const int64_t g = std::gcd(x.contig[d], std::gcd(x.div[d], y.div[d]));
        if (b == BinaryOp::Rem) {
          a.contig[d] = g;
          a.div[d] = std::gcd(x.div[d], y.div[d]);
        } else {
          a.constancy[d] = std::max(a.constancy[d], g);
        }
      }
      break;
    }
    case OpKind::AddPtr: {
      const AxisInfo p = in(0), o = in(1);
      a.contig[d] =
          std::max(std::gcd(p.contig[d], o.constancy[d]), std::gcd(o.contig[d], p.constancy[d]));
      a.div[d] = std::gcd(p.div[d], cap(o.div[d] * elem));
      a.constancy[d] = std::gcd(p.constancy[d], o.constancy[d]);
      break;
    }
    case OpKind::Compare: {
      // `offs < n`: equal across a run of offs that no multiple of n's divisor splits.
      const AxisInfo x = in(0), y = in(1);
      a.constancy[d] = std::gcd(x.constancy[d], y.constancy[d]);
      if (y.constancy[d] >= n && x.contig[d] > 1)
        a.constancy[d] =
            std::max(a.constancy[d], std::gcd(x.contig[d], std::gcd(x.div[d], y.div[d])));
      if (x.constancy[d] >= n && y.contig[d] > 1)
        a.constancy[d] =
            std::max(a.constancy[d], std::gcd(y.contig[d], std::gcd(x.div[d], y.div[d])));
      break;
    }
    case OpKind::Select: {
      const AxisInfo c = in(0), x = in(1), y = in(2);
      a.constancy[d] = std::gcd(c.constancy[d], std::gcd(x.constancy[d], y.constancy[d]));
      break;
    }
    case OpKind::Cast:
      // Integer widening and narrowing of offsets keeps their runs.
      if (v->type.is_int() && op.operands[0]->type.is_int())
        a = in(0);
      break;
    case OpKind::Bitcast:
      // A pointer recast to another element type (`p.to(tl.pointer_type(t))`)
      // is the same address: its divisibility in bytes and its constant
      // runs carry over, its runs of consecutive elements only at one size.
      if (v->type.pointer && op.operands[0]->type.pointer) {
        const AxisInfo s = in(0);
        a.div[d] = s.div[d];
        a.constancy[d] = s.constancy[d];
        if (dtype_size(op.operands[0]->type.elem) == dtype_size(v->type.elem))
          a.contig[d] = s.contig[d];
      }
      break;
    case OpKind::Broadcast: {
      const AxisInfo s = in(0);
      if (op.operands[0]->type.shape[d] == 1 && n > 1) {
        a.div[d] = s.div[d];
        a.constancy[d] = n;
      } else {
        take(d, d);
      }
      break;
    }
    case OpKind::ExpandDims: {
      const AxisInfo s = in(0);
      if (d == op.axis) {
        // Each element is a run of the new dim: what all of them share, and
        // a run of consecutive values along a source dim shares 1.
        const ir::Type &src = op.operands[0]->type;
        a.div[d] = src.rank ? int64_t{1} << 30 : s.div[0];
        for (int k = 0; k < src.rank; ++k)
          a.div[d] = std::gcd(a.div[d], s.contig[k] > 1 ? int64_t{1} : s.div[k]);
      } else {
        take(d, d > op.axis ? d - 1 : d);
      }
      break;
    }
    case OpKind::Trans:
      take(d, static_cast<size_t>(op.ints[d]));
      break;
    default:
      break;
    }
  }
  return a;
}

} // namespace kiln::analysis
