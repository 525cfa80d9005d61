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
  if (const char *home = std::getenv("CUDA_HOME"))
    candidates.emplace_back(std::filesystem::path(home) / "nvvm/libdevice/libdevice.10.bc");
  candidates.emplace_back("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc");
  for (const auto &p : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec))
      return p.string();
  }
  return "";
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
    throw Error(first.substr(5) +
                " on the cuda target needs CUDA's libdevice (nvvm/libdevice/libdevice.10.bc), "
                "which was not found; set CUDA_HOME or KILN_LIBDEVICE to it");
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    throw Error("cannot read libdevice at " + path + ": " + buf.getError().message());
  auto lib = llvm::parseBitcodeFile(buf.get()->getMemBufferRef(), m.getContext());
  if (!lib)
    throw Error("cannot parse libdevice at " + path + ": " + llvm::toString(lib.takeError()));
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::LinkOnlyNeeded))
    throw Error("linking libdevice from " + path + " failed");
  for (llvm::Function &f : m)
    if (!f.isDeclaration() && f.getName().starts_with("__nv_"))
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  // libdevice asks __nvvm_reflect("__CUDA_FTZ"); Triton keeps denormals.
  if (!m.getModuleFlag("nvvm-reflect-ftz"))
    m.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
}

} // namespace kiln::nvptx
