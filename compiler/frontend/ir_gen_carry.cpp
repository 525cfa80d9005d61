// Loop-carried variables: which values a runtime loop carries for each
// variable it assigns, and their rebinding inside and after the loop.
// Tuples (and block pointers, which are tuples) are carried as their
// tensor leaves, so `ptrs = tl.advance(ptrs, (0, BLOCK_K))` in a loop works.
#include "compiler/frontend/ir_gen_impl.hpp"

namespace kiln::frontend {

namespace {

void tensor_leaves(const Val &v, std::vector<ir::Value *> &out) {
  if (v.is_tensor())
    out.push_back(v.v);
  else if (v.kind == Val::Kind::Tuple)
    for (const Val &e : v.elems)
      tensor_leaves(e, out);
}

/// `shape` with its tensor leaves replaced, in order, by vals[pos...].
Val with_leaves(const Val &shape, const std::vector<ir::Value *> &vals, size_t &pos) {
  if (shape.is_tensor())
    return Val::tensor(vals.at(pos++));
  if (shape.kind != Val::Kind::Tuple)
    return shape;
  Val r = shape;
  for (Val &e : r.elems)
    e = with_leaves(e, vals, pos);
  return r;
}

/// Whether `a` and `b` are tuples of the same structure and constants.
bool same_structure(const Val &a, const Val &b) {
  if (a.kind != b.kind)
    return a.is_tensor() == b.is_tensor() && a.is_tensor();
  if (a.kind != Val::Kind::Tuple)
    return a.is_tensor() || a.same_as(b);
  if (a.elems.size() != b.elems.size() || a.name != b.name)
    return false;
  for (size_t i = 0; i < a.elems.size(); ++i)
    if (!same_structure(a.elems[i], b.elems[i]))
      return false;
  return true;
}

} // namespace

IrGen::CarriedVars IrGen::collect_carried(const std::vector<std::string> &names,
                                          const std::string &skip) {
  CarriedVars c;
  for (const std::string &name : names) {
    if (name == skip)
      continue;
    const Val &v = frame_->scope[name];
    std::vector<ir::Value *> leaves;
    if (v.kind == Val::Kind::Tuple) {
      tensor_leaves(v, leaves);
      if (leaves.empty())
        continue;
    } else if (v.is_tensor() || (v.is_const() && v.c.is_number())) {
      leaves.push_back(to_tensor(v, name.c_str()));
    } else {
      continue;
    }
    c.names.push_back(name);
    c.entry.push_back(v.kind == Val::Kind::Tuple ? v : Val::tensor(leaves[0]));
    c.first.push_back(c.inits.size());
    c.inits.insert(c.inits.end(), leaves.begin(), leaves.end());
  }
  return c;
}

void IrGen::bind_carried(const CarriedVars &c, const std::vector<ir::Value *> &vals) {
  for (size_t i = 0; i < c.names.size(); ++i) {
    size_t pos = c.first[i];
    frame_->scope[c.names[i]] = with_leaves(c.entry[i], vals, pos);
  }
}

std::vector<ir::Value *> IrGen::yield_carried(const CarriedVars &c) {
  std::vector<ir::Value *> yields;
  for (size_t i = 0; i < c.names.size(); ++i) {
    const std::string &name = c.names[i];
    const Val &now = frame_->scope[name];
    if (c.entry[i].kind != Val::Kind::Tuple) {
      yields.push_back(yield_value(name, now, c.inits[c.first[i]]->type));
      continue;
    }
    if (!same_structure(c.entry[i], now))
      fail("variable '" + name +
           "' changes its structure in the loop (a tuple or block pointer must keep its length, "
           "its constants and which of its elements are tensors)");
    std::vector<ir::Value *> leaves;
    tensor_leaves(now, leaves);
    for (size_t j = 0; j < leaves.size(); ++j)
      yields.push_back(yield_value(name, Val::tensor(leaves[j]), c.inits[c.first[i] + j]->type));
  }
  return yields;
}

} // namespace kiln::frontend
