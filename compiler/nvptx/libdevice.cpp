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
  std::vector<std::string> roots;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *v = std::getenv(var))
      roots.emplace_back(v);
  roots.emplace_back("/usr/local/cuda");
  for (const std::string &r : roots) {
    const std::filesystem::path p =
        std::filesystem::path(r) / "nvvm" / "libdevice" / "libdevice.10.bc";
    std::error_code ec;
    if (std::filesystem::exists(p, ec))
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
    throw Error(
        "this kernel needs " + first +
        " from the CUDA toolkit's libdevice (nvvm/libdevice/libdevice.10.bc), which is not under "
        "$CUDA_HOME, $CUDA_PATH or /usr/local/cuda; set CUDA_HOME to the toolkit");
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    throw Error("cannot read " + path + ": " + buf.getError().message());
  // Lazily: only the functions the kernel calls are read and linked.
  auto lib = llvm::getOwningLazyBitcodeModule(std::move(*buf), m.getContext());
  if (!lib)
    throw Error("cannot load " + path + ": " + llvm::toString(lib.takeError()));
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::Flags::LinkOnlyNeeded))
    throw Error("cannot link " + path + " into " + m.getName().str());
  for (llvm::Function &f : m)
    if (!f.isDeclaration() && f.getName().starts_with("__nv_"))
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  // libdevice asks __nvvm_reflect whether denormals flush; they do not here.
  if (!m.getModuleFlag("nvvm-reflect-ftz"))
    m.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
}

} // namespace kiln::nvptx
