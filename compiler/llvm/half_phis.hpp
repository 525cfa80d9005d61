// f16 values live in float registers (Lowering::reg_type), so a loop that
// carries one (an f16 accumulator: tl.dot with out_dtype=tl.float16) carries
// a float phi of fpext(half) values, and each iteration rounds it back to
// half for the instruction that wants halves: a conversion per element per
// iteration that nothing folds (InstCombine pulls casts through a phi only
// when every incoming value is one, and the loop's first value is a
// constant). narrow_half_phis makes such phis half phis, after which the
// round trips fold.
#pragma once

namespace llvm {
class Function;
}

namespace kiln::llvmgen {

/// Rewrites each float phi whose incoming values are all fpext of a half,
/// constants a half holds exactly, or such phis, as fpext of a half phi.
/// Returns whether it changed anything.
bool narrow_half_phis(llvm::Function &f);

} // namespace kiln::llvmgen
