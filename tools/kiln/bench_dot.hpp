// The dot section of `kiln bench` (cuda only; what the kiln_bench_dot program
// measured): tensor-core workloads of the shared kernels. matmul.py fp16 with
// fp32 accumulation at Triton's two reference tiles and more sizes,
// attention.py forward, and the cold compile of matmul.py (source to cubin,
// in a process that has compiled one kernel). Times are medians over rounds
// of back-to-back launches (matmul 7 rounds of 10, attention 5 of 5).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kiln::cli {

struct DotOptions {
  bool quick = false; ///< the first two matmul cases and one attention case only
  /// Where each case's inputs and output go as raw fp16 files (mm_<case>_a.bin,
  /// _b.bin, _c.bin; attn_<case>_q.bin, _k, _v, _o), for bench/dot_report.py
  /// to check against torch and to run Triton on; empty: none written.
  std::string data_dir;
};

/// {"matmul_cold_compile_ms", "matmul_compile_stages_ms": {stage: ms},
///  "matmul_registers", "matmul_spill_bytes",
///  "matmul": {CASE: {"tflops", "case": {"M", "N", "K", "BM", "BN", "BK",
///  "warps", "stages"}, "files"?}}, "attention": {CASE: {"tflops", "case":
///  {"Z", "H", "N", "D", "causal", "BM", "BN", "warps"}, "files"?}}}; "files"
/// is the path prefix of the case's raw files when data_dir is set.
nlohmann::ordered_json bench_dot(const std::string &shared, const DotOptions &options);

} // namespace kiln::cli
