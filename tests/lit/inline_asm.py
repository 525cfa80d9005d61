# Why: tl.inline_asm_elementwise hands the user's PTX its elements as Triton
# does: `pack` elements per asm call, narrow ones packed into 32-bit registers
# (two halves for add.f16x2, four bytes for one `r` operand), several results
# as one call's outputs. The CPU refuses it at the call; bad constraints are
# an error at the call; LLVM's own inline-asm errors do not end the process.
# RUN: %kiln compile --target cuda:sm_90 --emit ir %s asm_kernel 'x_ptr=*fp32:D' 'h_ptr=*fp16:D' 'a_ptr=*u8:D' 'y_ptr=*fp32:D' 'h2_ptr=*fp16:D' 'w_ptr=*i32:D' BLOCK=512 | %FileCheck %s --check-prefix=IR
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s asm_kernel 'x_ptr=*fp32:D' 'h_ptr=*fp16:D' 'a_ptr=*u8:D' 'y_ptr=*fp32:D' 'h2_ptr=*fp16:D' 'w_ptr=*i32:D' BLOCK=512 | %FileCheck %s --check-prefix=PTX
# RUN: (%kiln compile --target cpu %s asm_kernel 'x_ptr=*fp32:D' 'h_ptr=*fp16:D' 'a_ptr=*u8:D' 'y_ptr=*fp32:D' 'h2_ptr=*fp16:D' 'w_ptr=*i32:D' BLOCK=512 2>&1 || true) | %FileCheck %s --check-prefix=CPU
# RUN: (%kiln compile --target cuda:sm_90 --emit ptx %s wrong_asm 'x_ptr=*fp32' BLOCK=128 'ASM=mov.b32 $0, $1;' PACK=2 2>&1 || true) | %FileCheck %s --check-prefix=COUNT
# RUN: (%kiln compile --target cuda:sm_90 --emit ptx %s wrong_asm 'x_ptr=*fp32' BLOCK=128 'ASM=mov.b32 $0, $7;' PACK=1 2>&1 || true) | %FileCheck %s --check-prefix=OPERAND
# RUN: (%kiln compile --target cuda:sm_90 --emit ptx %s wrong_asm 'x_ptr=*fp32' BLOCK=128 'ASM=mov.b32 $0, ${1:q};' PACK=1 2>&1 || true) | %FileCheck %s --check-prefix=MODIFIER
# IR: inline_asm %{{[0-9]+}} "tanh.approx.f32 $0, $1;" "=f,f" pack=1 pure : <512xf32>
# IR: inline_asm %{{[0-9]+}}, %{{[0-9]+}} "add.rn.f16x2 $0, $1, $2;" "=r,r,r" pack=2 pure : <512xf16>
# IR: %{{[0-9]+}}, %{{[0-9]+}} = inline_asm {{.*}} pack=4 : <512xi32>{{.*}}, <512xi32>
# PTX: tanh.approx.f32
# PTX: add.rn.f16x2 %r{{[0-9]+}}, [[PAIR:%r[0-9]+]], [[PAIR]];
# PTX: prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, 0, 0x7771;
# CPU: tl.inline_asm_elementwise runs PTX, which only the cuda target can
# COUNT: the constraints "=r,r" name 1 output(s) and 1 input(s), but with pack=2 each asm call takes 2 output and 2 input registers
# OPERAND: the asm uses $7 but has only 2 operands ($0..$1: the outputs, then the inputs)
# MODIFIER: LLVM rejected the kernel in code generation: invalid operand in inline asm
import triton
import triton.language as tl


@triton.jit
def asm_kernel(x_ptr, h_ptr, a_ptr, y_ptr, h2_ptr, w_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y)
    h = tl.load(h_ptr + offs)
    h2 = tl.inline_asm_elementwise("add.rn.f16x2 $0, $1, $2;", "=r,r,r", [h, h], dtype=tl.float16, is_pure=True,
                                   pack=2)
    tl.store(h2_ptr + offs, h2)
    a = tl.load(a_ptr + offs)
    # Four bytes in one register: the high byte of each, then its byte count.
    lo, hi = tl.inline_asm_elementwise(
        """
        prmt.b32 $0, $8, 0, 0x7770;
        prmt.b32 $1, $8, 0, 0x7771;
        prmt.b32 $2, $8, 0, 0x7772;
        prmt.b32 $3, $8, 0, 0x7773;
        mov.b32 $4, 1;
        mov.b32 $5, 2;
        mov.b32 $6, 3;
        mov.b32 $7, 4;
        """,
        "=r,=r,=r,=r,=r,=r,=r,=r,r", [a], dtype=(tl.int32, tl.int32), is_pure=False, pack=4)
    tl.store(w_ptr + offs, lo + hi)


@triton.jit
def wrong_asm(x_ptr, BLOCK: tl.constexpr, ASM: tl.constexpr, PACK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise(ASM, "=r,r", [x], dtype=tl.float32, is_pure=True, pack=PACK)
    tl.store(x_ptr + offs, y)
