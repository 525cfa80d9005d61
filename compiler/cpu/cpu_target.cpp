// The CPU target's entry points: one program per call of <kernel>.program,
// and <kernel>(args, grid, begin, end) running a range of programs.
#include "compiler/llvm/lowering.hpp"
#include "compiler/llvm/target_lowering.hpp"

#include <stdexcept>

#include "kiln/error.hpp"

namespace kiln::llvmgen::detail {
/// The host CPU: one program is one call, holding whole blocks; the grid
/// runs on oneTBB (runtime/cpu_driver). Masks branch; LLVM's intrinsics do
/// the math (libm / libmvec); nothing is shared between programs.
class CpuTarget final : public TargetLowering {
public:
  explicit CpuTarget(Lowering &l) : l_(l), b_(l.b_), mod_(l.mod_), ctx_(l.ctx_) {}

  bool distributes_blocks() const override { return false; }
  void define_kernel(const ir::Function &k) override { define_entry(k, define_program(k)); }
  MathLibrary math_library() const override { return MathLibrary::Libm; }
  llvm::Value *unary_math(UnaryOp, llvm::Value *, const Type &) override { return nullptr; }
  llvm::Value *binary_math(BinaryOp, llvm::Value *, llvm::Value *, const Type &) override {
    return nullptr;
  }
  llvm::Value *masked_load(llvm::Value *, llvm::Value *, llvm::Value *, DType) override {
    return nullptr;
  }
  bool masked_store(llvm::Value *, llvm::Value *, llvm::Value *) override { return false; }
  std::vector<llvm::Value *> vector_load(llvm::Value *, llvm::Value *,
                                         const std::vector<llvm::Value *> &, DType) override {
    throw std::logic_error(
        "kiln internal error: a vector access on the cpu target (LLVM vectorizes loops there)");
  }
  void vector_store(llvm::Value *, llvm::Value *, const std::vector<llvm::Value *> &) override {
    throw std::logic_error(
        "kiln internal error: a vector access on the cpu target (LLVM vectorizes loops there)");
  }
  void barrier() override {} // one program is one thread: nothing to wait for
  llvm::Value *shuffle(Shuffle, llvm::Value *, int) override {
    throw std::logic_error("kiln internal error: a warp shuffle on the cpu target");
  }
  llvm::Value *shared_memory(unsigned) override {
    throw std::logic_error("kiln internal error: shared memory on the cpu target");
  }
  unsigned shared_bytes() const override { return 0; }

private:
  llvm::Function *define_program(const ir::Function &k);
  void define_entry(const ir::Function &k, llvm::Function *program);

  Lowering &l_;
  llvm::IRBuilder<> &b_;
  std::unique_ptr<llvm::Module> &mod_;
  llvm::LLVMContext &ctx_;
};

auto CpuTarget::define_program(const ir::Function &k) -> llvm::Function * {
  llvm::Type *i32 = b_.getInt32Ty();
  auto *ty = llvm::FunctionType::get(
      b_.getVoidTy(), {b_.getPtrTy(), i32, i32, i32, i32, i32, i32, b_.getPtrTy()}, false);
  llvm::Function *fn =
      llvm::Function::Create(ty, llvm::Function::InternalLinkage, k.name + ".program", mod_.get());
  fn->addFnAttr(llvm::Attribute::AlwaysInline);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addParamAttr(7, llvm::Attribute::NoAlias);
  l_.fn_ = fn;
  l_.scratch_ = fn->getArg(7);
  l_.scratch_fn_ = fn;
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
  llvm::Value *args = fn->getArg(0);
  for (int a = 0; a < 3; ++a) {
    l_.pid_[a] = fn->getArg(1 + a);
    l_.nprog_[a] = fn->getArg(4 + a);
  }
  for (size_t i = 0; i < k.body.args.size(); ++i) {
    const ir::Value *p = k.body.args[i];
    llvm::Value *slot =
        b_.CreateLoad(b_.getPtrTy(), b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), args, i));
    llvm::Value *v =
        p->type.pointer ? b_.CreateLoad(b_.getPtrTy(), slot)
                        : l_.from_mem(b_.CreateLoad(l_.mem_type(p->type.elem), slot), p->type.elem);
    if (p->type.pointer && p->facts.divisible16)
      b_.CreateAlignmentAssumption(mod_->getDataLayout(), v, 16);
    l_.set(p, v, nullptr);
  }
  l_.assert_record_ = b_.CreateLoad(
      b_.getPtrTy(), b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), args, k.body.args.size()));
  if (l_.opts_.debug)
    l_.extents_ = b_.CreateLoad(
        b_.getPtrTy(), b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), l_.assert_record_, 32));
  l_.lower_ops(k.body, false);
  return fn;
}

auto CpuTarget::define_entry(const ir::Function &k, llvm::Function *program) -> void {
  llvm::Type *i32 = b_.getInt32Ty(), *i64 = b_.getInt64Ty();
  auto *ty = llvm::FunctionType::get(
      b_.getVoidTy(), {b_.getPtrTy(), b_.getPtrTy(), i64, i64, b_.getPtrTy()}, false);
  llvm::Function *fn =
      llvm::Function::Create(ty, llvm::Function::ExternalLinkage, k.name, mod_.get());
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  l_.fn_ = fn;
  llvm::BasicBlock *entry = llvm::BasicBlock::Create(ctx_, "entry", fn);
  b_.SetInsertPoint(entry);
  llvm::Value *grid = fn->getArg(1);
  llvm::Value *g[3];
  for (int a = 0; a < 3; ++a)
    g[a] = b_.CreateLoad(i32, b_.CreateConstInBoundsGEP1_64(i32, grid, a));
  llvm::Value *begin = fn->getArg(2), *end = fn->getArg(3);
  llvm::BasicBlock *head = l_.new_bb("programs"), *exit = l_.new_bb("done");
  b_.CreateCondBr(b_.CreateICmpULT(begin, end), head, exit);
  b_.SetInsertPoint(head);
  llvm::PHINode *lin = b_.CreatePHI(i64, 2);
  lin->addIncoming(begin, entry);
  llvm::Value *gx = b_.CreateZExt(g[0], i64), *gy = b_.CreateZExt(g[1], i64);
  llvm::Value *x = b_.CreateURem(lin, gx);
  llvm::Value *rest = b_.CreateUDiv(lin, gx);
  llvm::Value *y = b_.CreateURem(rest, gy);
  llvm::Value *z = b_.CreateUDiv(rest, gy);
  b_.CreateCall(program, {fn->getArg(0), b_.CreateTrunc(x, i32), b_.CreateTrunc(y, i32),
                          b_.CreateTrunc(z, i32), g[0], g[1], g[2], fn->getArg(4)});
  llvm::Value *next = b_.CreateAdd(lin, b_.getInt64(1));
  lin->addIncoming(next, b_.GetInsertBlock());
  b_.CreateCondBr(b_.CreateICmpULT(next, end), head, exit);
  b_.SetInsertPoint(exit);
  b_.CreateRetVoid();
}

std::unique_ptr<TargetLowering> make_cpu_target(Lowering &l) {
  return std::make_unique<CpuTarget>(l);
}

} // namespace kiln::llvmgen::detail
