#include "compiler/llvm/codegen.hpp"

#include <mutex>

#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Triple.h>

#include "kiln/error.hpp"

namespace kiln::llvmgen {

namespace {

void initialize_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeX86AsmParser();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

} // namespace

std::unique_ptr<llvm::TargetMachine> target_machine(const compiler::Target &t, const Options &o) {
  initialize_once();
  std::string err;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(t.triple, err);
  if (!target)
    throw RuntimeError("LLVM has no target for " + t.triple + ": " + err);
  llvm::TargetOptions to;
  to.AllowFPOpFusion = o.enable_fp_fusion ? llvm::FPOpFusion::Fast : llvm::FPOpFusion::Strict;
  // NVPTX at -O3 runs GVN twice where -O2 runs EarlyCSE: on every shared
  // kernel the PTX is the same, and matmul's code generation ~35 ms faster.
  const llvm::CodeGenOptLevel level = t.kind == compiler::Target::Kind::Cuda
                                          ? llvm::CodeGenOptLevel::Default
                                          : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      t.triple, t.cpu, t.features, to, llvm::Reloc::PIC_, std::nullopt, level));
  if (!tm)
    throw RuntimeError("LLVM could not create a target machine for " + t.str());
  return tm;
}

void prepare_module(llvm::Module &m, llvm::TargetMachine &tm) {
  m.setTargetTriple(tm.getTargetTriple().str());
  m.setDataLayout(tm.createDataLayout());
}

/// The GPU's optimization pipeline. kiln's IR for a GPU kernel is scalar code
/// per thread, its vector accesses already written as PTX, its loops
/// software-pipelined by kiln, and ptxas optimizes it all again (it unrolls,
/// hoists and schedules on its own). What it needs from LLVM is libdevice
/// inlined and folded for the target, then its index arithmetic simplified and
/// shared (CSE, combining, hoisting out of rotated loops, whose one branch an
/// iteration O2 gave them too) and the alignment of shared memory known, so
/// the code generator can vectorize those accesses. That is this list; O2
/// gave the same or longer PTX on the shared kernels (softmax the same,
/// attention 998 instructions against 989, matmul 1,120 against 1,089) in
/// up to 2.5x the time (matmul 54 ms against 22).
constexpr const char *kGpuPipeline =
    "always-inline,cgscc(inline),globaldce,"
    "function(nvvm-reflect,sroa,early-cse<memssa>,instcombine<no-verify-fixpoint>,simplifycfg,"
    "loop-mssa(licm,loop-rotate,licm),gvn,instcombine<no-verify-fixpoint>,adce,simplifycfg,infer-"
    "alignment)";

void optimize(llvm::Module &m, llvm::TargetMachine &tm, const std::function<bool()> &stop) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::Triple triple(m.getTargetTriple());
  const bool gpu = triple.isNVPTX();
  llvm::PipelineTuningOptions pto; // the CPU's O3, with both vectorizers
  pto.LoopVectorization = true;
  pto.SLPVectorization = true;
  pto.LoopUnrolling = true;
  llvm::PassInstrumentationCallbacks pic;
  bool stopped = false;
  if (stop)
    pic.registerShouldRunOptionalPassCallback([&](llvm::StringRef, llvm::Any) {
      stopped = stopped || stop();
      return !stopped;
    });
  llvm::PassBuilder pb(&tm, pto, std::nullopt, stop ? &pic : nullptr);

  llvm::TargetLibraryInfoImpl tlii(triple);
  if (triple.isX86())
    tlii.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, triple);
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });

  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  if (gpu) {
    if (llvm::Error e = pb.parsePassPipeline(mpm, kGpuPipeline))
      throw RuntimeError("kiln's GPU pass pipeline does not parse: " +
                         llvm::toString(std::move(e)));
  } else {
    mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  }
  mpm.run(m, mam);
}

namespace {

void emit(llvm::Module &m, llvm::TargetMachine &tm, llvm::CodeGenFileType kind, llvm::raw_pwrite_stream &os) {
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, kind))
    throw RuntimeError("LLVM cannot emit code for " + tm.getTargetTriple().str());
  pm.run(m);
}

} // namespace

std::vector<uint8_t> emit_object(llvm::Module &m, llvm::TargetMachine &tm) {
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  emit(m, tm, llvm::CodeGenFileType::ObjectFile, os);
  return std::vector<uint8_t>(buf.begin(), buf.end());
}

std::string emit_assembly(llvm::Module &m, llvm::TargetMachine &tm) {
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  emit(m, tm, llvm::CodeGenFileType::AssemblyFile, os);
  return std::string(buf.begin(), buf.end());
}

std::string print_module(const llvm::Module &m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return os.str();
}

} // namespace kiln::llvmgen
