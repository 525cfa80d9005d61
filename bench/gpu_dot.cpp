// Tensor-core workloads of kiln on the device it finds (issue 11): matmul.py
// fp16 -> fp32 accumulate at Triton's two reference tiles and more sizes,
// attention.py forward, and the cold compile of matmul.py (source to cubin,
// in a process that has compiled one kernel). Times are medians over rounds
// of back-to-back launches. Writes every input and output as raw files
// under --out so that bench/dot_report.py checks them against torch and
// runs Triton 3.x on the same data in the same device call.
//
//   kiln_bench_dot [--shared DIR] [--out DIR] [--quick]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/kiln.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

const kiln::Device kGpu{kiln::Backend::cuda, 0};

/// Median seconds of one launch, over rounds of `per_round` launches.
template <class F> double time_launches(F &&launch, int rounds = 7, int per_round = 10) {
  launch();
  kiln::synchronize(kGpu);
  std::vector<double> t;
  for (int r = 0; r < rounds; ++r) {
    const auto s = Clock::now();
    for (int i = 0; i < per_round; ++i)
      launch();
    kiln::synchronize(kGpu);
    t.push_back(ms_since(s) / 1000 / per_round);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// fp16 values in [-1, 1) from a fixed LCG (the report reads them back).
kiln::Buffer random_f16(int64_t n, uint32_t seed) {
  std::vector<uint16_t> h(n);
  uint32_t x = seed;
  for (int64_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    const float f = static_cast<float>(x >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
    // float -> half by hand (round to nearest even is not needed for data)
    uint32_t b;
    std::memcpy(&b, &f, 4);
    const uint32_t sign = (b >> 16) & 0x8000u;
    const int exp = static_cast<int>((b >> 23) & 0xff) - 127 + 15;
    h[i] = exp <= 0 ? static_cast<uint16_t>(sign)
                    : static_cast<uint16_t>(sign | (exp << 10) | ((b >> 13) & 0x3ff));
  }
  kiln::Buffer buf = kiln::Buffer::allocate(kGpu, n * 2);
  buf.copy_from_host(h.data(), n * 2);
  return buf;
}

void dump(const kiln::Buffer &b, int64_t bytes, const std::string &path) {
  std::vector<char> h(bytes);
  b.copy_to_host(h.data(), bytes);
  std::ofstream(path, std::ios::binary).write(h.data(), bytes);
}

struct MatmulCase {
  const char *name;
  int64_t M, N, K;
  int BM, BN, BK, warps, stages;
};

struct AttnCase {
  const char *name;
  int64_t Z, H, N, D;
  bool causal;
  int BM, BN, warps;
};

} // namespace

int main(int argc, char **argv) {
  std::string shared = KILN_SHARED_DIR, out_dir = "/tmp/kiln_dot";
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--shared") && i + 1 < argc)
      shared = argv[++i];
    else if (!std::strcmp(argv[i], "--out") && i + 1 < argc)
      out_dir = argv[++i];
    else if (!std::strcmp(argv[i], "--quick"))
      quick = true;
  }
  nlohmann::json out;
  try {
    setenv("KILN_BACKEND", "cuda", 1);
    // ---- cold compile of matmul.py, after one kernel warmed the process ----
    kiln::Module va = kiln::Module::from_file(shared + "/kernels/vector_add.py");
    va.kernel("add_kernel").warmup_with(kiln::Arg::mock(kiln::DType::f32), kiln::Arg::mock(kiln::DType::f32),
                                        kiln::Arg::mock(kiln::DType::f32), 1 << 20, kiln::arg("BLOCK", 1024));
    {
      const auto t = Clock::now();
      kiln::Module mm = kiln::Module::from_file(shared + "/kernels/matmul.py");
      const auto f16 = kiln::Arg::mock(kiln::DType::f16);
      kiln::LaunchResult r = mm.kernel("matmul_kernel")
                                 .warmup_with(f16, f16, f16, 4096, 4096, 4096, 4096, 1, 4096, 1, 4096, 1,
                                              kiln::arg("BM", 128), kiln::arg("BN", 128), kiln::arg("BK", 32),
                                              kiln::arg("num_warps", 4), kiln::arg("num_stages", 3));
      out["matmul_cold_compile_ms"] = ms_since(t);
      nlohmann::json st;
      for (const auto &x : r.kernel->times)
        st[x.stage] = x.ms;
      out["matmul_compile_stages_ms"] = st;
      out["matmul_registers"] = r.kernel->registers;
      out["matmul_spill_bytes"] = r.kernel->spill_bytes;
    }
    kiln::Module mm = kiln::Module::from_file(shared + "/kernels/matmul.py");
    kiln::Kernel matmul = mm.kernel("matmul_kernel");
    std::vector<MatmulCase> mcs = {{"4096_128x128x32_w4", 4096, 4096, 4096, 128, 128, 32, 4, 3},
                                   {"4096_128x256x64_w8", 4096, 4096, 4096, 128, 256, 64, 8, 3},
                                   {"512_128x128x32_w4", 512, 512, 512, 128, 128, 32, 4, 3},
                                   {"1024_128x128x32_w4", 1024, 1024, 1024, 128, 128, 32, 4, 3},
                                   {"8192_128x256x64_w8", 8192, 8192, 8192, 128, 256, 64, 8, 3},
                                   {"4000x4100x3900_128x128x32_w4", 4000, 4100, 3900, 128, 128, 32, 4, 3}};
    if (quick)
      mcs.resize(2);
    nlohmann::json mj = nlohmann::json::array();
    for (const MatmulCase &c : mcs) {
      kiln::Buffer a = random_f16(c.M * c.K, 1), b = random_f16(c.K * c.N, 2),
                   o = kiln::Buffer::allocate(kGpu, c.M * c.N * 2);
      const kiln::Grid g{static_cast<uint32_t>(kiln::cdiv(c.M, c.BM)), static_cast<uint32_t>(kiln::cdiv(c.N, c.BN))};
      auto launch = [&] {
        matmul[g](a.tensor(kiln::DType::f16), b.tensor(kiln::DType::f16), o.tensor(kiln::DType::f16), c.M, c.N, c.K,
                  c.K, 1, c.N, 1, c.N, 1, kiln::arg("BM", c.BM), kiln::arg("BN", c.BN), kiln::arg("BK", c.BK),
                  kiln::arg("num_warps", c.warps), kiln::arg("num_stages", c.stages));
      };
      const double s = time_launches(launch);
      const std::string base = out_dir + "/mm_" + c.name;
      dump(a, c.M * c.K * 2, base + "_a.bin");
      dump(b, c.K * c.N * 2, base + "_b.bin");
      dump(o, c.M * c.N * 2, base + "_c.bin");
      mj.push_back({{"name", c.name}, {"M", c.M}, {"N", c.N}, {"K", c.K}, {"BM", c.BM}, {"BN", c.BN},
                    {"BK", c.BK}, {"warps", c.warps}, {"stages", c.stages}, {"files", base},
                    {"tflops", 2.0 * c.M * c.N * c.K / s / 1e12}});
    }
    out["matmul"] = mj;
    kiln::Module at = kiln::Module::from_file(shared + "/kernels/attention.py");
    kiln::Kernel attn = at.kernel("attn_fwd");
    std::vector<AttnCase> acs = {{"d64", 4, 32, 4096, 64, false, 128, 64, 8},
                                 {"d64_causal", 4, 32, 4096, 64, true, 128, 64, 8},
                                 {"d128", 4, 32, 4096, 128, false, 128, 64, 8},
                                 {"d128_causal", 4, 32, 4096, 128, true, 128, 64, 8}};
    if (quick)
      acs.resize(1);
    nlohmann::json aj = nlohmann::json::array();
    for (const AttnCase &c : acs) {
      const int64_t n = c.Z * c.H * c.N * c.D;
      kiln::Buffer q = random_f16(n, 3), k = random_f16(n, 4), v = random_f16(n, 5),
                   o = kiln::Buffer::allocate(kGpu, n * 2);
      const kiln::Grid g{static_cast<uint32_t>(kiln::cdiv(c.N, c.BM)), static_cast<uint32_t>(c.Z * c.H)};
      const float scale = 1.0f / std::sqrt(static_cast<float>(c.D));
      auto launch = [&] {
        attn[g](q.tensor(kiln::DType::f16), k.tensor(kiln::DType::f16), v.tensor(kiln::DType::f16),
                o.tensor(kiln::DType::f16), scale, static_cast<int32_t>(c.N), kiln::arg("HEAD_DIM", c.D),
                kiln::arg("BLOCK_M", c.BM), kiln::arg("BLOCK_N", c.BN), kiln::arg("CAUSAL", c.causal),
                kiln::arg("num_warps", c.warps));
      };
      const double s = time_launches(launch, 5, 5);
      const std::string base = out_dir + "/attn_" + c.name;
      for (auto [buf, tag] : {std::pair{&q, "q"}, {&k, "k"}, {&v, "v"}, {&o, "o"}})
        dump(*buf, n * 2, base + "_" + tag + ".bin");
      const double flops = 4.0 * c.Z * c.H * c.N * c.N * c.D * (c.causal ? 0.5 : 1.0);
      aj.push_back({{"name", c.name}, {"Z", c.Z}, {"H", c.H}, {"N", c.N}, {"D", c.D}, {"causal", c.causal},
                    {"BM", c.BM}, {"BN", c.BN}, {"warps", c.warps}, {"files", base}, {"tflops", flops / s / 1e12}});
    }
    out["attention"] = aj;
  } catch (const std::exception &e) {
    out["error"] = e.what(); // bench/dot_report.py prints it
  }
  std::printf("%s\n", out.dump(2).c_str());
  return out.contains("error") ? 1 : 0;
}
