#include "compiler/cpu/object_loader.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

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
/// rest of a small kernel's link (virtual machines make faults dear). The
/// fallback where DualMapper cannot map (see below).
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

/// Each slab is one memory file mapped twice: read-write where the linker
/// writes code and constants, read-execute where kernels run. ORC's
/// in-process mapper instead changes the protections of every object's
/// pages when it is loaded and again when it is unloaded (RW -> RO/RX ->
/// RW); each mprotect flushes the TLB of every core the process runs on,
/// which on this VM costs tens of microseconds, a fifth of a small
/// kernel's disk hit. Here a load and an unload change no protection: no
/// page is ever writable and executable at one address. Read-only data
/// sits in the executable view (readable, as it must be; also executable,
/// which W^X allows). A segment that must be writable at run time (kernels
/// have none today) gets its pages of the executable view made read-write
/// while it is loaded.
///
/// Thread safety: every call is, as MemoryMapper requires (one mutex).
class DualMapper final : public llvm::orc::MemoryMapper {
public:
  /// Null where this system refuses an executable shared mapping (a
  /// memfd_noexec policy, an SELinux execmem rule): the caller falls back
  /// to the in-process mapper.
  static std::unique_ptr<DualMapper> create() {
    std::unique_ptr<DualMapper> m(new DualMapper(llvm::sys::Process::getPageSizeEstimate()));
    void *exec = nullptr, *work = nullptr;
    if (!m->map(m->page_, exec, work))
      return nullptr;
    ::munmap(exec, m->page_);
    ::munmap(work, m->page_);
    return m;
  }

  ~DualMapper() override {
    for (const auto &[exec, r] : slabs_) {
      ::munmap(reinterpret_cast<void *>(exec), r.bytes);
      ::munmap(r.work, r.bytes);
    }
  }

  unsigned int getPageSize() override { return page_; }

  void reserve(size_t bytes, OnReservedFunction done) override {
    void *exec = nullptr, *work = nullptr;
    if (!map(bytes, exec, work))
      return done(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                          "cannot map %zu bytes for kernel code: %s", bytes,
                                          std::strerror(errno)));
#ifdef MADV_POPULATE_WRITE
    // Both views' page tables filled now, in two calls, not fault by fault
    // on the first load and the first call (best effort).
    ::madvise(work, bytes, MADV_POPULATE_WRITE);
    ::madvise(exec, bytes, MADV_POPULATE_READ);
#endif
    const auto start = reinterpret_cast<uintptr_t>(exec);
    {
      std::lock_guard lock(mutex_);
      slabs_[start] = Slab{static_cast<char *>(work), bytes};
    }
    done(llvm::orc::ExecutorAddrRange(llvm::orc::ExecutorAddr(start),
                                      llvm::orc::ExecutorAddrDiff(bytes)));
  }

  char *prepare(llvm::orc::ExecutorAddr addr, size_t) override {
    std::lock_guard lock(mutex_);
    return working(addr.getValue());
  }

  void initialize(AllocInfo &info, OnInitializedFunction done) override {
    uintptr_t lo = UINTPTR_MAX;
    std::vector<std::pair<uintptr_t, size_t>> writable;
    for (const AllocInfo::SegInfo &seg : info.Segments) {
      const uintptr_t base = info.MappingBase.getValue() + seg.Offset;
      const size_t size = seg.ContentSize + seg.ZeroFillSize;
      lo = std::min(lo, base);
      // The linker wrote the content through the working view; the rest
      // of the segment is zero, whatever an earlier object left there.
      std::memset(const_cast<char *>(seg.WorkingMem) + seg.ContentSize, 0, seg.ZeroFillSize);
      const auto prot = static_cast<unsigned>(seg.AG.getMemProt());
      if ((prot & static_cast<unsigned>(llvm::orc::MemProt::Write)) != 0 && size > 0) {
        const uintptr_t first = base & ~uintptr_t(page_ - 1);
        const size_t len = (base + size - first + page_ - 1) & ~size_t(page_ - 1);
        if (::mprotect(reinterpret_cast<void *>(first), len, PROT_READ | PROT_WRITE) != 0) {
          const std::error_code ec(errno, std::generic_category());
          restore(writable);
          return done(llvm::errorCodeToError(ec));
        }
        writable.emplace_back(first, len);
      }
      if ((prot & static_cast<unsigned>(llvm::orc::MemProt::Exec)) != 0)
        llvm::sys::Memory::InvalidateInstructionCache(reinterpret_cast<void *>(base), size);
    }
    auto dealloc = llvm::orc::shared::runFinalizeActions(info.Actions);
    if (!dealloc) {
      restore(writable);
      return done(dealloc.takeError());
    }
    {
      std::lock_guard lock(mutex_);
      Allocation &a = allocations_[lo];
      a.dealloc = std::move(*dealloc);
      a.writable = std::move(writable);
    }
    done(llvm::orc::ExecutorAddr(lo));
  }

  void deinitialize(llvm::ArrayRef<llvm::orc::ExecutorAddr> bases,
                    OnDeinitializedFunction done) override {
    llvm::Error all = llvm::Error::success();
    {
      std::lock_guard lock(mutex_);
      for (const llvm::orc::ExecutorAddr base : llvm::reverse(bases)) {
        auto it = allocations_.find(base.getValue());
        if (it == allocations_.end())
          continue;
        if (llvm::Error e = llvm::orc::shared::runDeallocActions(it->second.dealloc))
          all = llvm::joinErrors(std::move(all), std::move(e));
        restore(it->second.writable);
        allocations_.erase(it);
      }
    }
    done(std::move(all));
  }

  void release(llvm::ArrayRef<llvm::orc::ExecutorAddr> reservations,
               OnReleasedFunction done) override {
    {
      std::lock_guard lock(mutex_);
      for (const llvm::orc::ExecutorAddr r : reservations) {
        auto it = slabs_.find(r.getValue());
        if (it == slabs_.end())
          continue;
        ::munmap(reinterpret_cast<void *>(it->first), it->second.bytes);
        ::munmap(it->second.work, it->second.bytes);
        slabs_.erase(it);
      }
    }
    done(llvm::Error::success());
  }

private:
  struct Slab {
    char *work = nullptr; ///< the read-write view
    size_t bytes = 0;
  };
  struct Allocation {
    std::vector<llvm::orc::shared::WrapperFunctionCall> dealloc;
    std::vector<std::pair<uintptr_t, size_t>> writable; ///< executable-view pages made RW
  };

  explicit DualMapper(unsigned page) : page_(page) {}

  /// A memory file of `bytes` mapped read-execute (`exec`) and read-write
  /// (`work`); the file's descriptor is closed, the mappings keep it.
  bool map(size_t bytes, void *&exec, void *&work) const {
    const int fd = ::memfd_create("kiln-jit", MFD_CLOEXEC);
    if (fd < 0)
      return false;
    bool ok = ::ftruncate(fd, static_cast<off_t>(bytes)) == 0;
    exec = ok ? ::mmap(nullptr, bytes, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0) : MAP_FAILED;
    work = exec != MAP_FAILED ? ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                              : MAP_FAILED;
    if (work == MAP_FAILED && exec != MAP_FAILED)
      ::munmap(exec, bytes);
    ok = exec != MAP_FAILED && work != MAP_FAILED;
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return ok;
  }

  /// The working view of executable address `addr`; the caller holds mutex_.
  char *working(uintptr_t addr) const {
    auto it = slabs_.upper_bound(addr);
    assert(it != slabs_.begin() && "an address outside every slab");
    --it;
    assert(addr - it->first < it->second.bytes);
    return it->second.work + (addr - it->first);
  }

  static void restore(const std::vector<std::pair<uintptr_t, size_t>> &pages) {
    for (const auto &[first, len] : pages)
      ::mprotect(reinterpret_cast<void *>(first), len, PROT_READ | PROT_EXEC);
  }

  const unsigned page_;
  std::mutex mutex_;
  std::map<uintptr_t, Slab> slabs_;             ///< by the executable view's start
  std::map<uintptr_t, Allocation> allocations_; ///< by their lowest address
};

llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>>
object_layer(llvm::orc::ExecutionSession &session, const llvm::Triple &) {
  std::unique_ptr<llvm::orc::MemoryMapper> mapper = DualMapper::create();
  if (!mapper)
    mapper = std::make_unique<PrefaultedMapper>(llvm::sys::Process::getPageSizeEstimate());
  auto memory =
      std::make_unique<llvm::orc::MapperJITLinkMemoryManager>(kSlabBytes, std::move(mapper));
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

  // The object is read in place: the link runs within this call (the
  // lookup below materializes it), so the caller's bytes outlive the
  // buffer, and a copy (tens of KB, new heap pages in a young process)
  // would be the only allocation of the size in a hit. ELF parsing wants
  // the bytes aligned as an allocation is; others are copied.
  const llvm::StringRef bytes(reinterpret_cast<const char *>(object.data()), object.size());
  auto buffer = reinterpret_cast<uintptr_t>(object.data()) % alignof(std::max_align_t) == 0
                    ? llvm::MemoryBuffer::getMemBuffer(bytes, name, false)
                    : llvm::MemoryBuffer::getMemBufferCopy(bytes, name);
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
