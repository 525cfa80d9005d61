#include "tools/kiln/cli_common.hpp"

#include <charconv>
#include <cstdlib>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "kiln/error.hpp"

namespace kiln::cli {

std::vector<std::string> split_tuple(std::string_view text) {
  const std::string whole(text);
  if (text.size() < 2 || text.back() != ')')
    throw UsageError("'" + whole + "' has unbalanced parentheses");
  const std::string_view inner = text.substr(1, text.size() - 2);
  std::vector<std::string> parts;
  if (inner.find_first_not_of(' ') == std::string_view::npos)
    return parts; // "()"
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= inner.size(); ++i) {
    if (i == inner.size() || (inner[i] == ',' && depth == 0)) {
      std::string e(inner.substr(start, i - start));
      e.erase(0, e.find_first_not_of(' '));
      e.erase(e.find_last_not_of(' ') + 1);
      parts.push_back(std::move(e));
      start = i + 1;
    } else if (inner[i] == '(' || inner[i] == '[') { // a block shape [16, 32] is one element
      ++depth;
    } else if ((inner[i] == ')' || inner[i] == ']') && --depth < 0) {
      break;
    }
  }
  if (depth != 0)
    throw UsageError("'" + whole + "' has unbalanced parentheses");
  if (parts.size() > 1 && parts.back().empty())
    parts.pop_back(); // the trailing comma of "(4,)"
  for (const std::string &e : parts)
    if (e.empty())
      throw UsageError("'" + whole +
                       "' has an empty element; write a tuple as (i32, *fp32:D) or (4,)");
  return parts;
}

CLI::Option *require_at_least(CLI::Option *opt, int min) {
  const CLI::Validator check(
      [min](std::string &text) -> std::string {
        int v = 0;
        const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec == std::errc() && p == text.data() + text.size() && v >= min)
          return {};
        return "'" + text + "' is not an integer of at least " + std::to_string(min);
      },
      "");
  return opt->check(check);
}

CLI::Option *require_num_warps(CLI::Option *opt) {
  const CLI::Validator check(
      [](std::string &text) -> std::string {
        int v = 0;
        const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec == std::errc() && p == text.data() + text.size() && v >= 1 && v <= 32 &&
            (v & (v - 1)) == 0)
          return {};
        return "'" + text + "' is not a power of two from 1 to 32";
      },
      "");
  return opt->check(check);
}

void add_common_options(CLI::App &sub, CommonOptions &opts) {
  sub.add_option("--backend", opts.backend,
                 "cpu, cuda, or auto: cuda when a GPU and its driver are present, else cpu")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->default_str("auto");
  sub.add_option("--cache-dir", opts.cache_dir, "cache directory (overrides KILN_CACHE_DIR)")
      ->type_name("DIR");
  sub.add_flag("--no-cache", opts.no_cache, "compile everything; use no cached binary");
  require_at_least(
      sub.add_option("--threads", opts.threads, "compile threads (overrides KILN_COMPILE_THREADS)")
          ->type_name("N"),
      1);
  sub.add_flag("--json", opts.json, "print one JSON document on stdout instead of the report");
  sub.add_flag("-v,--verbose", opts.verbosity, "more detail: compile time by stage");
}

void apply_common_options(const CommonOptions &opts) {
  // Overwrite (last argument 1): a flag on the command line beats the
  // environment the tool was started in, as CLI.md says.
  if (!opts.cache_dir.empty())
    ::setenv("KILN_CACHE_DIR", opts.cache_dir.c_str(), 1);
  if (opts.threads > 0)
    ::setenv("KILN_COMPILE_THREADS", std::to_string(opts.threads).c_str(), 1);
  if (opts.no_cache)
    ::setenv("KILN_NO_CACHE", "1", 1);
}

void print_error(std::ostream &err, std::string_view sentence, std::string_view detail) {
  err << "error: " << sentence << '\n';
  if (!detail.empty()) {
    err << detail;
    if (detail.back() != '\n')
      err << '\n';
  }
  err.flush();
}

int report_exception(std::exception_ptr e, std::ostream &err, std::string_view help_command) {
  // Most specific first: CompileError and ArgumentError are kiln::Errors.
  try {
    std::rethrow_exception(e);
  } catch (const UsageError &u) {
    print_error(err, u.what(), "run '" + std::string(help_command) + " --help'");
    return kExitUsage;
  } catch (const kiln::CompileError &c) {
    const std::string file = c.file().empty() ? std::string("the kernel file") : c.file();
    print_error(err, file + " does not compile", c.what());
    return kExitFailure;
  } catch (const kiln::Error &k) {
    print_error(err, k.what());
    return kExitFailure;
  } catch (const ExitStatus &s) {
    return s.code;
  } catch (const std::bad_alloc &) {
    print_error(err, "out of memory");
    return kExitFailure;
  } catch (const std::exception &x) {
    print_error(err, x.what());
    return kExitFailure;
  } catch (...) {
    print_error(err, "an unknown exception stopped kiln");
    return kExitFailure;
  }
}

namespace {

/// "kiln run" when the run subcommand was reached, else "kiln": where the
/// --help that explains the mistake lives.
std::string help_command(const CLI::App &app) {
  const std::string name = app.get_name().empty() ? std::string("kiln") : app.get_name();
  const std::vector<CLI::App *> chosen = app.get_subcommands();
  return chosen.empty() ? name : name + " " + chosen.front()->get_name();
}

/// CLI11's messages are sentences without the final period, some with a
/// trailing newline; keep them to the one line CLI.md asks for.
std::string one_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

/// "'frobnicate' is not a kiln command; ..." when argv names no subcommand
/// (CLI11 itself would only say that one is required), else empty.
std::string unknown_command(const CLI::App &app, int argc, const char *const *argv) {
  if (!app.get_subcommands().empty() || argc < 2 || argv[1][0] == '-')
    return {};
  std::string names;
  const std::function<bool(const CLI::App *)> all;
  for (const CLI::App *sub : app.get_subcommands(all))
    names.append(names.empty() ? "" : ", ").append(sub->get_name());
  return "'" + std::string(argv[1]) + "' is not a kiln command; the commands are " + names;
}

} // namespace

int run_cli(CLI::App &app, int argc, const char *const *argv, std::ostream &out,
            std::ostream &err) {
  try {
    app.parse(argc, argv);
    return kExitOk;
  } catch (const CLI::Success &s) {
    // --help, --help-all, --version: CLI11 formats them.
    return app.exit(s, out, err);
  } catch (const CLI::ParseError &p) {
    const std::string unknown = unknown_command(app, argc, argv);
    print_error(err, unknown.empty() ? one_line(p.what()) : unknown,
                "run '" + help_command(app) + " --help'");
    return kExitUsage;
  } catch (...) {
    return report_exception(std::current_exception(), err, help_command(app));
  }
}

} // namespace kiln::cli
