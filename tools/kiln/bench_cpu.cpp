// Compiled -O3 whatever the build type (tools/CMakeLists.txt): the C++
// reference loop is the anchor, so it must be as fast as the compiler makes it.
#include "tools/kiln/bench_cpu.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <ostream>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "kiln/error.hpp"
#include "kiln/grid.hpp"
#include "kiln/kernel.hpp"
#include "kiln/module.hpp"
#include "tools/kiln/bench_numbers.hpp"

namespace kiln::cli {

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

/// An uninitialised array of T aligned to a page, so every kernel pointer
/// specializes as 16-divisible and no vector load straddles a cache line.
template <class T> class AlignedArray {
public:
  explicit AlignedArray(std::size_t n)
      : p_(static_cast<T *>(std::aligned_alloc(kAlign, round_up(n * sizeof(T))))) {
    if (!p_)
      throw std::bad_alloc();
  }
  T *data() const { return p_.get(); }
  T &operator[](std::size_t i) const { return p_[i]; }

private:
  static constexpr std::size_t kAlign = 4096;
  static std::size_t round_up(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }
  struct Free {
    void operator()(T *p) const { std::free(p); }
  };
  std::unique_ptr<T[], Free> p_;
};

/// Runs `fn` once untimed (it pays the compile, the page faults and the
/// cold caches), then `runs` times, and returns `work` / seconds for each
/// timed run: a rate, so the median is of rates.
Summary rate(int runs, double work, const std::function<void()> &fn) {
  fn();
  std::vector<double> rates;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    fn();
    rates.push_back(work / std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return summarize(rates);
}

/// Applies `fn(begin, end)` to [0, n) on all cores, in chunks of `grain`.
void split(std::size_t n, std::size_t grain,
           const std::function<void(std::size_t, std::size_t)> &fn) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, grain),
                    [&](const tbb::blocked_range<std::size_t> &r) { fn(r.begin(), r.end()); });
}

[[noreturn]] void fail(const std::string &what) {
  throw RuntimeError("kiln bench throughput: " + what);
}

void bench_vector_add(const Module &module, CpuThroughputFigures &f) {
  const Kernel add = module.kernel("add_kernel");
  const std::size_t n_elems = f.add_n;
  AlignedArray<float> x(n_elems), y(n_elems), out(n_elems);
  // Written in parallel: page faults of 768 MB on one thread take a while.
  split(n_elems, 1 << 16, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      x[i] = static_cast<float>(i % 1021) * 0.5f;
      y[i] = static_cast<float>(i % 509) * -0.25f;
      out[i] = 0;
    }
  });

  const auto n = static_cast<int32_t>(n_elems);
  for (std::size_t b = 0; b < f.blocks.size(); ++b) {
    const int block = f.blocks[b];
    const Grid grid(static_cast<uint32_t>(cdiv(n, block)));
    const auto launch = [&] { add[grid](x.data(), y.data(), out.data(), n, arg("BLOCK", block)); };
    launch(); // compiles; then check the result once
    for (std::size_t i = 0; i < n_elems; ++i)
      if (out[i] != x[i] + y[i])
        fail("add_kernel BLOCK=" + std::to_string(block) + ": out[" + std::to_string(i) + "] is " +
             std::to_string(out[i]) + ", not " + std::to_string(x[i] + y[i]));
    f.add_gbps.push_back(rate(f.runs, 12.0 * static_cast<double>(n_elems) / 1e9, launch));
    if (f.add_gbps[b].median > f.add_gbps[f.best].median)
      f.best = b;
  }

  const std::size_t bytes = f.copy_bytes;
  AlignedArray<char> src(bytes), dst(bytes);
  std::memset(src.data(), 1, bytes);
  std::memset(dst.data(), 0, bytes);
  const double copied = 2.0 * static_cast<double>(bytes) / 1e9; // read + write
  f.memcpy_gbps = rate(f.runs, copied, [&] { std::memcpy(dst.data(), src.data(), bytes); });
  if (std::memcmp(dst.data(), src.data(), bytes) != 0)
    fail("memcpy did not copy");
  f.memcpy_gbps_all = rate(f.runs, copied, [&] {
    split(bytes, std::size_t{1} << 22, [&](std::size_t b, std::size_t e) {
      std::memcpy(dst.data() + b, src.data() + b, e - b);
    });
  });
}

/// The reference: a numerically stable softmax of one row, written plainly.
/// Without -ffast-math GCC vectorizes neither std::exp nor the float sum
/// (it may not reassociate), which is what a plain loop gets.
void softmax_row(const float *in, float *out, int n) {
  float m = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < n; ++i)
    m = std::max(m, in[i]);
  float sum = 0;
  for (int i = 0; i < n; ++i) {
    out[i] = std::exp(in[i] - m);
    sum += out[i];
  }
  for (int i = 0; i < n; ++i)
    out[i] /= sum;
}

void bench_softmax(const Module &module, CpuThroughputFigures &f) {
  const Kernel softmax = module.kernel("softmax_kernel");
  const int rows = f.rows, cols = f.cols;
  const std::size_t n = std::size_t(rows) * std::size_t(cols);
  AlignedArray<float> in(n), out(n), ref(n);
  uint32_t state = 12345; // a fixed LCG: the same inputs every run, in [-8, 8)
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    in[i] = static_cast<float>(state >> 8) / static_cast<float>(1 << 24) * 16.0f - 8.0f;
  }

  const auto launch = [&] {
    softmax[Grid(static_cast<uint32_t>(rows))](out.data(), in.data(), cols, cols, cols,
                                               arg("BLOCK", cols));
  };
  const auto reference = [&] {
    for (std::size_t r = 0; r < std::size_t(rows); ++r)
      softmax_row(in.data() + r * cols, ref.data() + r * cols, cols);
  };
  launch();
  reference();
  for (std::size_t i = 0; i < n; ++i)
    f.max_abs_diff = std::max(f.max_abs_diff, static_cast<double>(std::fabs(out[i] - ref[i])));
  if (!(f.max_abs_diff <= 1e-5)) // also catches NaN
    fail("softmax_kernel differs from the C++ loop by " + std::to_string(f.max_abs_diff));

  f.kiln_rows = rate(f.runs, rows, launch);
  f.reference_rows = rate(f.runs, rows, reference);
  f.reference_rows_all = rate(f.runs, rows, [&] {
    split(std::size_t(rows), 16, [&](std::size_t b, std::size_t e) {
      for (std::size_t r = b; r < e; ++r)
        softmax_row(in.data() + r * cols, ref.data() + r * cols, cols);
    });
  });
}

void print_row(std::ostream &out, const char *what, const Summary &s, int decimals,
               const char *unit, const std::string &note = {}) {
  char line[256];
  std::snprintf(line, sizeof line, "  %-36s %12s %-6s (%s-%s)  %s\n", what,
                fixed(s.median, decimals).c_str(), unit, fixed(s.min, decimals).c_str(),
                fixed(s.max, decimals).c_str(), note.c_str());
  out << line;
}

std::string power_of_two(std::size_t n) {
  int log = 0;
  while ((std::size_t{1} << log) < n)
    ++log;
  return (std::size_t{1} << log) == n ? "2^" + std::to_string(log) : std::to_string(n);
}

} // namespace

CpuThroughputFigures bench_cpu_throughput(const std::string &shared, bool quick) {
  CpuThroughputFigures f;
  f.runs = quick ? 5 : 7;
  f.add_n = std::size_t{1} << (quick ? 22 : 26);
  f.copy_bytes = std::size_t{1} << (quick ? 24 : 28);
  f.blocks = {1024, 4096};
  f.rows = quick ? 512 : 4096;
  f.cols = 1024;
  const Module vector_add = Module::from_file(shared + "/kernels/vector_add.py");
  const Module softmax = Module::from_file(shared + "/kernels/softmax.py");
  bench_vector_add(vector_add, f);
  bench_softmax(softmax, f);
  return f;
}

Json cpu_throughput_json(const CpuThroughputFigures &f) {
  Json gbps = Json::object(), gbps_spread = Json::object();
  for (std::size_t i = 0; i < f.blocks.size(); ++i) {
    gbps[std::to_string(f.blocks[i])] = rounded(f.add_gbps[i].median, 2);
    gbps_spread[std::to_string(f.blocks[i])] = spread_json(f.add_gbps[i], 2);
  }
  const double best = f.add_gbps[f.best].median;
  Json j;
  j["runs"] = f.runs;
  j["vector_add"] = {{"n", f.add_n},
                     {"bytes_per_element", 12},
                     {"gbps_by_block", gbps},
                     {"best_block", f.blocks[f.best]},
                     {"gbps", rounded(best, 2)},
                     {"memcpy_gbps", rounded(f.memcpy_gbps.median, 2)},
                     {"memcpy_gbps_all_threads", rounded(f.memcpy_gbps_all.median, 2)},
                     {"fraction", rounded(best / f.memcpy_gbps.median, 3)},
                     {"fraction_all_threads", rounded(best / f.memcpy_gbps_all.median, 3)},
                     {"spread",
                      {{"gbps_by_block", gbps_spread},
                       {"memcpy_gbps", spread_json(f.memcpy_gbps, 2)},
                       {"memcpy_gbps_all_threads", spread_json(f.memcpy_gbps_all, 2)}}}};
  j["softmax"] = {
      {"rows", f.rows},
      {"cols", f.cols},
      {"rows_per_s", rounded(f.kiln_rows.median, 0)},
      {"reference_rows_per_s", rounded(f.reference_rows.median, 0)},
      {"reference_rows_per_s_all_threads", rounded(f.reference_rows_all.median, 0)},
      {"fraction", rounded(f.kiln_rows.median / f.reference_rows.median, 3)},
      {"fraction_all_threads", rounded(f.kiln_rows.median / f.reference_rows_all.median, 3)},
      {"max_abs_diff", f.max_abs_diff},
      {"spread",
       {{"rows_per_s", spread_json(f.kiln_rows, 0)},
        {"reference_rows_per_s", spread_json(f.reference_rows, 0)},
        {"reference_rows_per_s_all_threads", spread_json(f.reference_rows_all, 0)}}}};
  return j;
}

void print_cpu_throughput(const CpuThroughputFigures &f, std::ostream &out) {
  out << "throughput  cpu, median (min-max) of " << f.runs << " runs after a warmup run\n"
      << "vector add  n = " << power_of_two(f.add_n) << " fp32, 12 bytes/element\n";
  for (std::size_t i = 0; i < f.blocks.size(); ++i) {
    const std::string what = "kiln add_kernel BLOCK=" + std::to_string(f.blocks[i]);
    print_row(out, what.c_str(), f.add_gbps[i], 2, "GB/s", i == f.best ? "<- best" : "");
  }
  const std::string copy = "memcpy " + power_of_two(f.copy_bytes) + " B";
  print_row(out, (copy + ", 1 thread").c_str(), f.memcpy_gbps, 2, "GB/s", "(read + write)");
  print_row(out, (copy + ", all threads").c_str(), f.memcpy_gbps_all, 2, "GB/s");
  const double best = f.add_gbps[f.best].median;
  out << "  fraction of memcpy: " << fixed(best / f.memcpy_gbps.median, 2)
      << " (aim >= 0.70); of all-thread memcpy: " << fixed(best / f.memcpy_gbps_all.median, 2)
      << "\n\n";

  out << "softmax  " << f.rows << " x " << f.cols << " fp32, BLOCK=" << f.cols << '\n';
  print_row(out, "kiln softmax_kernel (all threads)", f.kiln_rows, 0, "rows/s");
  print_row(out, "C++ loop, 1 thread", f.reference_rows, 0, "rows/s");
  print_row(out, "C++ loop, all threads", f.reference_rows_all, 0, "rows/s");
  out << "  fraction of the loop: " << fixed(f.kiln_rows.median / f.reference_rows.median, 2)
      << " (aim >= 0.80); of the all-thread loop: "
      << fixed(f.kiln_rows.median / f.reference_rows_all.median, 2) << '\n';
  char diff[64];
  std::snprintf(diff, sizeof diff, "  max |kiln - loop| = %.2g\n\n", f.max_abs_diff);
  out << diff;
}

} // namespace kiln::cli
