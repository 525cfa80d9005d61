// The compile pipeline: IR generation, lowering, O3, code generation, each
// stage timed and kept as text in the CompiledKernel.
#include "compiler/compile.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "compiler/llvm/lower_tile_ir.hpp"
#include "compiler/nvptx/ptx_to_cubin.hpp"
#include "compiler/frontend/ir_gen.hpp"
#include "compiler/llvm/codegen.hpp"
#include "compiler/support/sha256.hpp"

namespace kiln::compiler {

namespace {

class StageTimer {
public:
  explicit StageTimer(std::vector<StageTime> &out) : out_(out), start_(clock::now()) {}
  void stage(const char *name) {
    const auto now = clock::now();
    out_.push_back({name, std::chrono::duration<double, std::milli>(now - start_).count()});
    start_ = now;
  }

private:
  using clock = std::chrono::steady_clock;
  std::vector<StageTime> &out_;
  clock::time_point start_;
};

/// Writes each stage of a compile to `dir/<kernel>.<hash>/` for inspection.
void dump_stages(const std::string &dir, const CompiledKernel &k, const std::string &unoptimized) {
  namespace fs = std::filesystem;
  const std::string id = sha256_hex(k.specialization + k.options.str() + k.target).substr(0, 12);
  const fs::path out = fs::path(dir) / (k.name + "." + id);
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec)
    throw RuntimeError("KILN_DUMP_DIR: cannot create " + out.string() + ": " + ec.message());
  auto write = [&](const char *file, const void *data, std::size_t n) {
    std::ofstream f(out / file, std::ios::binary);
    f.write(static_cast<const char *>(data), static_cast<std::streamsize>(n));
    if (!f)
      throw RuntimeError("KILN_DUMP_DIR: cannot write " + (out / file).string());
  };
  for (const auto &[stage, text] : k.stages)
    write((k.name + "." + stage).c_str(), text.data(), text.size());
  write((k.name + ".unopt.llir").c_str(), unoptimized.data(), unoptimized.size());
  write((k.name + "." + k.binary_kind).c_str(), k.binary.data(), k.binary.size());
}

} // namespace

std::string ParamSpec::type_str() const {
  if (is_constexpr)
    return "constexpr";
  // Triton spells a bool scalar u1 (a pointer to bools is *i1).
  std::string name(!is_pointer && dtype == DType::i1 ? "u1" : dtype_name(dtype));
  return is_pointer ? (is_const ? "*k" : "*") + name : name;
}

std::string specialization_str(const frontend::JitFunctionInfo &fn, const std::vector<ParamSpec> &params) {
  std::string s = "(";
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamSpec &p = params[i];
    s += (i ? ", " : "") + fn.params[i].name + ": " + p.type_str();
    if (p.is_constexpr)
      s += "=" + p.value.repr();
    else if (p.divisible16)
      s += ":D";
  }
  return s + ")";
}

CompileOutput compile(const CompileRequest &r) {
  CompileOutput out;
  CompiledKernel &k = out.kernel;
  StageTimer timer(k.times);
  k.name = r.function->name;
  k.target = r.target.str();
  k.options = r.options;
  k.specialization = specialization_str(*r.function, r.params);
  for (size_t i = 0; i < r.params.size(); ++i)
    if (!r.params[i].is_constexpr)
      k.params.push_back({r.function->params[i].name, r.params[i].dtype, r.params[i].is_pointer});

  GlobalValues own;
  if (!r.globals)
    own = r.module->globals;
  auto gen = frontend::generate_ir(*r.function, r.params, r.globals ? *r.globals : own, r.options);
  out.used_globals = std::move(gen.used_globals);
  k.stages["ir"] = ir::print(gen.program);
  timer.stage("ir");

  const bool gpu = r.target.kind == Target::Kind::Cuda;
  llvm::LLVMContext ctx;
  auto tm = llvmgen::target_machine(r.target, r.options);
  llvmgen::LoweringResult lowered = llvmgen::lower_tile_ir(
      gen.program, r.options, gpu ? llvmgen::LoweringTarget::Nvptx : llvmgen::LoweringTarget::Cpu, ctx);
  llvm::Module &mod = *lowered.module;
  k.shared_bytes = lowered.shared_bytes;
  llvmgen::prepare_module(mod, *tm);
  timer.stage("llir");
  const std::string unoptimized = r.dump_dir.empty() ? std::string() : llvmgen::print_module(mod);
  llvmgen::optimize(mod, *tm);
  k.stages["llir"] = llvmgen::print_module(mod);
  timer.stage("opt");
  k.entry = k.name;
  if (!gpu) {
    k.binary = llvmgen::emit_object(mod, *tm);
    k.binary_kind = "obj";
    timer.stage("obj");
  } else {
    const std::string ptx = llvmgen::emit_assembly(mod, *tm);
    k.stages["ptx"] = ptx;
    timer.stage("ptx");
    std::string why;
    if (auto cubin = nvptx::ptx_to_cubin(ptx, r.target.sm, &why)) {
      k.binary = std::move(cubin->image);
      k.binary_kind = "cubin";
      k.stages["cubin_log"] = cubin->via + ": " + cubin->log;
      k.registers = cubin->registers;
      k.spill_bytes = cubin->spill_bytes;
    } else {
      // The driver can still JIT the PTX when it loads it.
      k.binary.assign(ptx.begin(), ptx.end());
      k.binary_kind = "ptx";
      k.stages["cubin_log"] = why + "; the driver will assemble the PTX at load";
    }
    timer.stage("cubin");
  }
  k.hash = sha256_hex(std::string_view(reinterpret_cast<const char *>(k.binary.data()), k.binary.size()));
  if (!r.dump_dir.empty())
    dump_stages(r.dump_dir, k, unoptimized);
  return out;
}

} // namespace kiln::compiler
