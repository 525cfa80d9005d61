// The `kiln` command (shared/CLI.md): a thin layer over the public API.
// Each subcommand lives in its own <name>_command.cpp and registers itself
// here; cli_common.hpp says how.
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "kiln/error.hpp"
#include "kiln/version.hpp"
#include "tools/kiln/bench_command.hpp"
#include "tools/kiln/cli_common.hpp"
#include "tools/kiln/compile_command.hpp"
#include "tools/kiln/run_command.hpp"
#include "tools/kiln/warmup_command.hpp"

namespace {

/// A subcommand listed in --help whose implementation has not landed yet.
/// It takes any arguments, so that using it fails as "not implemented"
/// (exit 1) rather than as a usage error.
void add_pending_command(CLI::App &app, kiln::cli::CommonOptions &common, const std::string &name,
                         const std::string &description) {
  CLI::App *sub = app.add_subcommand(name, description);
  kiln::cli::add_common_options(*sub, common);
  sub->allow_extras();
  sub->callback([name] { throw kiln::Error("kiln " + name + " is not implemented yet"); });
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"kiln: a JIT runtime for Triton-compatible kernels", "kiln"};
  const kiln::VersionInfo &v = kiln::version_info();
  app.set_version_flag("--version", "kiln " + v.version + " (build " + v.build_id + ", " + v.git_describe +
                                        "), LLVM " + v.llvm_version);
  app.require_subcommand(1); // exactly one: the common options are shared
  kiln::cli::CommonOptions common;

  kiln::cli::add_run_command(app, common);
  kiln::cli::add_compile_command(app, common);
  kiln::cli::add_warmup_command(app, common);
  kiln::cli::add_bench_command(app, common);
  add_pending_command(app, common, "cache", "Show, list, clear or prune the kernel cache");

  return kiln::cli::run_cli(app, argc, argv, std::cout, std::cerr);
}
