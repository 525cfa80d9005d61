#include "compiler/llvm/half_phis.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>

#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kiln::llvmgen {

namespace {

/// The half `v` is an exact widening of, or null.
llvm::Value *half_source(llvm::Value *v) {
  if (auto *ext = llvm::dyn_cast<llvm::FPExtInst>(v); ext && ext->getSrcTy()->isHalfTy())
    return ext->getOperand(0);
  if (auto *c = llvm::dyn_cast<llvm::ConstantFP>(v)) {
    bool lost = false;
    llvm::APFloat h = c->getValueAPF();
    h.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven, &lost);
    if (!lost)
      return llvm::ConstantFP::get(v->getContext(), h);
  }
  if (llvm::isa<llvm::PoisonValue>(v) || llvm::isa<llvm::UndefValue>(v))
    return llvm::PoisonValue::get(llvm::Type::getHalfTy(v->getContext()));
  return nullptr;
}

} // namespace

bool narrow_half_phis(llvm::Function &f) {
  // Candidates: float phis; drop those with an incoming value that is no
  // half's widening nor a candidate, until none drops (phis of phis: loops
  // inside loops).
  std::unordered_set<llvm::PHINode *> cand;
  for (llvm::BasicBlock &bb : f)
    for (llvm::PHINode &phi : bb.phis())
      if (phi.getType()->isFloatTy())
        cand.insert(&phi);
  for (bool dropped = true; dropped;) {
    dropped = false;
    for (auto it = cand.begin(); it != cand.end();) {
      // One incoming value at least must be no constant: a phi of
      // constants alone would gain a conversion.
      bool ok = true, widened = false;
      for (llvm::Value *in : (*it)->incoming_values()) {
        auto *p = llvm::dyn_cast<llvm::PHINode>(in);
        ok = ok && ((p && cand.count(p)) || half_source(in));
        widened = widened || (p && cand.count(p)) || llvm::isa<llvm::FPExtInst>(in);
      }
      if (ok && widened) {
        ++it;
      } else {
        it = cand.erase(it);
        dropped = true;
      }
    }
  }
  if (cand.empty())
    return false;
  std::unordered_map<llvm::PHINode *, llvm::PHINode *> half;
  llvm::Type *ht = llvm::Type::getHalfTy(f.getContext());
  for (llvm::PHINode *p : cand)
    half[p] = llvm::PHINode::Create(ht, p->getNumIncomingValues(), p->getName() + ".h", p);
  for (llvm::PHINode *p : cand) {
    for (unsigned i = 0; i < p->getNumIncomingValues(); ++i) {
      llvm::Value *in = p->getIncomingValue(i);
      auto *q = llvm::dyn_cast<llvm::PHINode>(in);
      half[p]->addIncoming(q && cand.count(q) ? half[q] : half_source(in), p->getIncomingBlock(i));
    }
  }
  for (llvm::PHINode *p : cand) {
    llvm::IRBuilder<> b(p->getParent(), p->getParent()->getFirstInsertionPt());
    p->replaceAllUsesWith(b.CreateFPExt(half[p], p->getType()));
  }
  for (llvm::PHINode *p : cand)
    p->eraseFromParent();
  return true;
}

} // namespace kiln::llvmgen
