// The `kiln` command (shared/CLI.md): a thin layer over the public API.
// Each subcommand lives in its own <name>_command.cpp and registers itself
// here; cli_common.hpp says how.
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "kiln/error.hpp"
#include "kiln/version.hpp"
#include "tools/kiln/bench_command.hpp"
#include "tools/kiln/cache_command.hpp"
#include "tools/kiln/cli_common.hpp"
#include "tools/kiln/compile_command.hpp"
#include "tools/kiln/run_command.hpp"
#include "tools/kiln/warmup_command.hpp"


int main(int argc, char **argv) {
  CLI::App app{"kiln: a JIT runtime for Triton-compatible kernels", "kiln"};
  const kiln::VersionInfo &v = kiln::version_info();
  app.set_version_flag("--version", "kiln " + v.version + " (build " + v.build_id + ", " + v.git_describe +
                                        "), LLVM " + v.llvm_version);
  app.require_subcommand(1); // exactly one: the common options are shared
  kiln::cli::CommonOptions common;

  kiln::cli::add_run_command(app, common);
  kiln::cli::add_tune_command(app, common);
  kiln::cli::add_compile_command(app, common);
  kiln::cli::add_warmup_command(app, common);
  kiln::cli::add_bench_command(app, common);
  kiln::cli::add_cache_command(app, common);

  return kiln::cli::run_cli(app, argc, argv, std::cout, std::cerr);
}
