// Text form of the tile IR, MLIR-like: `%3 = add %1, %2 : <1024xf32>`.
// Frontend tests check it with CHECK lines, so keep it stable.
#include <sstream>

#include "compiler/ir/ir.hpp"

namespace kiln::ir {
namespace {

/// One line of text for a string attribute: multi-line PTX stays on its op's line.
std::string escaped(const std::string &s) {
  std::string r;
  for (char c : s) {
    if (c == '\n')
      r += "\\n";
    else if (c == '\t')
      r += "\\t";
    else if (c == '"' || c == '\\')
      r += std::string("\\") + c;
    else
      r += c;
  }
  return r;
}

class Printer {
public:
  Printer(std::ostringstream &os, const PrintNotes *notes) : os_(os), notes_(notes) {}

  void function(const Function &f) {
    os_ << (f.is_kernel ? "kernel @" : "func @") << f.name << "(";
    for (size_t i = 0; i < f.body.args.size(); ++i) {
      const Value *a = f.body.args[i];
      os_ << (i ? ", " : "") << "%" << a->id << ": " << a->type.str();
      if (a->facts.divisible16)
        os_ << " {D}";
      if (i < f.param_names.size())
        os_ << " \"" << f.param_names[i] << "\"";
    }
    os_ << ") {\n";
    block(f.body, 1);
    os_ << "}\n";
  }

private:
  void indent(int depth) {
    for (int i = 0; i < depth; ++i)
      os_ << "  ";
  }

  void block(const Block &b, int depth) {
    for (const Op *op : b.ops)
      this->op(*op, depth);
  }

  void op(const Op &op, int depth) {
    if (notes_ && notes_->before_op) {
      const std::string pre = notes_->before_op(op);
      for (size_t at = 0; at < pre.size();) {
        const size_t nl = pre.find('\n', at);
        indent(depth);
        os_ << pre.substr(at, nl - at) << "\n";
        at = nl == std::string::npos ? pre.size() : nl + 1;
      }
    }
    indent(depth);
    for (size_t i = 0; i < op.results.size(); ++i)
      os_ << (i ? ", " : "") << "%" << op.results[i]->id;
    if (!op.results.empty())
      os_ << " = ";
    os_ << op_name(op);
    if (op.kind == OpKind::Call && op.callee)
      os_ << " @" << op.callee->name;
    for (size_t i = 0; i < op.operands.size(); ++i)
      os_ << (i ? ", " : " ") << "%" << op.operands[i]->id;
    switch (op.kind) {
    case OpKind::Constant:
      if (op.result()->type.is_float())
        os_ << " " << op.f;
      else
        os_ << " " << op.i;
      break;
    case OpKind::Arange: os_ << " start=" << op.i; break;
    case OpKind::ProgramId:
    case OpKind::NumPrograms:
    case OpKind::ExpandDims:
    case OpKind::Gather:
    case OpKind::Reduce:
    case OpKind::Scan: os_ << " axis=" << op.axis; break;
    case OpKind::Trans:
      os_ << " perm=";
      for (size_t i = 0; i < op.ints.size(); ++i)
        os_ << (i ? "," : "") << op.ints[i];
      break;
    case OpKind::Assert:
    case OpKind::Print: os_ << " \"" << op.str << "\""; break;
    case OpKind::Dot: os_ << " precision=" << op.str; break;
    case OpKind::InlineAsm:
      os_ << " \"" << escaped(op.str) << "\" \"" << op.aux << "\" pack=" << op.i
          << (op.sub ? " pure" : "");
      break;
    default: break;
    }
    if (!op.results.empty()) {
      os_ << " :";
      for (size_t i = 0; i < op.results.size(); ++i) {
        os_ << (i ? ", " : " ") << op.results[i]->type.str();
        if (notes_ && notes_->after_value)
          os_ << notes_->after_value(*op.results[i]);
      }
    }
    if (op.regions.empty()) {
      os_ << "\n";
      return;
    }
    os_ << " {\n";
    for (size_t r = 0; r < op.regions.size(); ++r) {
      const Block *b = op.regions[r];
      indent(depth);
      os_ << "^" << r << "(";
      for (size_t i = 0; i < b->args.size(); ++i)
        os_ << (i ? ", " : "") << "%" << b->args[i]->id << ": " << b->args[i]->type.str();
      os_ << "):\n";
      block(*b, depth + 1);
    }
    indent(depth);
    os_ << "}\n";
  }

  std::ostringstream &os_;
  const PrintNotes *notes_;
};

} // namespace

std::string print(const Program &p, const PrintNotes *notes) {
  std::ostringstream os;
  Printer pr(os, notes);
  for (const auto &f : p.functions)
    pr.function(*f);
  return os.str();
}

} // namespace kiln::ir
