// `kiln compile FILE KERNEL [--target T] [--emit KIND] [--out DIR] [NAME=SPEC ...]`.
#pragma once

namespace CLI {
class App;
}

namespace kiln::cli {

struct CommonOptions;

/// Adds the `compile` subcommand to `app`. `common` must outlive app.parse().
void add_compile_command(CLI::App &app, CommonOptions &common);

} // namespace kiln::cli
