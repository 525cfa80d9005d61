// Loads CPU object files into this process with LLVM ORC (JITLink), so that
// a compiled or cached kernel becomes a callable function.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace kiln::cpu {

/// The entry point of a CPU kernel (see llvm/lower_tile_ir.hpp): `scratch`
/// holds CompiledKernel::scratch_bytes, 64-byte aligned, for the caller's
/// thread alone.
using EntryFn = void (*)(void **args, const uint32_t *grid, uint64_t begin, uint64_t end,
                         void *scratch);

class ObjectLoader;

/// A loaded object; unloads it when destroyed.
class LoadedObject {
public:
  ~LoadedObject();
  LoadedObject(const LoadedObject &) = delete;
  LoadedObject &operator=(const LoadedObject &) = delete;

  EntryFn entry() const { return entry_; }

private:
  friend class ObjectLoader;
  LoadedObject() = default;
  ObjectLoader *loader_ = nullptr;
  void *dylib_ = nullptr;
  EntryFn entry_ = nullptr;
};

/// One ORC JIT session. load() is safe from several threads at once; each
/// object gets its own bare JITDylib (no platform set-up) so that
/// specializations of one kernel, which share a symbol name, do not clash,
/// linked to one JITDylib of the process's and libmvec's symbols that every
/// object shares (each symbol is looked up once per process). Code and
/// constants come from pre-faulted slabs. The loader must outlive its
/// objects.
class ObjectLoader {
public:
  static std::unique_ptr<ObjectLoader> create();
  ~ObjectLoader();

  /// Links `object` and resolves `entry`. Throws RuntimeError on a bad object.
  /// `object` is read in place and need only live during the call.
  std::unique_ptr<LoadedObject> load(std::span<const uint8_t> object, const std::string &entry);

private:
  friend class LoadedObject;
  ObjectLoader();
  void unload(void *dylib);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace kiln::cpu
