#include "compiler/cpu/object_loader.hpp"

#include <atomic>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>

#include "kiln/error.hpp"

namespace kiln::cpu {

struct ObjectLoader::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::atomic<uint64_t> next_id{0};
};

namespace {

std::string message(llvm::Error e) { return llvm::toString(std::move(e)); }

} // namespace

ObjectLoader::ObjectLoader() : impl_(std::make_unique<Impl>()) {}

ObjectLoader::~ObjectLoader() = default;

std::unique_ptr<ObjectLoader> ObjectLoader::create() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::unique_ptr<ObjectLoader> loader(new ObjectLoader());
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit)
    throw RuntimeError("could not start the CPU JIT: " + message(jit.takeError()));
  loader->impl_->jit = std::move(*jit);
  return loader;
}

std::unique_ptr<LoadedObject> ObjectLoader::load(std::span<const uint8_t> object, const std::string &entry) {
  llvm::orc::LLJIT &jit = *impl_->jit;
  const std::string name = "kiln." + std::to_string(impl_->next_id++);
  auto dylib = jit.getExecutionSession().createJITDylib(name);
  if (!dylib)
    throw RuntimeError("CPU JIT: " + message(dylib.takeError()));
  // Kernels call libm (expf, erff) and, once vectorized, libmvec.
  const char prefix = jit.getDataLayout().getGlobalPrefix();
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process)
    throw RuntimeError("CPU JIT: " + message(process.takeError()));
  dylib->addGenerator(std::move(*process));
  if (auto mvec = llvm::orc::DynamicLibrarySearchGenerator::Load("libmvec.so.1", prefix))
    dylib->addGenerator(std::move(*mvec));
  else
    llvm::consumeError(mvec.takeError());

  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char *>(object.data()), object.size()), name);
  if (auto err = jit.addObjectFile(*dylib, std::move(buffer))) {
    llvm::cantFail(jit.getExecutionSession().removeJITDylib(*dylib));
    throw RuntimeError("CPU JIT could not load the kernel object: " + message(std::move(err)));
  }
  auto sym = jit.lookup(*dylib, entry);
  if (!sym) {
    llvm::consumeError(jit.getExecutionSession().removeJITDylib(*dylib));
    throw RuntimeError("CPU JIT could not find '" + entry + "' in the kernel object: " + message(sym.takeError()));
  }
  std::unique_ptr<LoadedObject> obj(new LoadedObject());
  obj->loader_ = this;
  obj->dylib_ = &*dylib;
  obj->entry_ = sym->toPtr<EntryFn>();
  return obj;
}

void ObjectLoader::unload(void *dylib) {
  auto &jd = *static_cast<llvm::orc::JITDylib *>(dylib);
  llvm::consumeError(impl_->jit->getExecutionSession().removeJITDylib(jd));
}

LoadedObject::~LoadedObject() {
  if (loader_ && dylib_)
    loader_->unload(dylib_);
}

} // namespace kiln::cpu
