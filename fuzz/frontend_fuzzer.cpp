// libFuzzer target over the frontend and semantic analysis: any bytes are
// parsed as a Python file, its tree dumped (ast_dump), analysed, and every
// jit function is lowered to tile IR under a fixed specialization. Anything
// but a kiln::Error (a crash, a hang, a sanitizer report, another
// exception) is a bug.
#include <cstdint>
#include <string>

#include "compiler/frontend/ast_dump.hpp"
#include "compiler/frontend/ir_gen.hpp"
#include "compiler/frontend/module_info.hpp"
#include "compiler/frontend/parser.hpp"
#include "compiler/ir/ir.hpp"
#include "kiln/error.hpp"

namespace {

/// Pointers are *fp32:D, `*_ptr`-free ints i32, constexprs 16: what a typical launch gives.
std::vector<kiln::compiler::ParamSpec> specialization(const kiln::frontend::JitFunctionInfo &fn) {
  std::vector<kiln::compiler::ParamSpec> out;
  for (const auto &p : fn.params) {
    kiln::compiler::ParamSpec s;
    if (p.is_constexpr) {
      s.is_constexpr = true;
      s.value = kiln::frontend::ConstValue::of_int(16);
    } else if (p.name.find("ptr") != std::string::npos) {
      s.is_pointer = true;
      s.dtype = kiln::DType::f32;
      s.divisible16 = true;
    } else {
      s.dtype = kiln::DType::i32;
    }
    out.push_back(s);
  }
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace kiln::frontend;
  auto src = std::make_shared<const SourceFile>("fuzz.py", std::string(reinterpret_cast<const char *>(data), size));
  try {
    Module module = parse(src);
    (void)dump(module);
    auto info = ModuleInfo::analyze(std::move(module));
    for (const auto &fn : info->functions) {
      try {
        auto r = generate_ir(*fn, specialization(*fn), info->globals, nullptr, kiln::Options{});
        (void)kiln::ir::print(r.program);
      } catch (const kiln::Error &) {
      }
    }
  } catch (const kiln::Error &) {
  }
  return 0;
}
