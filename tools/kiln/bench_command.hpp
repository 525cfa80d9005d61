// `kiln bench [SECTION ...] [--json] [--out FILE] [--quick]` (shared/CLI.md):
// the one benchmark harness, cpu and cuda. Fixed workloads, medians of
// several runs, and one JSON document whose keys `kiln help bench` lists.
#pragma once

namespace CLI {
class App;
}

namespace kiln::cli {

struct CommonOptions;

/// Adds the `bench` subcommand to `app`, the hidden `__bench-parse` (bench_parse.hpp), and the
/// hidden internal subcommand that `bench compile` re-executes this binary with to time one cold
/// compile in a fresh process. `common` must outlive app.parse().
void add_bench_command(CLI::App &app, CommonOptions &common);

} // namespace kiln::cli
