#include "compiler/cpu/object_loader.hpp"

#include <sys/mman.h>

#include <atomic>

#include <llvm/ExecutionEngine/Orc/EPCEHFrameRegistrar.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/MapperJITLinkMemoryManager.h>
#include <llvm/ExecutionEngine/Orc/MemoryMapper.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/TargetSelect.h>

#include "kiln/error.hpp"

namespace kiln::cpu {

struct ObjectLoader::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  /// What kernels call outside themselves (libm, libmvec, the process),
  /// resolved once for every object: each object's JITDylib links to it.
  llvm::orc::JITDylib *libs = nullptr;
  std::atomic<uint64_t> next_id{0};
};

namespace {

std::string message(llvm::Error e) { return llvm::toString(std::move(e)); }

/// Kernels' code and constants are carved out of slabs of this size, and
/// an unloaded kernel's pages are reused, so a load seldom maps anything
/// (ORC's default manager mmaps and munmaps every object).
constexpr size_t kSlabBytes = 512 * 1024;

/// In-process pages whose slabs are faulted in when reserved, in one call:
/// a first touch of each page, one fault at a time, costs more than the
/// rest of a small kernel's link (virtual machines make faults dear).
class PrefaultedMapper final : public llvm::orc::InProcessMemoryMapper {
public:
  using InProcessMemoryMapper::InProcessMemoryMapper;
  void reserve(size_t bytes, OnReservedFunction done) override {
    InProcessMemoryMapper::reserve(
        bytes, [done = std::move(done)](llvm::Expected<llvm::orc::ExecutorAddrRange> r) mutable {
#ifdef MADV_POPULATE_WRITE
          if (r) // best effort: an older kernel faults the pages in as they are used
            ::madvise(r->Start.toPtr<void *>(), r->size(), MADV_POPULATE_WRITE);
#endif
          done(std::move(r));
        });
  }
};

llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>>
object_layer(llvm::orc::ExecutionSession &session, const llvm::Triple &) {
  auto memory = std::make_unique<llvm::orc::MapperJITLinkMemoryManager>(
      kSlabBytes, std::make_unique<PrefaultedMapper>(llvm::sys::Process::getPageSizeEstimate()));
  auto layer = std::make_unique<llvm::orc::ObjectLinkingLayer>(session, std::move(memory));
  // As LLJIT's default layer: unwinding through a kernel (a debugger, a
  // profiler) finds its frames.
  auto registrar = llvm::orc::EPCEHFrameRegistrar::Create(session);
  if (!registrar)
    return registrar.takeError();
  layer->addPlugin(
      std::make_unique<llvm::orc::EHFrameRegistrationPlugin>(session, std::move(*registrar)));
  return std::unique_ptr<llvm::orc::ObjectLayer>(std::move(layer));
}

} // namespace

ObjectLoader::ObjectLoader() : impl_(std::make_unique<Impl>()) {}

ObjectLoader::~ObjectLoader() = default;

std::unique_ptr<ObjectLoader> ObjectLoader::create() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::unique_ptr<ObjectLoader> loader(new ObjectLoader());
  // No platform: kernel objects have no static initializers, and the
  // generic one builds an LLVM module (__dso_handle, atexit) for every
  // JITDylib, a cost each load would pay. No default process-symbols
  // JITDylib either: ours (libs) also holds libmvec.
  auto jit = llvm::orc::LLJITBuilder()
                 .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
                 .setLinkProcessSymbolsByDefault(false)
                 .setObjectLinkingLayerCreator(object_layer)
                 .create();
  if (!jit)
    throw RuntimeError("could not start the CPU JIT: " + message(jit.takeError()));
  Impl &impl = *loader->impl_;
  impl.jit = std::move(*jit);
  llvm::orc::JITDylib &libs = impl.jit->getExecutionSession().createBareJITDylib("kiln.libs");
  // Kernels call libm (expf, erff) and, once vectorized, libmvec.
  const char prefix = impl.jit->getDataLayout().getGlobalPrefix();
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process)
    throw RuntimeError("could not start the CPU JIT: " + message(process.takeError()));
  libs.addGenerator(std::move(*process));
  if (auto mvec = llvm::orc::DynamicLibrarySearchGenerator::Load("libmvec.so.1", prefix))
    libs.addGenerator(std::move(*mvec));
  else
    llvm::consumeError(mvec.takeError()); // kernels then use libm's scalar calls
  impl.libs = &libs;
  return loader;
}

std::unique_ptr<LoadedObject> ObjectLoader::load(std::span<const uint8_t> object, const std::string &entry) {
  llvm::orc::LLJIT &jit = *impl_->jit;
  llvm::orc::ExecutionSession &session = jit.getExecutionSession();
  const std::string name = "kiln." + std::to_string(impl_->next_id++);
  // A JITDylib of its own (specializations share their entry's name),
  // bare: only the object and then the shared libraries.
  llvm::orc::JITDylib &dylib = session.createBareJITDylib(name);
  dylib.addToLinkOrder(*impl_->libs, llvm::orc::JITDylibLookupFlags::MatchExportedSymbolsOnly);

  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char *>(object.data()), object.size()), name);
  if (auto err = jit.addObjectFile(dylib, std::move(buffer))) {
    llvm::consumeError(session.removeJITDylib(dylib));
    throw RuntimeError("CPU JIT could not load the kernel object: " + message(std::move(err)));
  }
  auto sym = jit.lookup(dylib, entry);
  if (!sym) {
    llvm::consumeError(session.removeJITDylib(dylib));
    throw RuntimeError("CPU JIT could not find '" + entry + "' in the kernel object: " + message(sym.takeError()));
  }
  std::unique_ptr<LoadedObject> obj(new LoadedObject());
  obj->loader_ = this;
  obj->dylib_ = &dylib;
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
