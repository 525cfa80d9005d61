// tl.inline_asm_elementwise: the user's PTX applied over broadcast blocks,
// `pack` elements per asm call. Only a GPU runs it (the CPU only a lone f32
// math instruction it knows the meaning of); the checks here (the
// constraints against the registers the dtypes and `pack` give) make a
// wrong call an error at the call, not a crash in LLVM or ptxas.
#include <cctype>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "compiler/frontend/ir_gen_args.hpp"
#include "compiler/ir/inline_asm.hpp"

namespace kiln::frontend {

using ir::OpKind;
using ir::Type;

namespace {

constexpr const char *kFn = "tl.inline_asm_elementwise";

std::string string_arg(IrGen &g, CallArgs &a, size_t i, const char *name) {
  const Val &v = required(g, a, i, name, kFn);
  if (!v.is_const() || v.c.kind != ConstValue::Kind::Str)
    g.fail(std::string(kFn) + "'s " + name + " must be a string");
  return v.c.s;
}

/// The elements of a Python sequence argument (a list or tuple), or the one value given.
std::vector<Val> sequence(const Val &v) {
  return v.kind == Val::Kind::Tuple ? v.elems : std::vector<Val>{v};
}

/// Refuses what an asm register cannot carry as Triton passes it.
void check_element(IrGen &g, const Type &t, const std::string &what, int pack) {
  if (t.pointer)
    g.fail(std::string(kFn) + ": " + what + " is a pointer (" + t.str() +
           "); pass integer offsets and add them to the pointer outside the asm");
  if (t.is_bool())
    g.fail(std::string(kFn) + ": " + what + " is a bool block; convert it with .to(tl.int8) first");
  if (pack % ir::asm_elements_per_register(t, pack) != 0)
    g.fail(std::string(kFn) + ": pack=" + std::to_string(pack) +
           " does not fill whole registers of " + t.element().str() + " (" + what +
           "); use a multiple of " + std::to_string(ir::asm_elements_per_register(t, pack)));
}

struct ConstraintCounts {
  int outputs = 0, inputs = 0;
};

/// Outputs (`=r`, `=&r`) and inputs of an LLVM constraint string; clobbers (`~{memory}`) count as
/// neither.
ConstraintCounts count_constraints(const std::string &c) {
  ConstraintCounts n;
  size_t at = 0;
  while (at <= c.size()) {
    const size_t comma = c.find(',', at);
    std::string part = c.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    part.erase(0, part.find_first_not_of(" \t\n"));
    if (!part.empty() && part[0] == '=')
      ++n.outputs;
    else if (!part.empty() && part[0] != '~')
      ++n.inputs;
    if (comma == std::string::npos)
      break;
    at = comma + 1;
  }
  return n;
}

/// Checks every operand reference of the asm (`$3`, `${3:modifier}`)
/// against the `count` operands: LLVM stops the process on one out of range.
void check_operand_refs(IrGen &g, const std::string &text, int count) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$')
      continue;
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (next == '$' || next == '(' || next == '|' || next == ')') { // `$$` is a dollar sign
      ++i;
      continue;
    }
    size_t at = i + 1 + (next == '{');
    size_t end = at;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])))
      ++end;
    if (end == at)
      g.fail(std::string(kFn) + ": the asm has a '$' that names no operand (at \"" +
             text.substr(i, 12) +
             "\"); operands are $0, $1, ...; write $$ for a literal dollar sign");
    const long n = std::stol(text.substr(at, end - at));
    if (n >= count)
      g.fail(std::string(kFn) + ": the asm uses $" + std::to_string(n) + " but has only " +
             std::to_string(count) + " operands ($0..$" + std::to_string(count - 1) +
             ": the outputs, then the inputs)");
    i = end - 1;
  }
}

/// The tl builtin that a lone PTX instruction of one f32 operand computes
/// ("tanh.approx.f32 $0, $1;" is tl.tanh), so that kernels using such asm
/// for speed (mamba3's tanh and sin/cos helpers) also run on the CPU, there
/// exactly rounded instead of within the approximation's error; "" for
/// `mov` (the value itself); nullopt for any other asm.
std::optional<std::string> cpu_equivalent(const std::string &text) {
  std::string t; // the instruction with its spaces and the final ';' dropped
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c)))
      t += c;
  if (!t.empty() && t.back() == ';')
    t.pop_back();
  const std::string operands = "$0,$1";
  if (t.size() <= operands.size() ||
      t.compare(t.size() - operands.size(), operands.size(), operands) != 0)
    return std::nullopt;
  std::string op = t.substr(0, t.size() - operands.size());
  for (const char *drop : {".ftz", ".approx", ".rn"})
    if (const size_t at = op.find(drop); at != std::string::npos)
      op.erase(at, std::strlen(drop));
  static const std::pair<const char *, const char *> known[] = {
      {"tanh.f32", "tl.tanh"},   {"sin.f32", "tl.sin"},  {"cos.f32", "tl.cos"},
      {"ex2.f32", "tl.exp2"},    {"lg2.f32", "tl.log2"}, {"sqrt.f32", "tl.sqrt"},
      {"rsqrt.f32", "tl.rsqrt"}, {"mov.f32", ""},        {"mov.b32", ""}};
  for (const auto &[ptx, builtin] : known)
    if (op == ptx)
      return std::string(builtin);
  return std::nullopt;
}

Val tl_inline_asm_elementwise(IrGen &g, CallArgs &a) {
  const std::string text = string_arg(g, a, 0, "asm");
  const std::string constraints = string_arg(g, a, 1, "constraints");
  std::vector<Val> arg_vals = sequence(required(g, a, 2, "args", kFn));
  const Val &dtype_val = required(g, a, 3, "dtype", kFn);
  const bool pure = bool_kwarg(g, a, 4, "is_pure", true);
  const int64_t pack = const_int_arg(g, a, 5, "pack", kFn);
  if (pack < 1 || pack > 16)
    g.fail(std::string(kFn) + "'s pack must be between 1 and 16, got " + std::to_string(pack));

  std::vector<Type> dtypes;
  for (const Val &d : sequence(dtype_val))
    dtypes.push_back(g.const_dtype(d, (std::string(kFn) + "'s dtype").c_str()).element());
  if (dtypes.empty())
    g.fail(std::string(kFn) + " needs at least one result dtype");

  std::vector<ir::Value *> args;
  Type shape = Type::scalar(DType::i32);
  for (size_t i = 0; i < arg_vals.size(); ++i) {
    args.push_back(g.to_tensor(arg_vals[i], (std::string(kFn) + "'s args").c_str()));
    shape = g.sem().broadcast_shapes(shape, args.back()->type);
  }
  const int p = static_cast<int>(pack);
  int inputs = 0, outputs = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    check_element(g, args[i]->type.element(), "argument " + std::to_string(i), p);
    inputs += ir::asm_registers(args[i]->type.element(), p);
    if (shape.is_block())
      args[i] = g.sem().broadcast_to(args[i], shape.with_element(args[i]->type.element()));
  }
  std::vector<Type> results;
  for (size_t i = 0; i < dtypes.size(); ++i) {
    check_element(g, dtypes[i], "result " + std::to_string(i), p);
    outputs += ir::asm_registers(dtypes[i], p);
    results.push_back(shape.with_element(dtypes[i]));
  }
  const ConstraintCounts named = count_constraints(constraints);
  if (named.outputs != outputs || named.inputs != inputs)
    g.fail(std::string(kFn) + ": the constraints \"" + constraints + "\" name " +
           std::to_string(named.outputs) + " output(s) and " + std::to_string(named.inputs) +
           " input(s), but with pack=" + std::to_string(pack) + " each asm call takes " +
           std::to_string(outputs) + " output and " + std::to_string(inputs) +
           " input registers ($0.. are the outputs, then the inputs; elements narrower than 32 "
           "bits share a register)");
  check_operand_refs(g, text, outputs + inputs);
  if (!g.gpu_target() && args.size() == 1 && dtypes.size() == 1 && dtypes[0].elem == DType::f32 &&
      args[0]->type.elem == DType::f32)
    if (const std::optional<std::string> builtin = cpu_equivalent(text)) {
      if (builtin->empty())
        return Val::tensor(args[0]);
      CallArgs call;
      call.pos.push_back(Val::tensor(args[0]));
      call.callee = *builtin;
      const Val r = g.call_builtin(*builtin, call);
      return dtype_val.kind == Val::Kind::Tuple ? Val::tuple({r}) : r;
    }
  if (!g.gpu_target())
    g.fail(std::string(kFn) + " runs PTX, which only the cuda target can: compile this kernel "
                              "with --backend cuda (--target cuda:sm_XX), or use tl.* operations "
                              "instead of inline assembly for the CPU");

  ir::Op *op = g.builder().create(OpKind::InlineAsm, args, results, pure ? 1 : 0);
  op->str = text;
  op->aux = constraints;
  op->i = pack;
  if (dtype_val.kind != Val::Kind::Tuple)
    return Val::tensor(op->results[0]);
  std::vector<Val> out;
  for (ir::Value *r : op->results)
    out.push_back(Val::tensor(r));
  return Val::tuple(std::move(out));
}

} // namespace

const HandlerTable &inline_asm_handlers() {
  static const HandlerTable table = {
      {"tl.inline_asm_elementwise", tl_inline_asm_elementwise},
  };
  return table;
}

} // namespace kiln::frontend
