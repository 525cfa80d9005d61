// `kiln warmup FILE.jsonl`: batch compile on the async pool (shared/CLI.md).
#pragma once

namespace CLI {
class App;
}

namespace kiln::cli {

struct CommonOptions;

/// Adds the `warmup` subcommand to `app`. `common` must outlive app.parse().
void add_warmup_command(CLI::App &app, CommonOptions &common);

} // namespace kiln::cli
