// What every `kiln` subcommand shares: the common options of shared/CLI.md,
// the exit statuses, and the one place that turns an exception into an
// "error: <one sentence>" on stderr and an exit status.
//
// A subcommand lives in its own tools/kiln/<name>_command.cpp and registers
// itself with a function `void add_<name>_command(CLI::App &, CommonOptions &)`
// that adds a CLI11 subcommand, calls add_common_options on it, and sets a
// callback. CLI11 runs that callback only after the whole command line parsed
// and validated, so usage errors come before any work. The callback reports
// failure by throwing (UsageError, kiln::Error, ExitStatus, ...); run_cli maps
// the exception to the message and the exit status.
#pragma once

#include <exception>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
} // namespace CLI

namespace kiln::cli {

/// Exit statuses of shared/CLI.md.
enum ExitCode : int {
  kExitOk = 0,      ///< success
  kExitFailure = 1, ///< the work failed: compile error, wrong result, launch error
  kExitUsage = 2,   ///< bad usage: unknown flag, malformed NAME=VALUE, missing --grid
};

/// The options every subcommand accepts. One instance is shared by all
/// subcommands: exactly one subcommand runs per invocation.
struct CommonOptions {
  std::string backend = "auto"; ///< "cpu", "cuda" or "auto" (cuda when a GPU and driver exist)
  std::string cache_dir;        ///< empty: KILN_CACHE_DIR or the runtime's default
  bool no_cache = false;        ///< compile everything, ignore cached binaries
  int threads = 0;              ///< compile threads; 0: KILN_COMPILE_THREADS or all cores
  bool json = false;            ///< one JSON document on stdout instead of the human report
  int verbosity = 0;            ///< -v count; 1 adds stage times
};

/// Adds --backend, --cache-dir, --no-cache, --threads, --json and -v to `sub`.
void add_common_options(CLI::App &sub, CommonOptions &opts);

/// Makes `opt` accept only integers of at least `min`, with a plain message
/// ("--threads: 0 is not an integer of at least 1"); CLI11's own
/// PositiveNumber prints the range up to DBL_MAX. Returns `opt`.
CLI::Option *require_at_least(CLI::Option *opt, int min);

/// Makes --num-warps accept only what the option allows (a power of two
/// from 1 to 32), as a usage error. Returns `opt`.
CLI::Option *require_num_warps(CLI::Option *opt);

/// Hands the options to the runtime. The public API has no configuration
/// call: the runtime reads its knobs from the environment in one place
/// (shared/DESIGN.md section 7), so this sets KILN_CACHE_DIR,
/// KILN_COMPILE_THREADS and KILN_ALWAYS_COMPILE (for --no-cache) before the
/// first call into kiln. --backend is resolved by each subcommand, which must
/// also know where its tensors live. Not thread-safe (setenv): call it first.
void apply_common_options(const CommonOptions &opts);

/// The element texts of a tuple VALUE or SPEC, "(i32:D, 1, (4, 8))" ->
/// {"i32:D", "1", "(4, 8)"}: split at the commas outside inner parentheses;
/// "(4,)" is a tuple of one and "()" an empty one, as in Python. `text`
/// starts with '('. Throws UsageError for unbalanced parentheses or an
/// empty element.
std::vector<std::string> split_tuple(std::string_view text);

/// A command line that cannot be run as written: exit 2. what() is one
/// sentence naming the offending argument; the --help hint is added when
/// it is reported.
class UsageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Thrown by a subcommand that has already reported its outcome and only
/// wants a non-zero exit status (warmup with some failed lines). Nothing
/// more is printed for it.
struct ExitStatus {
  int code = kExitFailure;
};

/// Prints "error: <sentence>" and, when there is one, the detail on the
/// following lines, to `err`.
void print_error(std::ostream &err, std::string_view sentence, std::string_view detail = {});

/// Reports the exception `e` to `err` and returns its exit status:
/// UsageError 2 (followed by "run '<help_command> --help'"),
/// kiln::CompileError 1 ("<file> does not compile", then its file:line:col,
/// source line and caret), kiln::Error and any other exception 1,
/// ExitStatus its code (silently). Never throws.
int report_exception(std::exception_ptr e, std::ostream &err, std::string_view help_command);

/// Parses argv into `app`, which runs the chosen subcommand's callback, and
/// returns the exit status. --help prints to `out` and returns 0; CLI11's
/// parse errors are usage errors (2) reported to `err`. Never throws.
int run_cli(CLI::App &app, int argc, const char *const *argv, std::ostream &out, std::ostream &err);

} // namespace kiln::cli
