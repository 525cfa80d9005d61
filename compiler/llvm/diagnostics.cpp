#include "compiler/llvm/diagnostics.hpp"

#include <string>

#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Support/raw_ostream.h>

#include "kiln/error.hpp"

namespace kiln::llvmgen {

namespace {

struct Collector final : llvm::DiagnosticHandler {
  std::string errors;

  bool handleDiagnostics(const llvm::DiagnosticInfo &di) override {
    if (di.getSeverity() != llvm::DS_Error)
      return true;
    llvm::raw_string_ostream os(errors);
    if (!errors.empty())
      os << "\n";
    llvm::DiagnosticPrinterRawOStream printer(os);
    di.print(printer);
    return true;
  }
};

} // namespace

void collect_diagnostics(llvm::LLVMContext &ctx) {
  ctx.setDiagnosticHandler(std::make_unique<Collector>());
}

void throw_collected(llvm::LLVMContext &ctx, const char *what) {
  // Only collect_diagnostics installs a handler on a compile's context.
  auto *c =
      static_cast<Collector *>(const_cast<llvm::DiagnosticHandler *>(ctx.getDiagHandlerPtr()));
  if (c->errors.empty())
    return;
  std::string msg = "LLVM rejected the kernel in " + std::string(what) + ": " + c->errors;
  c->errors.clear();
  throw Error(msg);
}

} // namespace kiln::llvmgen
