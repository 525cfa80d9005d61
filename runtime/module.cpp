// kiln::Module: loading and parsing kernel files.
#include "kiln/module.hpp"

#include <fstream>
#include <sstream>

#include "compiler/frontend/parser.hpp"
#include "compiler/frontend/source.hpp"
#include "kiln/error.hpp"
#include "runtime/context.hpp"
#include "runtime/jit_function.hpp"
#include "runtime/module_state.hpp"

namespace kiln {

Module Module::from_string(std::string source, std::string name, const std::vector<std::string> &search_path) {
  auto file = std::make_shared<const frontend::SourceFile>(std::move(name), std::move(source));
  std::vector<std::string> path = search_path;
  const auto &env = runtime::Context::get().knobs().module_path;
  path.insert(path.end(), env.begin(), env.end());
  auto info = frontend::ModuleInfo::analyze(frontend::parse(file), path);
  return Module(std::make_shared<runtime::ModuleState>(std::move(info)));
}

Module Module::from_file(const std::string &path, const std::vector<std::string> &search_path) {
  return from_string(frontend::read_source_file(path, "kernel file"), path, search_path);
}

Kernel Module::kernel(std::string_view name) const {
  if (auto fn = state_->function(name))
    return Kernel(std::move(fn));
  std::string names;
  for (const std::string &n : function_names())
    names += (names.empty() ? "" : ", ") + n;
  throw ArgumentError("no @triton.jit function named '" + std::string(name) + "' in " + path() +
                      (names.empty() ? " (it defines none)" : "; it defines: " + names));
}

std::vector<std::string> Module::function_names() const {
  std::vector<std::string> out;
  for (const auto &f : state_->info()->functions)
    out.push_back(f->name);
  for (const auto &[name, fn] : state_->info()->imported_functions)
    out.push_back(name);
  return out;
}

Module Module::module_of(std::string_view name) const {
  const frontend::JitFunctionInfo *fn = state_->info()->visible_function(std::string(name));
  if (!fn)
    throw ArgumentError("no @triton.jit function named '" + std::string(name) + "' is defined in or imported by " +
                        path());
  return Module(state_->state_of(fn->module));
}

const std::string &Module::path() const { return state_->path(); }

void Module::set_global(std::string_view name, Arg value) {
  frontend::ConstValue v;
  switch (value.kind()) {
  case Arg::Kind::Int: v = frontend::ConstValue::of_int(value.as_int()); break;
  case Arg::Kind::Float: v = frontend::ConstValue::of_float(value.as_float()); break;
  case Arg::Kind::Bool: v = frontend::ConstValue::of_bool(value.as_bool()); break;
  default: throw ArgumentError("set_global('" + std::string(name) + "'): a global must be an int, float or bool");
  }
  state_->set_global(name, v);
}

} // namespace kiln
