// `kiln compile` (shared/CLI.md): compile one specialization without
// launching and show or write its stages. NAME=SPEC gives a type for runtime
// parameters (*fp32, *fp16:D, i32, i32:D, fp32, u1), a value for constexprs,
// or 1 for an integer specialized as equal to 1.
#include "tools/kiln/compile_command.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <tuple>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "compiler/nvptx/ptx_to_cubin.hpp"
#include "compiler/target.hpp"
#include "kiln/kiln.hpp"
#include "runtime/jit_function.hpp"
#include "runtime/spec_args.hpp"
#include "tools/kiln/cli_common.hpp"
#include "tools/kiln/run_command.hpp"
#include "tools/kiln/stage_times.hpp"

namespace kiln::cli {

namespace {

struct CompileOptions {
  std::string file, kernel, target = "cpu", emit, out;
  std::vector<std::string> specs;
  int num_warps = 0, num_stages = 0, repeat = 0;
  bool debug = false;
};

/// What `--repeat` compiles first, untimed, so that the timed compiles find
/// LLVM's targets, libdevice's reader and the assembler set up, as every
/// compile but a process's first does: loads, stores, a reduction.
constexpr const char *kWarmUpSource = R"(import triton
import triton.language as tl


@triton.jit
def kiln_warm_up(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.exp(x) / tl.sum(x, axis=0), mask=mask)
)";

void warm_up_compile(const compiler::Target &target) {
  // The runtime starts nvJitLink's warm-up when it opens the GPU (Context);
  // a --target cuda compile on a machine without one would otherwise time
  // the assembler's first-use set-up in the first compile.
  if (target.sm > 0)
    nvptx::warm_up_nvjitlink(target.sm);
  const Module m = Module::from_string(kWarmUpSource, "<kiln compile: warm-up>");
  const Kernel k = m.kernel("kiln_warm_up");
  runtime::SpecStorage storage;
  const nlohmann::json specs = {
      {"x_ptr", "*fp32:D"}, {"y_ptr", "*fp32:D"}, {"n", "i32"}, {"BLOCK", 1024}};
  k.impl()->compile_only(runtime::args_from_specs(*k.impl(), specs, storage), target);
}

/// A SPEC word as JSON: numbers and bools as themselves, "(a, b)" an array
/// (a tuple parameter), anything else a string.
nlohmann::json spec_value(const std::string &text) {
  if (!text.empty() && text.front() == '(') { // a tuple parameter's specs, nested as written
    nlohmann::json elems = nlohmann::json::array();
    for (const std::string &e : split_tuple(text))
      elems.push_back(spec_value(e));
    return elems;
  }
  if (text == "true" || text == "True")
    return true;
  if (text == "false" || text == "False")
    return false;
  if (text == "None" || text == "null")
    return nullptr;
  // Each on its own: stoll throws on "-inf" and ".5", which stod reads
  // (vLLM passes MASK_VALUE=float("-inf")).
  try {
    size_t used = 0;
    const long long i = std::stoll(text, &used, 0);
    if (used == text.size())
      return i;
  } catch (const std::exception &) {
  }
  try {
    size_t used = 0;
    const double d = std::stod(text, &used);
    if (used == text.size())
      return d;
  } catch (const std::exception &) {
  }
  return text;
}

const std::vector<std::string> &stages_for(const std::string &emit) {
  static const std::vector<std::string> all = {"ir", "llir", "obj"};
  static std::vector<std::string> one;
  if (emit == "all")
    return all;
  one = {emit};
  return one;
}

bool is_launch_option(const std::string &name) {
  return name == "num_warps" || name == "num_stages" || name == "num_ctas" ||
         name == "enable_fp_fusion" || name == "debug";
}

/// NAME=VALUE of a launch option as JSON (the runtime checks the range).
nlohmann::json option_value(const std::string &name, const std::string &value) {
  if (name == "debug" || name == "enable_fp_fusion") {
    if (value == "True" || value == "true" || value == "1")
      return true;
    if (value == "False" || value == "false" || value == "0")
      return false;
    throw UsageError(name + "=" + value + ": " + name + " is True or False");
  }
  int v = 0;
  const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size())
    throw UsageError(name + "=" + value + ": " + name + " is an integer");
  return v;
}

/// The processors LLVM 19's NVPTX backend knows from sm_50 on (`llc
/// -march=nvptx64 -mcpu=help`); a newer one gets one clear error instead of
/// LLVM's warning per compile stage and a failed link.
constexpr int kLlvmCudaArchs[] = {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90};

/// "cuda:sm_90" or "cuda:sm_90a" (the same target: kiln uses wgmma, and so
/// sm_90a, on sm_90 unless KILN_DISABLE_WGMMA says not to).
compiler::Target cuda_target(const std::string &text) {
  int sm = 0, used = 0;
  if (std::sscanf(text.c_str(), "cuda:sm_%d%n", &sm, &used) != 1 || sm < 50)
    throw UsageError("--target cuda needs a compute capability, e.g. cuda:sm_90, not '" + text +
                     "'");
  const std::string suffix = text.substr(static_cast<size_t>(used));
  if (!suffix.empty() && !(suffix == "a" && sm == 90))
    throw UsageError("--target " + text + ": '" + suffix + "' after sm_" + std::to_string(sm) +
                     " is no architecture kiln targets (sm_90a is the one suffix)");
  if (std::find(std::begin(kLlvmCudaArchs), std::end(kLlvmCudaArchs), sm) ==
      std::end(kLlvmCudaArchs))
    throw UsageError("--target " + text + ": LLVM 19's NVPTX backend does not know sm_" +
                     std::to_string(sm) +
                     "; it targets sm_50 to sm_90 (PTX for sm_90 also runs on newer GPUs)");
  compiler::Target t = compiler::Target::cuda(sm);
  if (!suffix.empty() && !t.wgmma)
    throw UsageError(
        "--target cuda:sm_90a asks for wgmma, which KILN_DISABLE_WGMMA turns off; use cuda:sm_90");
  return t;
}

void compile(const CompileOptions &o, const CommonOptions &common) {
  apply_common_options(common);
  compiler::Target target = compiler::Target::host();
  const bool gpu = o.target.rfind("cuda", 0) == 0;
  if (gpu) {
    target = cuda_target(o.target);
  } else if (o.target != "cpu") {
    throw UsageError("--target must be cpu or cuda:sm_NN, not '" + o.target + "'");
  }
  const std::string emit = o.emit.empty() ? (gpu ? "ptx" : "llir") : o.emit;
  static const std::vector<std::string> kinds = {"ir", "llir", "obj", "all", "ptx", "cubin"};
  if (std::find(kinds.begin(), kinds.end(), emit) == kinds.end())
    throw UsageError("--emit must be one of ir, llir, ptx, cubin, obj, all; not '" + emit + "'");
  if (!gpu && (emit == "ptx" || emit == "cubin"))
    throw UsageError("--emit " + emit + " needs a cuda target (--target cuda:sm_90)");
  if (gpu && emit == "obj")
    throw UsageError("--emit obj is the cpu target's binary; a cuda target emits ptx or cubin");

  nlohmann::json specs = nlohmann::json::object();
  nlohmann::json options =
      nlohmann::json::object(); // num_warps=8 as kiln run and warmup files spell it
  for (const std::string &word : o.specs) {
    const Assignment a = parse_assignment(word, "argument");
    if (specs.contains(a.name) || options.contains(a.name))
      throw UsageError("argument '" + a.name + "' is given twice");
    if (is_launch_option(a.name))
      options[a.name] = option_value(a.name, a.value);
    else
      specs[a.name] = spec_value(a.value);
  }
  for (auto [flag, name, set] : {std::tuple{"--num-warps", "num_warps", o.num_warps != 0},
                                 std::tuple{"--num-stages", "num_stages", o.num_stages != 0},
                                 std::tuple{"--debug", "debug", o.debug}})
    if (set && options.contains(name))
      throw UsageError(std::string(name) + " is given both as " + flag + " and as " + name + "=");
  Module module = Module::from_file(o.file);
  Kernel kernel = module.kernel(o.kernel);
  runtime::SpecStorage storage; // what the Args point into
  std::vector<Arg> args;
  try {
    args = runtime::args_from_specs(*kernel.impl(), specs, storage);
  } catch (const ArgumentError &e) {
    throw UsageError(
        e.what()); // a NAME=SPEC word of the command line (exit 2, as kiln run's VALUEs)
  }
  if (o.num_warps)
    options["num_warps"] = o.num_warps;
  if (o.num_stages)
    options["num_stages"] = o.num_stages;
  if (o.debug)
    options["debug"] = true;
  runtime::append_option_args(options, storage, args);

  // --repeat: cold compiles (nothing cached) in a process that has compiled
  // another kernel, each timed by stage; the stages come from the last.
  StageTimes stage_times;
  if (o.repeat > 0)
    warm_up_compile(target);
  CompiledKernel k;
  for (int i = 0; i < std::max(o.repeat, 1); ++i) {
    k = kernel.impl()->compile_only(args, target);
    stage_times.add(k);
  }
  if (common.verbosity > 0)
    stage_times.print(
        std::cerr, o.repeat > 0
                       ? "each a cold compile after a compile of another kernel"
                       : "the process's first compile, set-up of LLVM and the assembler included");
  auto text_of = [&](const std::string &stage) -> std::string {
    if (stage == k.binary_kind || stage == "obj" || stage == "cubin") {
      if (stage != k.binary_kind)
        throw Error("no " + stage + " stage: " + (k.stages.count("cubin_log") ? k.stages.at("cubin_log") : std::string()));
      return std::string(k.binary.begin(), k.binary.end());
    }
    return k.stages.at(stage);
  };
  const std::vector<std::string> &stages = emit != "all" ? stages_for(emit)
                                           : gpu           ? std::vector<std::string>{"ir", "llir", "ptx", "cubin"}
                                                           : stages_for("all");

  if (!o.out.empty()) {
    std::filesystem::create_directories(o.out);
    nlohmann::json written = nlohmann::json::array();
    for (const std::string &stage : stages) {
      const std::filesystem::path p = std::filesystem::path(o.out) / (k.name + "." + stage);
      std::ofstream f(p, std::ios::binary);
      const std::string data = text_of(stage);
      f.write(data.data(), static_cast<std::streamsize>(data.size()));
      if (!f)
        throw Error("cannot write " + p.string());
      written.push_back(p.string());
    }
    if (common.json)
      std::cout << nlohmann::json{{"kernel", Kernel::repr(k)},
                                  {"key", k.key},
                                  {"files", written},
                                  {"compile_times", stage_times.json()}}
                       .dump()
                << "\n";
    else
      for (const auto &p : written)
        std::cout << p.get<std::string>() << "\n";
    return;
  }
  const std::string last = stages.back();
  if (last == "obj" || last == "cubin")
    throw UsageError("the " + last + " stage is binary; write it with --out DIR");
  if (common.json) {
    nlohmann::json texts = nlohmann::json::object();
    for (const std::string &stage : stages)
      if (stage != "obj" && stage != "cubin")
        texts[stage] = text_of(stage);
    nlohmann::json times = nlohmann::json::object();
    for (const StageTime &t : k.times)
      times[t.stage] = t.ms;
    std::cout << nlohmann::json{{"kernel", Kernel::repr(k)},
                                {"key", k.key},
                                {"stages", texts},
                                {"stages_ms", times},
                                {"compile_times", stage_times.json()},
                                {"registers", k.registers},
                                {"spill_bytes", k.spill_bytes},
                                {"assembler_log",
                                 k.stages.count("cubin_log") ? k.stages.at("cubin_log") : ""}}
                     .dump()
              << "\n";
    return;
  }
  std::cout << text_of(last);
}

} // namespace

void add_compile_command(CLI::App &app, CommonOptions &common) {
  auto o = std::make_shared<CompileOptions>();
  CLI::App *sub = app.add_subcommand("compile", "Compile one specialization without launching and show its stages");
  sub->add_option("FILE", o->file, "the kernel file")->required()->type_name("");
  sub->add_option("KERNEL", o->kernel, "the @triton.jit function")->required()->type_name("");
  sub->add_option("SPECS", o->specs,
                  "NAME=SPEC: *fp32, *fp16:D, i32, i32:D, fp32, u1, or a constexpr value ('gelu' "
                  "quoted is a str "
                  "even where a jit function is named gelu)")
      ->type_name("NAME=SPEC");
  sub->add_option("--target", o->target, "cpu (the host) or cuda:sm_90")->type_name("T");
  sub->add_option("--emit", o->emit, "ir, llir, ptx, cubin, obj or all (default: llir for cpu)")->type_name("KIND");
  sub->add_option("--out", o->out, "write the stages to DIR instead of printing the last")->type_name("DIR");
  require_num_warps(
      sub->add_option("--num-warps", o->num_warps, "the num_warps option")->type_name("N"));
  require_at_least(
      sub->add_option("--num-stages", o->num_stages, "the num_stages option")->type_name("N"), 0);
  sub->add_flag("--debug", o->debug, "compile with debug=True");
  require_at_least(
      sub->add_option("--repeat", o->repeat,
                      "compile N times after an untimed compile of another kernel: cold "
                      "compiles in a warm process (-v: time by stage, first and median)")
          ->type_name("N"),
      1);
  add_common_options(*sub, common);
  sub->callback([o, &common] { compile(*o, common); });
}

} // namespace kiln::cli
