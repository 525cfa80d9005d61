#include "tools/kiln/cli_common.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "compiler/support/closest_name.hpp"
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

/// The subcommands people use: not the hidden ones (group ""), which are
/// kiln's own (bench's __bench-cold child).
std::vector<std::string_view> command_names(const CLI::App &app) {
  std::vector<std::string_view> names;
  const std::function<bool(const CLI::App *)> all;
  for (const CLI::App *sub : app.get_subcommands(all))
    if (!sub->get_group().empty())
      names.push_back(sub->get_name());
  return names;
}

std::string join(const std::vector<std::string_view> &names) {
  std::string text;
  for (std::string_view n : names)
    text.append(text.empty() ? "" : ", ").append(n);
  return text;
}

/// "'frobnicate' is not a kiln command; ..." when `word` names no subcommand.
std::string unknown_command(const CLI::App &app, std::string_view word) {
  const std::vector<std::string_view> names = command_names(app);
  const std::string near = closest_name(word, names);
  return "'" + std::string(word) + "' is not a kiln command; " +
         (near.empty() ? "the commands are " + join(names) : "did you mean '" + near + "'?");
}

/// The same when argv names no subcommand (CLI11 itself would only say that
/// one is required), else empty.
std::string unknown_command(const CLI::App &app, int argc, const char *const *argv) {
  if (!app.get_subcommands().empty() || argc < 2 || argv[1][0] == '-')
    return {};
  return unknown_command(app, argv[1]);
}

/// "'--grdi' is not an option of kiln run; did you mean '--grid'?" for the
/// first --option of argv that the chosen subcommand lacks and that is close
/// to one it has, else empty. It goes first: CLI11 may have stopped at what
/// the misspelling left out ("--grid is required").
std::string misspelt_option(const CLI::App &app, int argc, const char *const *argv) {
  const std::vector<CLI::App *> chosen = app.get_subcommands();
  const CLI::App &sub = chosen.empty() ? app : *chosen.front();
  std::vector<std::string> known;
  for (const CLI::App *a : {&app, &sub})
    for (const CLI::Option *o : a->get_options())
      for (const std::string &n : o->get_lnames())
        known.push_back("--" + n);
  const std::vector<std::string_view> names(known.begin(), known.end());
  for (int i = 1; i < argc; ++i) {
    const std::string_view word =
        std::string_view(argv[i]).substr(0, std::string_view(argv[i]).find('='));
    if (word.size() > 2 && word.substr(0, 2) == "--" &&
        std::find(names.begin(), names.end(), word) == names.end())
      if (const std::string near = closest_name(word, names); !near.empty())
        return "'" + std::string(word) + "' is not an option of " + help_command(app) +
               "; did you mean '" + near + "'?";
  }
  return {};
}

/// `kiln help [COMMAND]`: the --help of kiln or of that command.
int print_help(CLI::App &app, int argc, const char *const *argv, std::ostream &out) {
  if (argc < 3) {
    out << app.help();
    return kExitOk;
  }
  const std::vector<std::string_view> names = command_names(app);
  if (std::find(names.begin(), names.end(), std::string_view(argv[2])) == names.end())
    throw UsageError(unknown_command(app, argv[2]));
  out << app.get_subcommand(argv[2])->help(app.get_name());
  return kExitOk;
}

bool wants_json(int argc, const char *const *argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--json")
      return true;
  return false;
}

/// Under --json a failed command still prints one JSON document on stdout:
/// {"error": "<the sentence of stderr's first line>", "exit_code": N}.
int with_json_error(int status, const std::string &reported, bool json, std::ostream &out,
                    std::ostream &err) {
  err << reported;
  if (json && status != kExitOk && !reported.empty()) {
    std::string sentence = reported.substr(0, reported.find('\n'));
    if (sentence.rfind("error: ", 0) == 0)
      sentence.erase(0, 7);
    out << nlohmann::json{{"error", sentence}, {"exit_code", status}}.dump() << '\n';
  }
  return status;
}

} // namespace

int run_cli(CLI::App &app, int argc, const char *const *argv, std::ostream &out,
            std::ostream &err) {
  std::ostringstream reported; // stderr, also read back for --json's error object
  int status = kExitOk;
  try {
    if (argc >= 2 && std::string_view(argv[1]) == "help")
      return print_help(app, argc, argv, out);
    app.parse(argc, argv);
  } catch (const CLI::Success &s) {
    // --help, --help-all, --version: CLI11 formats them.
    return app.exit(s, out, err);
  } catch (const CLI::ParseError &p) {
    std::string sentence = unknown_command(app, argc, argv);
    if (sentence.empty())
      sentence = misspelt_option(app, argc, argv);
    print_error(reported, sentence.empty() ? one_line(p.what()) : sentence,
                "run '" + help_command(app) + " --help'");
    status = kExitUsage;
  } catch (...) {
    status = report_exception(std::current_exception(), reported, help_command(app));
  }
  return with_json_error(status, reported.str(), wants_json(argc, argv), out, err);
}

} // namespace kiln::cli
