// The compile pipeline: IR generation, lowering, LLVM optimization, code generation, each
// stage timed and kept as text in the CompiledKernel.
#include "compiler/compile.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "compiler/frontend/ir_gen.hpp"
#include "compiler/llvm/codegen.hpp"
#include "compiler/llvm/diagnostics.hpp"
#include "compiler/llvm/lower_tile_ir.hpp"
#include "compiler/nvptx/libdevice.hpp"
#include "compiler/nvptx/ptx_to_cubin.hpp"
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
/// The folder of one compile under KILN_DUMP_DIR (and KILN_OVERRIDE_DIR).
std::string stage_folder(const CompiledKernel &k) {
  return k.name + "." + sha256_hex(k.specialization + k.options.str() + k.target).substr(0, 12);
}

struct Override {
  std::string path, text;
};

/// The user's override of `stage`, if there is one.
std::optional<Override> override_file(const std::string &dir, const CompiledKernel &k, const std::string &stage) {
  namespace fs = std::filesystem;
  for (const fs::path &p : {fs::path(dir) / stage_folder(k) / (k.name + "." + stage), fs::path(dir) / (k.name + "." + stage)}) {
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
      continue;
    std::ifstream in(p, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof())
      throw RuntimeError("KILN_OVERRIDE_DIR: cannot read " + p.string());
    return Override{p.string(), std::move(text)};
  }
  return std::nullopt;
}

void dump_stages(const std::string &dir, const CompiledKernel &k, const std::string &unoptimized) {
  namespace fs = std::filesystem;
  const fs::path out = fs::path(dir) / stage_folder(k);
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

std::vector<int64_t> ParamSpec::block_shape() const {
  const size_t n = (elems.size() - 2) / 3;
  std::vector<int64_t> dims;
  for (size_t d = 0; d < n; ++d)
    dims.push_back(elems[1 + 2 * n + d].value.i);
  return dims;
}

bool ParamSpec::nan_padding() const {
  return elems.back().value.b;
}

std::string ParamSpec::type_str() const {
  if (is_descriptor) {
    std::string s = "tensordesc<" + std::string(dtype_name(dtype)) + "[";
    const std::vector<int64_t> dims = block_shape();
    for (size_t d = 0; d < dims.size(); ++d)
      s += (d ? ", " : "") + std::to_string(dims[d]);
    return s + "]" + (nan_padding() ? ",nan>" : ">");
  }
  if (is_constexpr)
    return "constexpr";
  // Triton spells a bool scalar u1 (a pointer to bools is *i1).
  std::string name(!is_pointer && dtype == DType::i1 ? "u1" : dtype_name(dtype));
  return is_pointer ? (is_const ? "*k" : "*") + name : name;
}

std::string ParamSpec::str() const {
  if (is_descriptor) {
    // The `D` of its shape dims and strides but the last: ":D" when all have
    // it, else a letter each, shape first ("tensordesc<fp16[64, 64]>:D_D":
    // the first dim and the first stride are multiples of 16, the last dim not).
    std::string flags;
    for (size_t i = 1; i < 2 * block_shape().size(); ++i)
      flags += elems[i].divisible16 ? 'D' : '_';
    if (flags.find('D') == std::string::npos)
      return type_str();
    return type_str() + ":" + (flags.find('_') == std::string::npos ? "D" : flags);
  }
  if (is_tuple) {
    std::string s = "(";
    for (size_t i = 0; i < elems.size(); ++i)
      s += (i ? ", " : "") + elems[i].str();
    return s + (elems.size() == 1 ? ",)" : ")");
  }
  if (is_constexpr)
    return type_str() + "=" + value.repr();
  return type_str() + (divisible16 ? ":D" : "");
}

std::string specialization_str(const frontend::JitFunctionInfo &fn, const std::vector<ParamSpec> &params) {
  std::string s = "(";
  for (size_t i = 0; i < params.size(); ++i)
    s += (i ? ", " : "") + fn.params[i].name + ": " + params[i].str();
  return s + ")";
}

namespace {

/// The launch parameters of one specialized parameter: itself, or the
/// runtime leaves of a tuple ("t.0", "t.1.0"), in order.
void launch_params(const std::string &name, const ParamSpec &p, std::vector<LaunchParam> &out) {
  if (p.is_tuple) {
    for (size_t i = 0; i < p.elems.size(); ++i)
      launch_params(name + "." + std::to_string(i), p.elems[i], out);
  } else if (!p.is_constexpr) {
    out.push_back({name, p.dtype, p.is_pointer});
  }
}

bool has_inline_asm(const ir::Block &b) {
  for (const ir::Op *op : b.ops) {
    if (op->kind == ir::OpKind::InlineAsm)
      return true;
    for (const ir::Block *r : op->regions)
      if (has_inline_asm(*r))
        return true;
  }
  return false;
}

/// PTX to a cubin. ptxas rejecting PTX that holds the user's inline
/// assembly is most likely that assembly's fault, not kiln's: say so.
std::optional<nvptx::Cubin> assemble(const std::string &ptx, int sm, bool inline_asm,
                                     std::string *why) {
  try {
    return nvptx::ptx_to_cubin(ptx, sm, why);
  } catch (const Error &e) {
    if (!inline_asm)
      throw;
    std::string log = e.what();
    if (const size_t at = log.find("report it): "); at != std::string::npos)
      log.erase(0, at + 12);
    throw Error("ptxas rejected the kernel's PTX, which includes its tl.inline_asm_elementwise "
                "code (check that code first; `kiln compile --emit ptx` shows the PTX): " +
                log);
  }
}

} // namespace

/// What one compile carries from stage to stage.
struct Compilation::State {
  explicit State(CompileRequest req) : r(std::move(req)), timer(out.kernel.times) {}

  CompileRequest r;
  GlobalValues own_globals;
  CompileOutput out;
  StageTimer timer;
  std::optional<frontend::IrGenResult> gen;
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::unique_ptr<llvm::Module> mod;
  std::string unoptimized;
  bool inline_asm = false; ///< the kernel runs the user's PTX (tl.inline_asm_elementwise)
  bool stopped = false;    ///< CompileRequest::proceed said no
  bool gpu() const { return r.target.kind == Target::Kind::Cuda; }
  /// Asks CompileRequest::proceed; false once it said no.
  bool go() {
    if (!stopped && r.proceed && !r.proceed(true))
      stopped = true;
    return !stopped;
  }
};

Compilation::Compilation(CompileRequest request) : s_(std::make_unique<State>(std::move(request))) {
  const CompileRequest &r = s_->r;
  CompiledKernel &k = s_->out.kernel;
  k.name = r.function->name;
  k.target = r.target.str();
  k.options = r.options;
  k.entry = k.name;
  k.specialization = specialization_str(*r.function, r.params);
  for (size_t i = 0; i < r.params.size(); ++i)
    launch_params(r.function->params[i].name, r.params[i], k.params);
  if (!r.globals) {
    s_->own_globals = r.module->globals;
    s_->r.globals = &s_->own_globals;
  }
  llvmgen::collect_diagnostics(s_->ctx);
}

Compilation::~Compilation() = default;
Compilation::Compilation(Compilation &&) noexcept = default;

void Compilation::frontend() {
  State &s = *s_;
  if (!s.go())
    return;
  s.gen = frontend::generate_ir(*s.r.function, s.r.params, *s.r.globals, s.r.other_globals,
                                s.r.options, s.gpu());
  s.out.used_globals = std::move(s.gen->used_globals);
  s.out.kernel.stages["ir"] = ir::print(s.gen->program);
  for (const auto &f : s.gen->program.functions)
    s.inline_asm = s.inline_asm || has_inline_asm(f->body);
  s.timer.stage("ir");
}

void Compilation::optimize() {
  State &s = *s_;
  CompiledKernel &k = s.out.kernel;
  if (!s.go())
    return;
  s.tm = llvmgen::target_machine(s.r.target, s.r.options);
  llvmgen::LoweringResult lowered = llvmgen::lower_tile_ir(
      s.gen->program, s.r.options, s.gpu() ? llvmgen::LoweringTarget::Nvptx : llvmgen::LoweringTarget::Cpu, s.ctx,
      s.r.target.sm, s.r.target.wgmma);
  s.gen.reset(); // the tile IR is done with
  s.mod = std::move(lowered.module);
  k.shared_bytes = lowered.shared_bytes;
  k.scratch_bytes = lowered.scratch_bytes;
  if (s.gpu())
    k.stages["ir"] = std::move(lowered.ir_with_layouts);
  llvmgen::prepare_module(*s.mod, *s.tm);
  if (s.gpu())
    nvptx::link_libdevice(*s.mod);
  s.timer.stage("llir");
  if (!s.r.dump_dir.empty())
    s.unoptimized = llvmgen::print_module(*s.mod);
  if (!s.go())
    return;
  // O3 is the longest step of most compiles: it is asked before each pass.
  std::function<bool()> stop;
  if (s.r.proceed)
    stop = [&] { return s.stopped = s.stopped || !s.r.proceed(false); };
  llvmgen::optimize(*s.mod, *s.tm, stop);
  if (s.stopped)
    return;
  llvmgen::throw_collected(s.ctx, "optimization");
  k.stages["llir"] = llvmgen::print_module(*s.mod);
  if (!s.r.override_dir.empty())
    if (std::optional<Override> o = override_file(s.r.override_dir, k, "llir")) {
      llvm::SMDiagnostic err;
      std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(o->text, err, s.ctx);
      if (!m)
        throw CompileError(o->path, static_cast<unsigned>(std::max(err.getLineNo(), 1)),
                           static_cast<unsigned>(err.getColumnNo() + 1),
                           "the KILN_OVERRIDE_DIR file is not valid LLVM IR: " + err.getMessage().str(),
                           err.getLineContents().str());
      s.mod = std::move(m);
      k.stages["llir"] = std::move(o->text);
    }
  s.timer.stage("opt");
}

void Compilation::codegen() {
  State &s = *s_;
  CompiledKernel &k = s.out.kernel;
  if (!s.go())
    return;
  if (!s.gpu()) {
    k.binary = llvmgen::emit_object(*s.mod, *s.tm);
    llvmgen::throw_collected(s.ctx, "code generation");
    k.binary_kind = "obj";
    s.timer.stage("obj");
  } else {
    std::string ptx = llvmgen::emit_assembly(*s.mod, *s.tm);
    llvmgen::throw_collected(s.ctx, "code generation");
    if (!s.r.override_dir.empty())
      if (std::optional<Override> o = override_file(s.r.override_dir, k, "ptx"))
        ptx = std::move(o->text);
    k.stages["ptx"] = ptx;
    s.timer.stage("ptx");
    std::string why;
    if (auto cubin = assemble(ptx, s.r.target.sm, s.inline_asm, &why)) {
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
    s.timer.stage("cubin");
  }
  s.mod.reset();
  s.tm.reset();
  k.hash = sha256_hex(std::string_view(reinterpret_cast<const char *>(k.binary.data()), k.binary.size()));
  if (!s.r.dump_dir.empty())
    dump_stages(s.r.dump_dir, k, s.unoptimized);
}

void Compilation::run_stage(int i) {
  switch (i) {
  case 0: return frontend();
  case 1: return optimize();
  default: return codegen();
  }
}

bool Compilation::stopped() const {
  return s_->stopped;
}

CompileOutput Compilation::take() { return std::move(s_->out); }

CompileOutput compile(const CompileRequest &r) {
  Compilation c(r);
  for (int i = 0; i < Compilation::kStages; ++i)
    c.run_stage(i);
  return c.take();
}

} // namespace kiln::compiler
