// The CPU object loader (compiler/cpu/object_loader.hpp): each object gets a
// bare JITDylib of its own, linked to one shared JITDylib for what kernels
// call outside themselves (libm, libmvec), so that specializations sharing
// an entry name load side by side, calls into libm and libmvec resolve in
// every object, an object unloads without disturbing the others, and a bad
// object is a clear error.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "compiler/cpu/object_loader.hpp"
#include "compiler/target.hpp"
#include "runtime/jit_function.hpp"

namespace {

// exp over a block is vectorized into libmvec's _ZGVdN8v_expf (or a libm
// call per element where there is no libmvec): both come from the shared
// JITDylib.
const char *const kSource = R"(import triton
import triton.language as tl


@triton.jit
def exp_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.exp(x) + tl.math.erf(x), mask=mask)
)";

kiln::CompiledKernel compiled(int block) {
  const kiln::Module m = kiln::Module::from_string(kSource, "exp.py");
  const std::vector<kiln::Arg> args{kiln::Arg::mock(kiln::DType::f32),
                                    kiln::Arg::mock(kiln::DType::f32), kiln::arg("n", 100),
                                    kiln::arg("BLOCK", block)};
  return m.kernel("exp_kernel").impl()->compile_only(args, kiln::compiler::Target::host());
}

} // namespace

TEST_CASE("object loader: objects with one entry name load side by side, call libm, and "
          "unload one at a time") {
  const kiln::CompiledKernel a = compiled(32), b = compiled(64);
  REQUIRE(a.entry == b.entry); // two specializations, one symbol name
  auto loader = kiln::cpu::ObjectLoader::create();
  std::vector<std::unique_ptr<kiln::cpu::LoadedObject>> objects;
  for (int i = 0; i < 8; ++i) // the shared JITDylib serves every object
    objects.push_back(loader->load(i % 2 ? b.binary : a.binary, a.entry));
  for (const auto &o : objects)
    CHECK(reinterpret_cast<const void *>(o->entry()) != nullptr);
  CHECK(reinterpret_cast<const void *>(objects[0]->entry()) !=
        reinterpret_cast<const void *>(objects[1]->entry()));
  objects.erase(objects.begin()); // unloading one leaves the others
  auto again = loader->load(a.binary, a.entry);
  CHECK(reinterpret_cast<const void *>(again->entry()) != nullptr);
  objects.clear();
  again.reset();
  // Loads after every object is gone still resolve libm.
  CHECK(reinterpret_cast<const void *>(loader->load(b.binary, b.entry)->entry()) != nullptr);
}

TEST_CASE("object loader: garbage and a missing entry are errors that name the problem") {
  auto loader = kiln::cpu::ObjectLoader::create();
  const std::vector<uint8_t> garbage(64, 0x5a);
  CHECK_THROWS_WITH_AS(loader->load(garbage, "k"),
                       doctest::Contains("could not load the kernel object"), kiln::RuntimeError);
  const kiln::CompiledKernel a = compiled(32);
  CHECK_THROWS_WITH_AS(loader->load(a.binary, "no_such_entry"), doctest::Contains("no_such_entry"),
                       kiln::RuntimeError);
  // The loader is still usable.
  CHECK(reinterpret_cast<const void *>(loader->load(a.binary, a.entry)->entry()) != nullptr);
}

TEST_CASE("object loader: loading and unloading again and again reuses the slab's pages") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The sanitizers hold freed memory back (ASan's quarantine): resident
  // size says nothing of the loader there (LeakSanitizer checks leaks).
  MESSAGE("[SKIP] resident size under a sanitizer");
  return;
#endif
  auto resident_kb = [] {
    std::ifstream statm("/proc/self/statm");
    uint64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident * 4;
  };
  const kiln::CompiledKernel a = compiled(32);
  auto loader = kiln::cpu::ObjectLoader::create();
  for (int i = 0; i < 50; ++i)
    loader->load(a.binary, a.entry);
  const uint64_t before = resident_kb();
  for (int i = 0; i < 2000; ++i)
    loader->load(a.binary, a.entry);
  CHECK(resident_kb() < before + 8 * 1024); // a leak of a page per load would be 8 MB
}

namespace {

/// The permissions ("r-xs") of the mapping that holds `p`, from
/// /proc/self/maps; `bytes`, when not null, receives its size.
std::string mapping_perms(const void *p, uint64_t *bytes = nullptr) {
  std::ifstream maps("/proc/self/maps");
  const auto addr = reinterpret_cast<uintptr_t>(p);
  for (std::string line; std::getline(maps, line);) {
    unsigned long lo = 0, hi = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, perms) == 3 && addr >= lo && addr < hi) {
      if (bytes)
        *bytes = hi - lo;
      return perms;
    }
  }
  return "";
}

} // namespace

TEST_CASE("object loader: code runs from pages never writable at its address, and loads and "
          "unloads change no protection") {
  // Each slab is mapped twice, read-write for the linker and read-execute
  // for kernels (or, where the system refuses that, ORC's mprotect'ed
  // pages): either way the entry's page is executable and not writable.
  const kiln::CompiledKernel a = compiled(32), b = compiled(64);
  auto loader = kiln::cpu::ObjectLoader::create();
  std::vector<std::unique_ptr<kiln::cpu::LoadedObject>> objects;
  for (int i = 0; i < 6; ++i)
    objects.push_back(loader->load(i % 2 ? b.binary : a.binary, a.entry));
  for (const auto &o : objects) {
    uint64_t bytes = 0;
    const std::string perms = mapping_perms(reinterpret_cast<const void *>(o->entry()), &bytes);
    REQUIRE(perms.size() == 4);
    CHECK(perms[0] == 'r');
    CHECK(perms[1] == '-');
    CHECK(perms[2] == 'x');
    // The executable view of a slab (shared: the memory file) is one
    // mapping of the slab's 512 KB: no load split it with an mprotect.
    if (perms[3] == 's')
      CHECK(bytes == 512 * 1024);
    else
      MESSAGE("the system refused a dual mapping: ORC's in-process mapper is in use");
  }
  // And so are the reused pages of unloaded objects.
  objects.clear();
  auto again = loader->load(b.binary, b.entry);
  CHECK(mapping_perms(reinterpret_cast<const void *>(again->entry())).substr(0, 3) == "r-x");
}

TEST_CASE("object loader: a kernel loaded into reused pages computes the new kernel's result") {
  // Through the runtime on the CPU: a launch, its kernel unloaded with its
  // Module, then another specialization that lands in the freed pages.
  for (int round = 0; round < 3; ++round)
    for (int block : {32, 64}) {
      const kiln::Module m = kiln::Module::from_string(kSource, "exp.py");
      std::vector<float> x(100), out(100, -1.0f);
      for (int i = 0; i < 100; ++i)
        x[i] = 0.01f * float(i);
      m.kernel("exp_kernel")[kiln::Grid{(100 + block - 1) / block}](x.data(), out.data(), 100,
                                                                    kiln::arg("BLOCK", block));
      for (int i = 0; i < 100; ++i)
        CHECK(out[i] == doctest::Approx(std::exp(x[i]) + std::erf(x[i])).epsilon(1e-5));
    }
}

TEST_CASE("object loader: the object's bytes need only live during load(), aligned or not") {
  const kiln::CompiledKernel a = compiled(32);
  auto loader = kiln::cpu::ObjectLoader::create();
  std::unique_ptr<kiln::cpu::LoadedObject> in_place, copied;
  {
    std::vector<uint8_t> bytes = a.binary; // aligned as an allocation: read in place
    in_place = loader->load(bytes, a.entry);
    std::fill(bytes.begin(), bytes.end(), 0x5a); // the loaded code must not depend on them
  }
  {
    std::vector<uint8_t> shifted(a.binary.size() + 1);
    std::copy(a.binary.begin(), a.binary.end(), shifted.begin() + 1); // misaligned: copied
    copied = loader->load(std::span<const uint8_t>(shifted).subspan(1), a.entry);
  }
  for (const auto *o : {in_place.get(), copied.get()}) {
    const auto *code = reinterpret_cast<const uint8_t *>(o->entry());
    CHECK(mapping_perms(code).substr(0, 3) == "r-x");
  }
  // Two loads of one object: two copies of its code, side by side.
  CHECK(reinterpret_cast<const void *>(in_place->entry()) !=
        reinterpret_cast<const void *>(copied->entry()));
}
