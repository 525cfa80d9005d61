# Why: on the GPU, LLVM runs O2 without the loop and SLP vectorizers (the
# lowering emits 16-byte accesses itself; the SLP vectorizer found nothing
# in any shared kernel and took a quarter of matmul's O3), so the GPU's
# LLVM IR has no vector arithmetic while the CPU's loops stay vectorized,
# and the 16-byte global accesses are still there in the PTX.
# `kiln compile -v --repeat N` times cold compiles by stage.
# RUN: %kiln compile --target cuda:sm_90 --emit llir %shared/kernels/layernorm.py layernorm_fwd 'x_ptr=*fp16:D' 'y_ptr=*fp16:D' 'w_ptr=*fp16:D' 'b_ptr=*fp16:D' 'mean_ptr=*fp32:D' 'rstd_ptr=*fp32:D' stride=i32:D n_cols=i32:D eps=fp32 BLOCK=4096 --num-warps 8 | %FileCheck %s --check-prefix=GPU
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/layernorm.py layernorm_fwd 'x_ptr=*fp16:D' 'y_ptr=*fp16:D' 'w_ptr=*fp16:D' 'b_ptr=*fp16:D' 'mean_ptr=*fp32:D' 'rstd_ptr=*fp32:D' stride=i32:D n_cols=i32:D eps=fp32 BLOCK=4096 --num-warps 8 | %FileCheck %s --check-prefix=PTX
# RUN: %kiln compile --target cpu --emit llir %shared/kernels/vector_add.py add_kernel 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' 'out_ptr=*fp32:D' n=i32 BLOCK=1024 | %FileCheck %s --check-prefix=CPU
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/vector_add.py add_kernel 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' 'out_ptr=*fp32:D' n=i32 BLOCK=1024 -v --repeat 2 2>&1 >/dev/null | %FileCheck %s --check-prefix=TIMES
# GPU: define ptx_kernel void @layernorm_fwd
# GPU-NOT: {{(fadd|fmul|fsub|load|store)}} <{{[0-9]+}} x
# PTX: ld.global.v4.b32
# PTX: st.global.v4.b32
# CPU: fadd <{{[0-9]+}} x float>
# TIMES: compile time by stage, ms (each a cold compile after a compile of another kernel)
# TIMES: first{{ +}}median (min-max) of 2
# TIMES: ir
# TIMES: opt
# TIMES: ptx
# TIMES: cubin
# TIMES: total
