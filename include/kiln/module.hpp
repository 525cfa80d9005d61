// A parsed kernel file: its jit functions and module-level constants.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/arg.hpp"
#include "kiln/kernel.hpp"

namespace kiln {

namespace runtime {
class ModuleState;
}

/// A handle to a loaded kernel file. Copies share the same module. All
/// methods are safe to call from several threads at once, except set_global
/// which must not race with launches of this module's kernels.
class Module {
public:
  /// Reads and parses a file. The whole file is Python: host code around
  /// the kernels is never an error by itself (Triton's module model).
  /// `import` / `from ... import` of other kernel files look in the file's
  /// folder, its package root, `search_path`, then KILN_PATH. Throws
  /// CompileError (syntax, a bad jit signature) or RuntimeError (unreadable file).
  static Module from_file(const std::string &path, const std::vector<std::string> &search_path = {});
  /// Parses `source`; `name` stands for the file name in messages and
  /// decides where imports are looked up (as for from_file).
  static Module from_string(std::string source, std::string name = "<string>",
                            const std::vector<std::string> &search_path = {});

  /// The `@triton.jit` function `name`. Throws ArgumentError listing the
  /// module's functions when there is none of that name.
  Kernel kernel(std::string_view name) const;
  /// The jit functions this file defines, then those it imports from other kernel files.
  std::vector<std::string> function_names() const;
  const std::string &path() const;

  /// Changes a module-level `tl.constexpr` global (an int, float or bool).
  /// A kernel compiled with the old value reports the change at its next launch.
  void set_global(std::string_view name, Arg value);

  /// The module that defines jit function `name`: this one, or the kernel
  /// file it was imported from (Python's `helpers.SCALE = 5` is
  /// `m.module_of("scale").set_global("SCALE", 5)`). Compiles of this
  /// module's kernels read that module's current globals. Throws
  /// ArgumentError when no such function is visible here.
  Module module_of(std::string_view name) const;

  const std::shared_ptr<runtime::ModuleState> &state() const { return state_; }

private:
  explicit Module(std::shared_ptr<runtime::ModuleState> s) : state_(std::move(s)) {}
  std::shared_ptr<runtime::ModuleState> state_;
};

} // namespace kiln
