// The throughput section of `kiln bench` on the cpu backend: how fast the
// code the CPU backend generates runs, against anchors measured in the same
// run on the same machine (what the kiln_bench_cpu program measured):
//
//   vector add  add_kernel, n = 2^26 fp32, at BLOCK 1024 and 4096, in GB/s
//               counting 12 bytes per element, against std::memcpy of 2^28
//               bytes counting 2 bytes per byte copied. Aim: >= 0.7 of memcpy.
//   softmax     softmax_kernel, 4096 rows x 1024 fp32, BLOCK 1024, in rows/s
//               against a plain C++ loop per row compiled -O3 into kiln.
//               Aim: >= 0.8 of the loop.
//
// kiln's CPU driver runs a launch's programs on all cores, while the anchors
// the aims are set against are one thread each; so the anchors are also
// measured on all cores and reported beside them. Every figure is the median
// of 7 timed runs (5 with --quick) after one untimed run; results are checked
// once against the reference before timing. --quick shrinks the sizes
// (2^22 elements, a 2^24-byte copy, 512 rows), so its figures measure the
// caches more than memory and are for smoke runs only.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/kiln/summary.hpp"

namespace kiln::cli {

struct CpuThroughputFigures {
  int runs = 0;
  // vector add against memcpy
  std::size_t add_n = 0, copy_bytes = 0;
  std::vector<int> blocks;       ///< the BLOCK values tried
  std::vector<Summary> add_gbps; ///< kiln, one per entry of `blocks`
  std::size_t best = 0;          ///< index into `blocks` of the higher median
  Summary memcpy_gbps, memcpy_gbps_all;
  // softmax against a C++ loop
  int rows = 0, cols = 0;
  Summary kiln_rows, reference_rows, reference_rows_all;
  double max_abs_diff = 0;
};

/// Runs the section with the kernels of `<shared>/kernels`; the process's
/// backend must be cpu (the pointers are host memory). Throws RuntimeError
/// when kiln's result differs from the reference.
CpuThroughputFigures bench_cpu_throughput(const std::string &shared, bool quick);

/// {"runs", "vector_add": {...}, "softmax": {...}}, medians rounded, spreads
/// under "spread" (the keys `kiln help bench` lists).
nlohmann::ordered_json cpu_throughput_json(const CpuThroughputFigures &f);

/// The human report of the section.
void print_cpu_throughput(const CpuThroughputFigures &f, std::ostream &out);

} // namespace kiln::cli
