// `kiln cache [info|ls|clear|prune --max-bytes N]` (shared/CLI.md).
#pragma once

namespace CLI {
class App;
}

namespace kiln::cli {

struct CommonOptions;

/// Adds the `cache` subcommand to `app`. `common` must outlive app.parse().
void add_cache_command(CLI::App &app, CommonOptions &common);

} // namespace kiln::cli
