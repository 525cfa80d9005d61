// `kiln bench [compile|launch|warmup|all] [--json]` (shared/CLI.md): the
// compile-latency harness. Fixed workloads, medians of several runs, and one
// JSON document of exactly the shape CLI.md gives, which other tools parse.
#pragma once

namespace CLI {
class App;
}

namespace kiln::cli {

struct CommonOptions;

/// Adds the `bench` subcommand to `app`, and the hidden internal subcommand
/// that `bench compile` re-executes this binary with to time one cold compile
/// in a fresh process. `common` must outlive app.parse().
void add_bench_command(CLI::App &app, CommonOptions &common);

} // namespace kiln::cli
