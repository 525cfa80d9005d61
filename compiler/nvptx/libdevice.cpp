#include "compiler/nvptx/libdevice.hpp"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>

#include "kiln/error.hpp"

namespace kiln::nvptx {
namespace {

std::string find_libdevice() {
  std::vector<std::filesystem::path> candidates;
  if (const char *f = std::getenv("KILN_LIBDEVICE"))
    candidates.emplace_back(f);
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *v = std::getenv(var))
      candidates.push_back(std::filesystem::path(v) / "nvvm" / "libdevice" / "libdevice.10.bc");
  candidates.emplace_back("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc");
  for (const auto &p : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec))
      return p.string();
  }
  return {};
}

} // namespace

void link_libdevice(llvm::Module &m) {
  std::string first;
  for (const llvm::Function &f : m)
    if (f.isDeclaration() && f.getName().starts_with("__nv_")) {
      first = f.getName().str();
      break;
    }
  if (first.empty())
    return;
  const std::string path = find_libdevice();
  if (path.empty())
    throw Error("this kernel needs " + first +
                " on the cuda target, from CUDA's libdevice (nvvm/libdevice/libdevice.10.bc), "
                "which is not under $CUDA_HOME, $CUDA_PATH or /usr/local/cuda; set CUDA_HOME to "
                "the toolkit or KILN_LIBDEVICE to the file");
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    throw Error("cannot read libdevice at " + path + ": " + buf.getError().message());
  // Lazily: only the functions the kernel calls are read and linked.
  auto lib = llvm::getOwningLazyBitcodeModule(std::move(*buf), m.getContext());
  if (!lib)
    throw Error("cannot load libdevice at " + path + ": " + llvm::toString(lib.takeError()));
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::Flags::LinkOnlyNeeded))
    throw Error("linking libdevice from " + path + " into " + m.getName().str() + " failed");
  for (llvm::Function &f : m)
    if (!f.isDeclaration() && f.getName().starts_with("__nv_"))
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  // libdevice asks __nvvm_reflect("__CUDA_FTZ"): 1, as Triton 3.6 sets it
  // (set_nvvm_reflect_ftz), so that its functions flush denormals as
  // Triton's do (its __nv_log2f is all .ftz instructions).
  if (!m.getModuleFlag("nvvm-reflect-ftz"))
    m.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{1});
}

} // namespace kiln::nvptx
