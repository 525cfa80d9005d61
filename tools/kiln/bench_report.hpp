// What `kiln bench` puts beside its own figures: where the shared kernels
// are, a recorded anchor (--anchors FILE, e.g. bench/anchors/h200-triton-3.6.json)
// and an earlier run (--compare OLD.json). Separate from the measuring so the
// tests can feed it bad files without running a benchmark.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kiln::cli {

/// The shared directory (kernels/ and bench/): `flag` when given, else
/// $KILN_SHARED_DIR, else the first of .., ../share/kiln, ../../shared,
/// ../../../shared and ../shared from this binary's folder that has kernels/. Never
/// a path compiled in: a copied binary must not look on the build machine.
/// Throws UsageError saying what was tried when none has kernels/.
std::string find_shared_dir(const std::string &flag, const std::string &exe = "/proc/self/exe");

/// One figure: a dotted key ("launch.launch_us", "compile.add_kernel.cold_ms")
/// and its value.
using Figures = std::vector<std::pair<std::string, double>>;

/// The numbers of a `kiln bench --json` document, spreads, the machine and
/// the sizes of the workloads left out; warmup's wall_s becomes
/// warmup.wall_s.<threads>, a dot case's TFLOP/s dot.matmul.<case>.tflops.
Figures flatten_figures(const nlohmann::ordered_json &results);

/// Figures to put beside a run's: an anchor file's or an earlier run's.
struct Reference {
  std::string label; ///< the column title
  std::string about; ///< one line: machine, date, where the numbers come from
  /// Keys may hold '*' (fnmatch) so one anchor serves every kernel.
  std::vector<std::pair<std::string, nlohmann::ordered_json>>
      figures; ///< {"value", "unit"?, "what"?}
};

/// An anchor file: {"name", "machine", "date", "source"?, "figures": {KEY:
/// NUMBER or {"value": NUMBER, "unit"?, "what"?}}}. Throws RuntimeError
/// naming the file and what is wrong.
Reference read_anchors(const std::string &path);

/// An earlier `kiln bench --json` document. Throws RuntimeError naming the
/// file when it cannot be read or is not one.
Reference read_compare(const std::string &path);

/// Each of `figures` beside the reference's matching figure and their
/// ratio, then the reference's figures this run does not have: as a text
/// table, and as JSON {KEY: {"value", "reference", "ratio"}} plus "missing".
std::string beside_text(const Figures &figures, const Reference &ref);
nlohmann::ordered_json beside_json(const Figures &figures, const Reference &ref);

} // namespace kiln::cli
