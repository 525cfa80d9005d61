#include "compiler/llvm/lower_print.hpp"

#include <string>
#include <vector>

#include <llvm/IR/Module.h>

namespace kiln::llvmgen {
namespace {

/// The printf conversion of an element and the value to pass for it
/// (promoted as C's varargs are).
std::pair<std::string, llvm::Value *> conversion(llvm::IRBuilder<> &b, const ir::Type &t,
                                                 llvm::Value *v, bool hex) {
  if (t.pointer)
    return {"%p", v};
  if (t.is_float()) {
    if (hex) {
      const unsigned w = v->getType()->getPrimitiveSizeInBits();
      return {w == 64 ? "0x%llx" : "0x%x", b.CreateBitCast(v, b.getIntNTy(w))};
    }
    return {"%f", v->getType()->isDoubleTy() ? v : b.CreateFPExt(v, b.getDoubleTy())};
  }
  const bool wide = ir::bit_width(t) == 64;
  const bool is_unsigned = !t.is_signed() || t.is_bool();
  llvm::Value *x = wide          ? v
                   : is_unsigned ? b.CreateZExt(v, b.getInt32Ty())
                                 : b.CreateSExt(v, b.getInt32Ty());
  if (hex)
    return {wide ? "0x%llx" : "0x%x", x};
  return {wide ? (is_unsigned ? "%llu" : "%lld") : (is_unsigned ? "%u" : "%d"), x};
}

/// CUDA's device printf: vprintf(format, arguments packed in a buffer with
/// their natural alignment, as a C struct lays them out).
void call_vprintf(llvm::IRBuilder<> &b, llvm::Module &m, const std::vector<llvm::Value *> &args) {
  llvm::FunctionCallee vprintf = m.getOrInsertFunction(
      "vprintf", llvm::FunctionType::get(b.getInt32Ty(), {b.getPtrTy(), b.getPtrTy()}, false));
  std::vector<llvm::Type *> fields;
  for (size_t i = 1; i < args.size(); ++i)
    fields.push_back(args[i]->getType());
  llvm::StructType *packed = llvm::StructType::get(m.getContext(), fields);
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().begin());
  llvm::Value *buf = entry.CreateAlloca(packed);
  for (size_t i = 1; i < args.size(); ++i)
    b.CreateStore(args[i], b.CreateStructGEP(packed, buf, static_cast<unsigned>(i - 1)));
  b.CreateCall(vprintf, {args[0], buf});
}

} // namespace

void emit_print(llvm::IRBuilder<> &b, const ir::Op &op, llvm::Value *const pid[3],
                const ForEachElement &each, const ElementAt &element, bool gpu) {
  llvm::Module &m = *b.GetInsertBlock()->getModule();
  llvm::FunctionCallee printf_fn = m.getOrInsertFunction(
      "printf", llvm::FunctionType::get(b.getInt32Ty(), {b.getPtrTy()}, true));
  const bool hex = op.i != 0;
  std::string prefix = op.str;
  if (!prefix.empty() && prefix.back() != ' ')
    prefix += ' ';
  for (size_t k = 0; k < op.operands.size(); ++k) {
    const ir::Value *v = op.operands[k];
    const ir::Type et = v->type.element();
    each(v, [&](const ElementIndex &idx) {
      std::string fmt = "pid (%u, %u, %u) idx (";
      std::vector<llvm::Value *> args{nullptr, pid[0], pid[1], pid[2]};
      for (int d = 0; d < v->type.rank; ++d) {
        fmt += d ? ", %3lld" : "%3lld";
        args.push_back(idx[d]);
      }
      fmt += ") " + prefix;
      if (op.operands.size() > 1)
        fmt += "(operand " + std::to_string(k) + ") ";
      auto [conv, val] = conversion(b, et, element(v, idx), hex);
      fmt += conv + "\n";
      args.push_back(val);
      args[0] = b.CreateGlobalStringPtr(fmt, "kiln.print.fmt");
      if (gpu)
        call_vprintf(b, m, args);
      else
        b.CreateCall(printf_fn, args);
    });
  }
}

} // namespace kiln::llvmgen
