// `kiln __bench-parse FILE [--repeat N]` (internal): the frontend's parse of
// one file, timed in steady state, for work on the lexer and parser. The
// cold path a user pays is `kiln __bench-cold KERNEL --disk`
// (bench/disk_hit_ab.py); this one isolates the parse from it.
#pragma once

namespace CLI {
class App;
}

namespace kiln::cli {

void add_bench_parse_command(CLI::App &app);

} // namespace kiln::cli
