#include "compiler/nvptx/ptx_to_cubin.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

#include "compiler/nvptx/nvjitlink_types.hpp"

#include "compiler/nvptx/assembler_threads.hpp"
#include "kiln/error.hpp"

namespace kiln::nvptx {

namespace {

/// The few nvJitLink entry points we use, by their unversioned names.
struct NvJitLink {
  nvJitLinkResult (*Create)(nvJitLinkHandle *, uint32_t, const char **);
  nvJitLinkResult (*Destroy)(nvJitLinkHandle *);
  nvJitLinkResult (*AddData)(nvJitLinkHandle, nvJitLinkInputType, const void *, size_t, const char *);
  nvJitLinkResult (*Complete)(nvJitLinkHandle);
  nvJitLinkResult (*GetLinkedCubinSize)(nvJitLinkHandle, size_t *);
  nvJitLinkResult (*GetLinkedCubin)(nvJitLinkHandle, void *);
  nvJitLinkResult (*GetErrorLogSize)(nvJitLinkHandle, size_t *);
  nvJitLinkResult (*GetErrorLog)(nvJitLinkHandle, char *);
  nvJitLinkResult (*GetInfoLogSize)(nvJitLinkHandle, size_t *);
  nvJitLinkResult (*GetInfoLog)(nvJitLinkHandle, char *);
};

const NvJitLink *load_nvjitlink() {
  static const NvJitLink *api = [] () -> const NvJitLink * {
    void *lib = dlopen("libnvJitLink.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      lib = dlopen("/usr/local/cuda/lib64/libnvJitLink.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      return nullptr;
    static NvJitLink a;
    bool ok = true;
    auto sym = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      ok &= fn != nullptr;
    };
    sym(a.Create, "nvJitLinkCreate");
    sym(a.Destroy, "nvJitLinkDestroy");
    sym(a.AddData, "nvJitLinkAddData");
    sym(a.Complete, "nvJitLinkComplete");
    sym(a.GetLinkedCubinSize, "nvJitLinkGetLinkedCubinSize");
    sym(a.GetLinkedCubin, "nvJitLinkGetLinkedCubin");
    sym(a.GetErrorLogSize, "nvJitLinkGetErrorLogSize");
    sym(a.GetErrorLog, "nvJitLinkGetErrorLog");
    sym(a.GetInfoLogSize, "nvJitLinkGetInfoLogSize");
    sym(a.GetInfoLog, "nvJitLinkGetInfoLog");
    return ok ? &a : nullptr;
  }();
  return api;
}

std::string log_of(const NvJitLink &a, nvJitLinkHandle h, bool error) {
  size_t n = 0;
  if ((error ? a.GetErrorLogSize(h, &n) : a.GetInfoLogSize(h, &n)) != NVJITLINK_SUCCESS || n == 0)
    return {};
  std::string s(n, '\0');
  (error ? a.GetErrorLog(h, s.data()) : a.GetInfoLog(h, s.data()));
  while (!s.empty() && (s.back() == '\0' || s.back() == '\n'))
    s.pop_back();
  return s;
}

/// The arch to assemble for: the PTX's own `.target` where it names an
/// arch-specific one (sm_90a: wgmma), else sm_`sm`.
std::string arch_of(const std::string &ptx, int sm) {
  const std::string plain = "sm_" + std::to_string(sm), line = "\n.target " + plain + "a";
  return ptx.find(line) != std::string::npos ? plain + "a" : plain;
}

std::optional<Cubin> with_nvjitlink(const NvJitLink &a, const std::string &ptx, int sm) {
  const std::string arch = "-arch=" + arch_of(ptx, sm);
  const char *opts[] = {arch.c_str(), "-verbose"};
  nvJitLinkHandle h = nullptr;
  if (a.Create(&h, 2, opts) != NVJITLINK_SUCCESS)
    return std::nullopt;
  struct Guard {
    const NvJitLink &a;
    nvJitLinkHandle &h;
    ~Guard() { a.Destroy(&h); }
  } guard{a, h};
  // PTX text with its terminating NUL, as nvrtcGetPTXSize counts it.
  if (a.AddData(h, NVJITLINK_INPUT_PTX, ptx.c_str(), ptx.size() + 1, "kernel.ptx") != NVJITLINK_SUCCESS ||
      a.Complete(h) != NVJITLINK_SUCCESS)
    throw Error("nvJitLink rejected the generated PTX (a kiln bug; please report it): " + log_of(a, h, true));
  size_t n = 0;
  a.GetLinkedCubinSize(h, &n);
  Cubin c;
  c.image.resize(n);
  a.GetLinkedCubin(h, c.image.data());
  c.via = "nvJitLink";
  c.log = log_of(a, h, false);
  return c;
}

std::optional<Cubin> with_ptxas(const std::string &ptx, int sm) {
  namespace fs = std::filesystem;
  const char *candidates[] = {"ptxas", "/usr/local/cuda/bin/ptxas"};
  std::string ptxas;
  for (const char *c : candidates)
    if (std::system((std::string("command -v ") + c + " >/dev/null 2>&1").c_str()) == 0) {
      ptxas = c;
      break;
    }
  if (ptxas.empty())
    return std::nullopt;
  const fs::path dir = fs::temp_directory_path() / ("kiln-ptxas-" + std::to_string(getpid()) + "-" +
                                                    std::to_string(std::hash<std::string>()(ptx)));
  fs::create_directories(dir);
  const fs::path in = dir / "k.ptx", out = dir / "k.cubin", log = dir / "log";
  std::ofstream(in) << ptx;
  const std::string cmd = ptxas + " -v -arch=" + arch_of(ptx, sm) + " -o " + out.string() + " " + in.string() +
                          " > " + log.string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::stringstream logtext;
  logtext << std::ifstream(log).rdbuf();
  if (rc != 0) {
    fs::remove_all(dir);
    throw Error("ptxas rejected the generated PTX (a kiln bug; please report it): " + logtext.str());
  }
  std::ifstream f(out, std::ios::binary);
  Cubin c;
  c.image.assign(std::istreambuf_iterator<char>(f), {});
  c.via = "ptxas";
  c.log = logtext.str();
  fs::remove_all(dir);
  return c;
}

/// The number before `what` in the assembler's log ("Used 12 registers").
int number_before(const std::string &log, const std::string &what) {
  const size_t at = log.find(what);
  if (at == std::string::npos)
    return -1;
  size_t b = at;
  while (b > 0 && log[b - 1] == ' ')
    --b;
  size_t e = b;
  while (b > 0 && std::isdigit(static_cast<unsigned char>(log[b - 1])))
    --b;
  return b == e ? -1 : std::stoi(log.substr(b, e - b));
}

Cubin with_resources(Cubin c) {
  c.registers = number_before(c.log, " registers");
  const int stores = number_before(c.log, " bytes spill stores"), loads = number_before(c.log, " bytes spill loads");
  if (stores >= 0 && loads >= 0)
    c.spill_bytes = stores + loads;
  else // newer nvJitLink: "... 0 bytes smem, 556 bytes cmem[0], 0 bytes lmem" (local memory, spills included)
    c.spill_bytes = number_before(c.log, " bytes lmem");
  return c;
}


/// The warm-up's completion, once one was started.
std::mutex warm_mutex;
std::shared_future<void> warm_done;

/// A compile waits for the warm-up rather than running beside it: on the
/// H200 machine a kernel compiled while the warm-up still ran paid ~30 ms
/// more (softmax: 28 ms in nvJitLink), one compiled after it 0.2 ms.
void wait_for_warm_up() {
  std::shared_future<void> f;
  {
    std::lock_guard<std::mutex> lock(warm_mutex);
    f = warm_done;
  }
  if (f.valid())
    f.wait();
}

/// ptxas needs a few MB more for a kernel of some hundred lines than for the
/// warm-up's, and the first touch of each fresh heap page is a page fault:
/// the first softmax compile of a process paid ~1,200 of them (~10 ms, on
/// the assembler thread's glibc arena) where the next paid ten. Touching
/// that memory once during the warm-up, on the thread that will assemble,
/// moves the cost off the first compile. Freeing one mmap-ed block first
/// raises glibc's mmap threshold to its size and the trim threshold to twice
/// that (glibc's documented dynamic thresholds), so ptxas's blocks of some MB
/// come from the arena and the freed pages stay with it: without that, every
/// compile re-faulted ~800 pages. The block must be at most 32 MiB
/// (DEFAULT_MMAP_THRESHOLD_MAX), or glibc leaves the thresholds alone.
constexpr size_t kAssemblerHeapBytes = size_t{16} << 20;

void touch_heap(size_t bytes) {
  if (auto *big = static_cast<volatile char *>(std::malloc(bytes))) {
    big[0] = 0;
    std::free(const_cast<char *>(big));
  }
  constexpr size_t kBlock = size_t{1} << 20;
  std::vector<volatile char *> blocks;
  for (size_t n = 0; n < bytes; n += kBlock) {
    auto *b = static_cast<volatile char *>(std::malloc(kBlock));
    if (!b)
      break;
    for (size_t i = 0; i < kBlock; i += 4096)
      b[i] = 0;
    blocks.push_back(b);
  }
  for (volatile char *b : blocks)
    std::free(const_cast<char *>(b));
}

} // namespace

std::optional<Cubin> ptx_to_cubin(const std::string &ptx, int sm, std::string *why) {
  wait_for_warm_up();
  if (const NvJitLink *a = load_nvjitlink()) {
    std::optional<Cubin> c;
    run_on_assembler_thread([&] { c = with_nvjitlink(*a, ptx, sm); });
    if (c)
      return with_resources(std::move(*c));
  }
  if (auto c = with_ptxas(ptx, sm))
    return with_resources(std::move(*c));
  if (why)
    *why = "neither libnvJitLink.so.13 nor ptxas is available";
  return std::nullopt;
}

void warm_up_nvjitlink(int sm) {
  static std::once_flag once;
  std::call_once(once, [sm] {
    std::promise<void> done;
    {
      std::lock_guard<std::mutex> lock(warm_mutex);
      warm_done = done.get_future().share();
    }
    // On an assembler thread, which stays: the compile that waits for this
    // warm-up then runs on a thread that has assembled before.
    auto shared_done = std::make_shared<std::promise<void>>(std::move(done));
    start_on_assembler_thread([sm, shared_done] {
      struct Signal {
        std::promise<void> &p;
        ~Signal() { p.set_value(); }
      } signal{*shared_done};
      const NvJitLink *a = load_nvjitlink();
      if (!a)
        return;
      // Not an empty kernel: on the H200 machine the first kernel that used
      // vector loads, shuffles, barriers, shared memory and approximate math
      // still paid ~40 ms after an empty warm-up had paid the ~200 ms of
      // initialization (softmax's compile: 54 ms, 41 of them nvJitLink).
      const std::string ptx =
          ".version 8.0\n.target sm_" + std::to_string(sm) + "\n.address_size 64\n" + R"(
.extern .shared .align 16 .b8 kiln_smem[];
.visible .entry kiln_warm(.param .u64 p0, .param .u32 p1)
{
	.reg .pred %p<3>;
	.reg .b32 %r<8>;
	.reg .f32 %f<12>;
	.reg .b64 %rd<6>;
	.reg .b16 %rs<2>;
	ld.param.u64 %rd1, [p0];
	ld.param.u32 %r1, [p1];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %ctaid.x;
	mul.wide.u32 %rd3, %r2, 16;
	add.s64 %rd4, %rd2, %rd3;
	setp.lt.s32 %p1, %r2, %r1;
	mov.f32 %f1, 0f00000000;
	mov.f32 %f2, 0f00000000;
	mov.f32 %f3, 0f00000000;
	mov.f32 %f4, 0f00000000;
	@%p1 ld.global.v4.b32 {%f1, %f2, %f3, %f4}, [%rd4];
	max.f32 %f5, %f1, %f2;
	mov.b32 %r4, %f5;
	shfl.sync.bfly.b32 %r5, %r4, 16, 31, -1;
	shfl.sync.up.b32 %r6, %r4, 1, 0, -1;
	mov.b32 %f6, %r5;
	bar.sync 0;
	st.shared.f32 [kiln_smem], %f6;
	bar.sync 0;
	ld.shared.v4.f32 {%f7, %f8, %f9, %f10}, [kiln_smem];
	sub.f32 %f7, %f3, %f7;
	ex2.approx.ftz.f32 %f7, %f7;
	lg2.approx.f32 %f8, %f8;
	abs.f32 %f9, %f9;
	setp.gt.f32 %p2, %f9, 0f7E800000;
	selp.f32 %f9, 0f3E800000, 0f3F800000, %p2;
	rcp.approx.ftz.f32 %f9, %f9;
	mul.f32 %f9, %f7, %f9;
	div.rn.f32 %f10, %f10, %f4;
	fma.rn.f32 %f11, %f9, %f8, %f10;
	cvt.rn.f16.f32 %rs1, %f11;
	cvt.f32.f16 %f11, %rs1;
	atom.global.add.u32 %r7, [%rd4], %r6;
	@%p1 st.global.v4.b32 [%rd4], {%f11, %f8, %f9, %f10};
	ret;
}
)";
      try {
        with_nvjitlink(*a, ptx, sm);
      } catch (const std::exception &) {
      }
      touch_heap(kAssemblerHeapBytes);
    });
  });
}

} // namespace kiln::nvptx
