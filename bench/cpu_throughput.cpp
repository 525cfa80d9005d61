// kiln_bench_cpu: how fast is the code the CPU backend generates? Two
// kernels against anchors measured in the same run on the same machine:
//
//   (a) vector add (add_kernel), n = 2^26 fp32, at BLOCK 1024 and 4096, in
//       GB/s counting 12 bytes per element (two loads, one store), against
//       std::memcpy of a 2^28-byte buffer counting 2 bytes per byte copied
//       (one read, one write). Aim: >= 0.7 of memcpy.
//   (b) softmax (softmax_kernel), 4096 rows x 1024 fp32, BLOCK 1024, in
//       rows/s against a plain C++ loop per row (max, exp, sum, divide)
//       compiled -O3 into this binary. Aim: >= 0.8 of the loop.
//
// kiln's CPU driver runs a launch's programs on all cores (a
// tbb::parallel_for over the grid), while the anchors the aims are set
// against are one thread each; so both are also measured on all cores
// (the same code split across the TBB pool) and reported beside them.
//
// Every figure is the median of --runs timed runs (default 7, at least 5)
// after one untimed warmup run; results are checked once against the
// reference before timing.
//
//   build/bench/kiln_bench_cpu [--json] [--runs N] [--shared DIR]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>

#include <kiln/kiln.hpp>

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

/// An uninitialised array of T aligned to a page, so every kernel pointer
/// specializes as 16-divisible and no vector load straddles a cache line.
template <class T> class Buffer {
public:
  explicit Buffer(std::size_t n)
      : n_(n), p_(static_cast<T *>(std::aligned_alloc(kAlign, round_up(n * sizeof(T))))) {
    if (!p_)
      throw std::bad_alloc();
  }
  T *data() const { return p_.get(); }
  std::size_t size() const { return n_; }
  T &operator[](std::size_t i) const { return p_[i]; }

private:
  static constexpr std::size_t kAlign = 4096;
  static std::size_t round_up(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }
  struct Free {
    void operator()(T *p) const { std::free(p); }
  };
  std::size_t n_;
  std::unique_ptr<T[], Free> p_;
};

/// The median of a sample and its extremes.
struct Summary {
  double median = 0, min = 0, max = 0;
};

Summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return {v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2, v.front(), v.back()};
}

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
  std::fprintf(stderr, "error: %s\n", what.c_str());
  std::exit(1);
}

// ---- (a) vector add against memcpy ----------------------------------------------

constexpr std::size_t kAddN = std::size_t{1} << 26;
constexpr std::size_t kCopyBytes = std::size_t{1} << 28;
constexpr int kBlocks[] = {1024, 4096};

struct VectorAddFigures {
  Summary gbps[std::size(kBlocks)]; ///< kiln, per BLOCK
  int best = 0;                     ///< index into kBlocks of the higher median
  Summary memcpy_gbps, memcpy_gbps_all;
};

VectorAddFigures bench_vector_add(const kiln::Module &module, int runs) {
  VectorAddFigures f;
  const kiln::Kernel add = module.kernel("add_kernel");
  Buffer<float> x(kAddN), y(kAddN), out(kAddN);
  // Written in parallel: page faults of 768 MB on one thread take a while.
  split(kAddN, 1 << 16, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      x[i] = static_cast<float>(i % 1021) * 0.5f;
      y[i] = static_cast<float>(i % 509) * -0.25f;
      out[i] = 0;
    }
  });

  const auto n = static_cast<int32_t>(kAddN);
  for (std::size_t b = 0; b < std::size(kBlocks); ++b) {
    const int block = kBlocks[b];
    const kiln::Grid grid(static_cast<uint32_t>(kiln::cdiv(n, block)));
    const auto launch = [&] {
      add[grid](x.data(), y.data(), out.data(), n, kiln::arg("BLOCK", block));
    };
    launch(); // compiles; then check the result once
    for (std::size_t i = 0; i < kAddN; ++i)
      if (out[i] != x[i] + y[i])
        fail("add_kernel BLOCK=" + std::to_string(block) + ": out[" + std::to_string(i) + "] is " +
             std::to_string(out[i]) + ", not " + std::to_string(x[i] + y[i]));
    f.gbps[b] = rate(runs, 12.0 * kAddN / 1e9, launch);
    if (f.gbps[b].median > f.gbps[f.best].median)
      f.best = static_cast<int>(b);
  }

  Buffer<char> src(kCopyBytes), dst(kCopyBytes);
  std::memset(src.data(), 1, kCopyBytes);
  std::memset(dst.data(), 0, kCopyBytes);
  const double copied = 2.0 * kCopyBytes / 1e9; // read + write
  f.memcpy_gbps = rate(runs, copied, [&] { std::memcpy(dst.data(), src.data(), kCopyBytes); });
  if (std::memcmp(dst.data(), src.data(), kCopyBytes) != 0)
    fail("memcpy did not copy");
  f.memcpy_gbps_all = rate(runs, copied, [&] {
    split(kCopyBytes, std::size_t{1} << 22, [&](std::size_t b, std::size_t e) {
      std::memcpy(dst.data() + b, src.data() + b, e - b);
    });
  });
  return f;
}

// ---- (b) softmax against a C++ loop ----------------------------------------------

constexpr int kRows = 4096, kCols = 1024;

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

struct SoftmaxFigures {
  Summary kiln_rows, reference_rows, reference_rows_all;
  double max_abs_diff = 0;
};

SoftmaxFigures bench_softmax(const kiln::Module &module, int runs) {
  SoftmaxFigures f;
  const kiln::Kernel softmax = module.kernel("softmax_kernel");
  const std::size_t n = std::size_t{kRows} * kCols;
  Buffer<float> in(n), out(n), ref(n);
  uint32_t state = 12345; // a fixed LCG: the same inputs every run, in [-8, 8)
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    in[i] = static_cast<float>(state >> 8) / static_cast<float>(1 << 24) * 16.0f - 8.0f;
  }

  const auto launch = [&] {
    softmax[kiln::Grid(kRows)](out.data(), in.data(), kCols, kCols, kCols,
                               kiln::arg("BLOCK", kCols));
  };
  const auto reference = [&] {
    for (std::size_t r = 0; r < kRows; ++r)
      softmax_row(in.data() + r * kCols, ref.data() + r * kCols, kCols);
  };
  launch();
  reference();
  for (std::size_t i = 0; i < n; ++i)
    f.max_abs_diff = std::max(f.max_abs_diff, static_cast<double>(std::fabs(out[i] - ref[i])));
  if (!(f.max_abs_diff <= 1e-5)) // also catches NaN
    fail("softmax_kernel differs from the C++ loop by " + std::to_string(f.max_abs_diff));

  f.kiln_rows = rate(runs, kRows, launch);
  f.reference_rows = rate(runs, kRows, reference);
  f.reference_rows_all = rate(runs, kRows, [&] {
    split(kRows, 16, [&](std::size_t b, std::size_t e) {
      for (std::size_t r = b; r < e; ++r)
        softmax_row(in.data() + r * kCols, ref.data() + r * kCols, kCols);
    });
  });
  return f;
}

// ---- report ------------------------------------------------------------------------

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

double rounded(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

Json spread(const Summary &s, int decimals) {
  return Json::array({rounded(s.min, decimals), rounded(s.max, decimals)});
}

void print_row(const char *what, const Summary &s, int decimals, const char *unit,
               const std::string &note = {}) {
  std::printf("  %-36s %12s %-6s (%s-%s)  %s\n", what, fixed(s.median, decimals).c_str(), unit,
              fixed(s.min, decimals).c_str(), fixed(s.max, decimals).c_str(), note.c_str());
}

void print_human(const VectorAddFigures &a, const SoftmaxFigures &b, int cpus, int runs) {
  std::printf("kiln_bench_cpu  %d cpus, median (min-max) of %d runs after a warmup run\n\n", cpus,
              runs);
  std::printf("vector add  n = 2^26 fp32, 12 bytes/element\n");
  for (std::size_t i = 0; i < std::size(kBlocks); ++i) {
    const std::string what = "kiln add_kernel BLOCK=" + std::to_string(kBlocks[i]);
    print_row(what.c_str(), a.gbps[i], 2, "GB/s", static_cast<int>(i) == a.best ? "<- best" : "");
  }
  print_row("memcpy 2^28 B, 1 thread", a.memcpy_gbps, 2, "GB/s", "(read + write)");
  print_row("memcpy 2^28 B, all threads", a.memcpy_gbps_all, 2, "GB/s");
  const double best = a.gbps[a.best].median;
  std::printf("  fraction of memcpy: %.2f (aim >= 0.70); of all-thread memcpy: %.2f\n\n",
              best / a.memcpy_gbps.median, best / a.memcpy_gbps_all.median);

  std::printf("softmax  4096 x 1024 fp32, BLOCK=1024\n");
  print_row("kiln softmax_kernel (all threads)", b.kiln_rows, 0, "rows/s");
  print_row("C++ loop, 1 thread", b.reference_rows, 0, "rows/s");
  print_row("C++ loop, all threads", b.reference_rows_all, 0, "rows/s");
  std::printf("  fraction of the loop: %.2f (aim >= 0.80); of the all-thread loop: %.2f\n",
              b.kiln_rows.median / b.reference_rows.median,
              b.kiln_rows.median / b.reference_rows_all.median);
  std::printf("  max |kiln - loop| = %.2g\n", b.max_abs_diff);
}

Json to_json(const VectorAddFigures &a, const SoftmaxFigures &b, int cpus, int runs) {
  Json gbps = Json::object(), gbps_spread = Json::object();
  for (std::size_t i = 0; i < std::size(kBlocks); ++i) {
    gbps[std::to_string(kBlocks[i])] = rounded(a.gbps[i].median, 2);
    gbps_spread[std::to_string(kBlocks[i])] = spread(a.gbps[i], 2);
  }
  const double best = a.gbps[a.best].median;
  Json j;
  j["machine"] = {{"cpus", cpus}};
  j["runs"] = runs;
  j["vector_add"] = {{"n", kAddN},
                     {"bytes_per_element", 12},
                     {"gbps_by_block", gbps},
                     {"best_block", kBlocks[a.best]},
                     {"gbps", rounded(best, 2)},
                     {"memcpy_gbps", rounded(a.memcpy_gbps.median, 2)},
                     {"memcpy_gbps_all_threads", rounded(a.memcpy_gbps_all.median, 2)},
                     {"fraction", rounded(best / a.memcpy_gbps.median, 3)},
                     {"fraction_all_threads", rounded(best / a.memcpy_gbps_all.median, 3)},
                     {"spread",
                      {{"gbps_by_block", gbps_spread},
                       {"memcpy_gbps", spread(a.memcpy_gbps, 2)},
                       {"memcpy_gbps_all_threads", spread(a.memcpy_gbps_all, 2)}}}};
  j["softmax"] = {
      {"rows", kRows},
      {"cols", kCols},
      {"rows_per_s", rounded(b.kiln_rows.median, 0)},
      {"reference_rows_per_s", rounded(b.reference_rows.median, 0)},
      {"reference_rows_per_s_all_threads", rounded(b.reference_rows_all.median, 0)},
      {"fraction", rounded(b.kiln_rows.median / b.reference_rows.median, 3)},
      {"fraction_all_threads", rounded(b.kiln_rows.median / b.reference_rows_all.median, 3)},
      {"max_abs_diff", b.max_abs_diff},
      {"spread",
       {{"rows_per_s", spread(b.kiln_rows, 0)},
        {"reference_rows_per_s", spread(b.reference_rows, 0)},
        {"reference_rows_per_s_all_threads", spread(b.reference_rows_all, 0)}}}};
  return j;
}

constexpr const char *kUsage = "usage: kiln_bench_cpu [--json] [--runs N (>= 5, default 7)] "
                               "[--shared DIR (default " KILN_SHARED_DIR ")]\n";

} // namespace

int main(int argc, char **argv) {
  bool json = false;
  int runs = 7;
  std::string shared = KILN_SHARED_DIR;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      json = true;
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (a == "--shared" && i + 1 < argc) {
      shared = argv[++i];
    } else {
      std::fputs(kUsage, a == "--help" || a == "-h" ? stdout : stderr);
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (runs < 5) {
    std::fprintf(stderr, "error: --runs must be at least 5\n%s", kUsage);
    return 2;
  }

  try {
    const kiln::Module vector_add = kiln::Module::from_file(shared + "/kernels/vector_add.py");
    const kiln::Module softmax = kiln::Module::from_file(shared + "/kernels/softmax.py");
    const VectorAddFigures a = bench_vector_add(vector_add, runs);
    const SoftmaxFigures b = bench_softmax(softmax, runs);
    const int cpus = tbb::info::default_concurrency();
    if (json)
      std::printf("%s\n", to_json(a, b, cpus, runs).dump(2).c_str());
    else
      print_human(a, b, cpus, runs);
    return 0;
  } catch (const kiln::Error &e) {
    fail(e.what());
  }
}
