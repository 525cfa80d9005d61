# Why: DeepSeek-V3's weight_dequant_kernel loads a 128x128 fp8 block (16
# elements, one 16-byte load, a run) and stores it as bf16. The store took
# its pointer's access layout (8-element runs), so the whole block went
# through shared memory to it, and so did the offsets and the mask, shared
# by the load and the store: 255 registers, a third of Triton's speed. The
# store now writes in its value's layout where that moves as many bytes an
# instruction (two 16-byte stores a run), and index math stored once for
# several uses is recomputed in a use's layout rather than converted.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s dequant 'x_ptr=*fp8e4nv:D' 's_ptr=*fp32:D' 'y_ptr=*bf16:D' M=i32:D N=i32:D BLOCK_SIZE=128 | %FileCheck %s
# CHECK: .entry dequant
# CHECK-NOT: bar.sync
# CHECK-NOT: st.shared
# CHECK: ld.global.v4.b32
# CHECK: cvt.rn.f16x2.e4m3x2
# CHECK: st.global.v4.b32
# CHECK-NOT: ld.shared
import triton
import triton.language as tl


@triton.jit
def dequant(x_ptr, s_ptr, y_ptr, M, N, BLOCK_SIZE: tl.constexpr):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    n = tl.cdiv(N, BLOCK_SIZE)
    offs_m = pid_m * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    offs_n = pid_n * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    offs = offs_m[:, None] * N + offs_n[None, :]
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    s = tl.load(s_ptr + pid_m * n + pid_n)
    tl.store(y_ptr + offs, x * s, mask=mask)
