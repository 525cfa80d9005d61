#include "tools/kiln/bench_parse.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "compiler/frontend/lexer.hpp"
#include "compiler/frontend/parser.hpp"
#include "compiler/frontend/source.hpp"
#include "tools/kiln/summary.hpp"

namespace kiln::cli {

namespace {

struct ParseOptions {
  std::string file;
  int repeat = 3000;
};

/// Microseconds per call of `fn`, median of 5 rounds of `repeat` calls.
template <class Fn> double median_us(int repeat, Fn &&fn) {
  std::vector<double> rounds;
  for (int r = 0; r < 5; ++r) {
    const auto t = std::chrono::steady_clock::now();
    for (int i = 0; i < repeat; ++i)
      fn();
    rounds.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count() /
        repeat);
  }
  return summarize(std::move(rounds)).median;
}

void run(const ParseOptions &o) {
  const std::string text = frontend::read_source_file(o.file, "kernel file");
  // Each round makes its SourceFile as Module::from_file does (line table included).
  const double lex = median_us(o.repeat, [&] {
    const frontend::SourceFile source(o.file, text);
    (void)frontend::tokenize(source);
  });
  const double parse = median_us(o.repeat, [&] {
    (void)frontend::parse(std::make_shared<frontend::SourceFile>(o.file, text));
  });
  char line[512];
  std::snprintf(line, sizeof line,
                "%s: %zu bytes, lex %.2f us, lex + parse %.2f us (median of 5 rounds of %d)\n",
                o.file.c_str(), text.size(), lex, parse, o.repeat);
  std::cout << line;
}

} // namespace

void add_bench_parse_command(CLI::App &app) {
  auto o = std::make_shared<ParseOptions>();
  CLI::App *sub = app.add_subcommand("__bench-parse", "internal: the parse of one file, timed");
  sub->group("");
  sub->add_option("FILE", o->file)->required();
  sub->add_option("--repeat", o->repeat, "parses per round")->check(CLI::PositiveNumber);
  sub->callback([o] { run(*o); });
}

} // namespace kiln::cli
