#include "tools/kiln/bench_dot.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "kiln/buffer.hpp"
#include "kiln/error.hpp"
#include "kiln/grid.hpp"
#include "kiln/kernel.hpp"
#include "kiln/module.hpp"
#include "tools/kiln/bench_gpu.hpp"
#include "tools/kiln/bench_numbers.hpp"

namespace kiln::cli {

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;
const Device kGpu{Backend::cuda, 0};

/// fp16 values in [-1, 1) from a fixed LCG (bench/dot_report.py reads them
/// back from the data files, so the data itself need not be reproduced).
Buffer random_f16(int64_t n, uint32_t seed) {
  std::vector<uint16_t> h(static_cast<std::size_t>(n));
  uint32_t x = seed;
  for (int64_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    const float f = static_cast<float>(x >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
    // float -> half by hand (round to nearest even is not needed for data)
    uint32_t b;
    std::memcpy(&b, &f, 4);
    const uint32_t sign = (b >> 16) & 0x8000u;
    const int exp = static_cast<int>((b >> 23) & 0xff) - 127 + 15;
    h[static_cast<std::size_t>(i)] =
        exp <= 0 ? static_cast<uint16_t>(sign)
                 : static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp) << 10) |
                                         ((b >> 13) & 0x3ff));
  }
  Buffer buf = Buffer::allocate(kGpu, static_cast<std::size_t>(n) * 2);
  buf.copy_from_host(h.data(), static_cast<std::size_t>(n) * 2);
  return buf;
}

void dump(const Buffer &b, int64_t bytes, const std::string &path) {
  std::vector<char> h(static_cast<std::size_t>(bytes));
  b.copy_to_host(h.data(), h.size());
  std::ofstream f(path, std::ios::binary);
  f.write(h.data(), static_cast<std::streamsize>(h.size()));
  if (!f)
    throw RuntimeError("kiln bench dot: cannot write " + path + " (--data DIR)");
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

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

/// The cold compile of matmul.py at 128x128x32 (4096^3), after one kernel
/// warmed the process: what a new tensor-core kernel costs.
void cold_compile(const std::string &shared, Json &out) {
  const Module va = Module::from_file(shared + "/kernels/vector_add.py");
  va.kernel("add_kernel")
      .warmup_with(Arg::mock(DType::f32), Arg::mock(DType::f32), Arg::mock(DType::f32), 1 << 20,
                   arg("BLOCK", 1024));
  const auto t = Clock::now();
  const Module mm = Module::from_file(shared + "/kernels/matmul.py");
  const auto f16 = Arg::mock(DType::f16);
  const LaunchResult r =
      mm.kernel("matmul_kernel")
          .warmup_with(f16, f16, f16, 4096, 4096, 4096, 4096, 1, 4096, 1, 4096, 1, arg("BM", 128),
                       arg("BN", 128), arg("BK", 32), arg("num_warps", 4), arg("num_stages", 3));
  out["matmul_cold_compile_ms"] = rounded(ms_since(t), 2);
  Json stages = Json::object();
  for (const StageTime &x : r.kernel->times)
    stages[x.stage] = rounded(x.ms, 3);
  out["matmul_compile_stages_ms"] = stages;
  out["matmul_registers"] = r.kernel->registers;
  out["matmul_spill_bytes"] = r.kernel->spill_bytes;
}

} // namespace

Json bench_dot(const std::string &shared, const DotOptions &options) {
  Json out;
  cold_compile(shared, out);
  const bool dump_data = !options.data_dir.empty();
  if (dump_data)
    std::filesystem::create_directories(options.data_dir);

  const Module mm = Module::from_file(shared + "/kernels/matmul.py");
  const Kernel matmul = mm.kernel("matmul_kernel");
  std::vector<MatmulCase> mcs = {
      {"4096_128x128x32_w4", 4096, 4096, 4096, 128, 128, 32, 4, 3},
      {"4096_128x256x64_w8", 4096, 4096, 4096, 128, 256, 64, 8, 3},
      {"512_128x128x32_w4", 512, 512, 512, 128, 128, 32, 4, 3},
      {"1024_128x128x32_w4", 1024, 1024, 1024, 128, 128, 32, 4, 3},
      {"8192_128x256x64_w8", 8192, 8192, 8192, 128, 256, 64, 8, 3},
      {"4000x4100x3900_128x128x32_w4", 4000, 4100, 3900, 128, 128, 32, 4, 3}};
  if (options.quick)
    mcs.resize(2);
  Json mj = Json::object();
  for (const MatmulCase &c : mcs) {
    Buffer a = random_f16(c.M * c.K, 1), b = random_f16(c.K * c.N, 2),
           o = Buffer::allocate(kGpu, static_cast<std::size_t>(c.M * c.N * 2));
    const Grid g{static_cast<uint32_t>(cdiv(c.M, c.BM)), static_cast<uint32_t>(cdiv(c.N, c.BN))};
    const auto launch = [&] {
      matmul[g](a.tensor(DType::f16), b.tensor(DType::f16), o.tensor(DType::f16), c.M, c.N, c.K,
                c.K, 1, c.N, 1, c.N, 1, arg("BM", c.BM), arg("BN", c.BN), arg("BK", c.BK),
                arg("num_warps", c.warps), arg("num_stages", c.stages));
    };
    const double s = time_launches(launch);
    Json j = {{"tflops", rounded(2.0 * double(c.M) * double(c.N) * double(c.K) / s / 1e12, 2)},
              {"case",
               {{"M", c.M},
                {"N", c.N},
                {"K", c.K},
                {"BM", c.BM},
                {"BN", c.BN},
                {"BK", c.BK},
                {"warps", c.warps},
                {"stages", c.stages}}}};
    if (dump_data) {
      const std::string base = options.data_dir + "/mm_" + c.name;
      dump(a, c.M * c.K * 2, base + "_a.bin");
      dump(b, c.K * c.N * 2, base + "_b.bin");
      dump(o, c.M * c.N * 2, base + "_c.bin");
      j["files"] = base;
    }
    mj[c.name] = std::move(j);
  }
  out["matmul"] = std::move(mj);

  const Module at = Module::from_file(shared + "/kernels/attention.py");
  const Kernel attn = at.kernel("attn_fwd");
  std::vector<AttnCase> acs = {{"d64", 4, 32, 4096, 64, false, 128, 64, 8},
                               {"d64_causal", 4, 32, 4096, 64, true, 128, 64, 8},
                               {"d128", 4, 32, 4096, 128, false, 128, 64, 8},
                               {"d128_causal", 4, 32, 4096, 128, true, 128, 64, 8}};
  if (options.quick)
    acs.resize(1);
  Json aj = Json::object();
  for (const AttnCase &c : acs) {
    const int64_t n = c.Z * c.H * c.N * c.D;
    Buffer q = random_f16(n, 3), k = random_f16(n, 4), v = random_f16(n, 5),
           o = Buffer::allocate(kGpu, static_cast<std::size_t>(n * 2));
    const Grid g{static_cast<uint32_t>(cdiv(c.N, c.BM)), static_cast<uint32_t>(c.Z * c.H)};
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.D));
    const auto launch = [&] {
      attn[g](q.tensor(DType::f16), k.tensor(DType::f16), v.tensor(DType::f16),
              o.tensor(DType::f16), scale, static_cast<int32_t>(c.N), arg("HEAD_DIM", c.D),
              arg("BLOCK_M", c.BM), arg("BLOCK_N", c.BN), arg("CAUSAL", c.causal),
              arg("num_warps", c.warps));
    };
    const double s = time_launches(launch, 5, 5);
    const double flops =
        4.0 * double(c.Z * c.H) * double(c.N) * double(c.N) * double(c.D) * (c.causal ? 0.5 : 1.0);
    Json j = {{"tflops", rounded(flops / s / 1e12, 2)},
              {"case",
               {{"Z", c.Z},
                {"H", c.H},
                {"N", c.N},
                {"D", c.D},
                {"causal", c.causal},
                {"BM", c.BM},
                {"BN", c.BN},
                {"warps", c.warps}}}};
    if (dump_data) {
      const std::string base = options.data_dir + "/attn_" + c.name;
      for (const auto &[buf, tag] : {std::pair{&q, "q"}, {&k, "k"}, {&v, "v"}, {&o, "o"}})
        dump(*buf, n * 2, base + "_" + tag + ".bin");
      j["files"] = base;
    }
    aj[c.name] = std::move(j);
  }
  out["attention"] = std::move(aj);
  return out;
}

} // namespace kiln::cli
