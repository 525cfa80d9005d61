#!/usr/bin/env python3
"""Real kernel files on the GPU: kiln beside Triton, same file, same inputs.

For each case (a kernel of a public repository, unchanged) this runs the
kernel with Triton (the file's own module, executed statement by statement
so that host-side imports kiln's checks do not need cannot stop it) and with
`kiln run --backend cuda`, on the same NumPy-made inputs, then compares the
outputs and the median time of one launch + synchronize (the same method on
both sides, so launch overhead counts for both).

usage (on the GPU machine, torch and triton importable):
  python3 gpu_parity.py --root CORPUS --kiln KILN [--repeat 50] [--json OUT]
CORPUS is laid out as bench/real_triton/README.md says.
"""
import argparse, ast, json, os, subprocess, sys, tempfile, time

import numpy as np

from bit_patterns import bf16_bits, bf16_values, e4m3_bits, e4m3_values

# (file, kernel, grid, args, options). Args: ("in", shape, dtype) random
# input, ("out", shape, dtype) zero-filled output that is compared, or a
# scalar / constexpr value.
ROWS, COLS = 4096, 4096
CASES = [
    ("linkedin__Liger-Kernel/src/liger_kernel/ops/rms_norm.py", "_rms_norm_forward_kernel", (ROWS,),
     dict(Y_ptr=("out", (ROWS, COLS), "bf16"), Y_row_stride=COLS, X_ptr=("in", (ROWS, COLS), "bf16"),
          X_row_stride=COLS, W_ptr=("in", (COLS,), "bf16"), W_row_stride=1, RSTD_ptr=("out", (ROWS,), "f32"),
          RSTD_row_stride=1, n_cols=COLS, eps=1e-6, offset=0.0, casting_mode=0, elementwise_affine=True,
          BLOCK_SIZE=4096), dict(num_warps=8)),
    ("linkedin__Liger-Kernel/src/liger_kernel/ops/layer_norm.py", "_layer_norm_forward_kernel", (ROWS,),
     dict(Y_ptr=("out", (ROWS, COLS), "bf16"), Y_row_stride=COLS, X_ptr=("in", (ROWS, COLS), "bf16"),
          X_row_stride=COLS, W_ptr=("in", (COLS,), "bf16"), W_row_stride=1, B_ptr=("in", (COLS,), "bf16"),
          B_row_stride=1, Mean_ptr=("out", (ROWS,), "bf16"), Mean_row_stride=1, RSTD_ptr=("out", (ROWS,), "bf16"),
          RSTD_row_stride=1, n_cols=COLS, eps=1e-5, BLOCK_SIZE=4096), dict(num_warps=8)),
    ("linkedin__Liger-Kernel/src/liger_kernel/ops/swiglu.py", "_swiglu_forward_kernel", (ROWS,),
     dict(a_ptr=("in", (ROWS, 11008), "bf16"), b_ptr=("in", (ROWS, 11008), "bf16"),
          c_ptr=("out", (ROWS, 11008), "bf16"), stride=11008, gate_multiplier=1.0, n_cols=11008,
          BLOCK_SIZE=16384), dict(num_warps=32)),
    ("linkedin__Liger-Kernel/src/liger_kernel/ops/geglu.py", "_geglu_tanh_forward_kernel", (ROWS,),
     dict(a=("in", (ROWS, 11008), "bf16"), b=("in", (ROWS, 11008), "bf16"), c=("out", (ROWS, 11008), "bf16"),
          stride=11008, n_cols=11008, BLOCK_SIZE=16384), dict(num_warps=32)),
    ("linkedin__Liger-Kernel/src/liger_kernel/ops/softmax.py", "_softmax_single_block_forward_kernel", (ROWS,),
     dict(Y_ptr=("out", (ROWS, COLS), "f32"), Y_row_stride=COLS, X_ptr=("in", (ROWS, COLS), "f32"),
          X_row_stride=COLS, n_cols=COLS, BLOCK_SIZE=4096), dict(num_warps=8)),
    ("linkedin__Liger-Kernel/src/liger_kernel/ops/kl_div.py", "_kldiv_kernel_forward", (1024,),
     dict(y_ptr=("in", (1024, 8192), "f32"), y_stride=8192, gt_ptr=("prob", (1024, 8192), "f32"), gt_stride=8192,
          loss_ptr=("out", (1024,), "f32"), loss_stride=1, n_cols=8192, eps=1e-10, BLOCK_SIZE=8192,
          log_target=False, reduction=3), dict(num_warps=32)),
    ("unslothai__unsloth/unsloth/kernels/rms_layernorm.py", "_rms_layernorm_forward", (ROWS,),
     dict(Y=("out", (ROWS, COLS), "bf16"), Y_row_stride=COLS, X=("in", (ROWS, COLS), "bf16"), X_row_stride=COLS,
          W=("in", (COLS,), "bf16"), W_row_stride=1, r=("out", (ROWS,), "f32"), r_row_stride=1, n_cols=COLS,
          eps=1e-6, BLOCK_SIZE=4096), dict(num_warps=8)),
    ("unslothai__unsloth/unsloth/kernels/swiglu.py", "_fg_kernel", ((ROWS * 11008 + 1023) // 1024,),
     dict(e=("in", (ROWS * 11008,), "bf16"), g=("in", (ROWS * 11008,), "bf16"), h=("out", (ROWS * 11008,), "bf16"),
          n_elements=ROWS * 11008, BLOCK_SIZE=1024, LONG_INDEXING=0), dict()),
    ("FlagOpen__FlagGems/src/flag_gems/ops/rms_norm.py", "rms_norm_kernel", (ROWS,),
     dict(out_ptr=("out", (ROWS, COLS), "bf16"), INV_RMS=("out", (ROWS,), "f32"), in_ptr=("in", (ROWS, COLS), "bf16"),
          w_ptr=("in", (COLS,), "bf16"), y_stride_r=COLS, y_stride_c=1, x_stride_r=COLS, x_stride_c=1, N=COLS,
          eps=1e-5, BLOCK_SIZE=4096), dict()),
    ("triton-lang__triton/python/tutorials/05-layer-norm.py", "_layer_norm_fwd_fused", (ROWS,),
     dict(X=("in", (ROWS, COLS), "f16"), Y=("out", (ROWS, COLS), "f16"), W=("in", (COLS,), "f16"),
          B=("in", (COLS,), "f16"), Mean=("out", (ROWS,), "f32"), Rstd=("out", (ROWS,), "f32"), stride=COLS, N=COLS,
          eps=1e-5, BLOCK_SIZE=1024), dict(num_warps=8)),
    ("triton-lang__triton/python/tutorials/03-matrix-multiplication.py", "matmul_kernel", (32 * 16,),
     dict(a_ptr=("in", (4096, 4096), "f16"), b_ptr=("in", (4096, 4096), "f16"), c_ptr=("out", (4096, 4096), "f16"),
          M=4096, N=4096, K=4096, stride_am=4096, stride_ak=1, stride_bk=4096, stride_bn=1, stride_cm=4096,
          stride_cn=1, BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, ACTIVATION="none"),
     dict(num_warps=8, num_stages=3)),
    ("triton-lang__triton/python/tutorials/02-fused-softmax.py", "softmax_kernel", (132 * 4,),
     dict(output_ptr=("out", (ROWS, 1823), "f32"), input_ptr=("in", (ROWS, 1823), "f32"), input_row_stride=1823,
          output_row_stride=1823, n_rows=ROWS, n_cols=1823, BLOCK_SIZE=2048, num_stages=4), dict(num_warps=8)),
]

# Tensor-core kernels of the tutorials, as Hopper runs them: pointers, host
# descriptors (a 4th tuple element is the block shape: the argument is
# TensorDescriptor.from_tensor(t, block), kiln's tensordesc(...)) and
# device-side tl.make_tensor_descriptor.
MM = 4096
MM_BLOCKS = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8)
MM_TILES = (MM // 128) * (MM // 256)
NUM_SMS = 132
TUT09 = "triton-lang__triton/python/tutorials/09-persistent-matmul.py"
TUT06 = "triton-lang__triton/python/tutorials/06-fused-attention.py"
MM_PTRS = dict(a_ptr=("in", (MM, MM), "f16"), b_ptr=("in", (MM, MM), "f16"), c_ptr=("out", (MM, MM), "f16"),
               M=MM, N=MM, K=MM, stride_am=MM, stride_ak=1, stride_bk=MM, stride_bn=1, stride_cm=MM, stride_cn=1)
MM_DESCS = dict(a_desc=("in", (MM, MM), "f16", (128, 64)), b_desc=("in", (MM, MM), "f16", (256, 64)),
                c_desc=("out", (MM, MM), "f16", (128, 256)), M=MM, N=MM, K=MM)
MM_OPTS = dict(num_warps=8, num_stages=3)


def attention_case(d, causal, bm, bn, warps):
    z, h, n = 4, 32, 4096
    rows = z * h * n
    qkv = {name: (kind, (rows, d), "f16", (bn if name in ("desc_k", "desc_v") else bm, d))
           for name, kind in (("desc_q", "in"), ("desc_k", "in"), ("desc_v", "in"), ("desc_o", "out"))}
    args = dict(sm_scale=0.5, M=("out", (rows,), "f32"), Z=z, H=h, **qkv, N_CTX=n, HEAD_DIM=d, BLOCK_M=bm,
                BLOCK_N=bn, FP8_OUTPUT=False, STAGE=3 if causal else 1, warp_specialize=False, IS_HOPPER=True)
    return (TUT06, "_attn_fwd", (n // bm, z * h), args, dict(num_warps=warps, num_stages=3))


CASES = [
    (TUT09, "matmul_kernel", (MM_TILES,), dict(MM_PTRS, **MM_BLOCKS), MM_OPTS),
    (TUT09, "matmul_kernel_persistent", (NUM_SMS,), dict(MM_PTRS, **MM_BLOCKS, NUM_SMS=NUM_SMS), MM_OPTS),
    (TUT09, "matmul_kernel_tma", (MM_TILES,), dict(MM_DESCS, **MM_BLOCKS, FP8_OUTPUT=False, WARP_SPECIALIZE=False),
     MM_OPTS),
    (TUT09, "matmul_kernel_tma_persistent", (NUM_SMS,),
     dict(MM_DESCS, c_desc=("out", (MM, MM), "f16", (128, 128)), **MM_BLOCKS, FP8_OUTPUT=False,
          EPILOGUE_SUBTILE=True, NUM_SMS=NUM_SMS, WARP_SPECIALIZE=False), MM_OPTS),
    (TUT09, "matmul_kernel_descriptor_persistent", (NUM_SMS,),
     dict(a_ptr=("in", (MM, MM), "f16"), b_ptr=("in", (MM, MM), "f16"), c_ptr=("out", (MM, MM), "f16"), M=MM, N=MM,
          K=MM, **MM_BLOCKS, EPILOGUE_SUBTILE=False, NUM_SMS=NUM_SMS, WARP_SPECIALIZE=False, FLATTEN=True), MM_OPTS),
    attention_case(64, False, 128, 64, 4),
    attention_case(64, True, 128, 64, 4),
    attention_case(128, False, 128, 64, 8),
    attention_case(128, True, 128, 64, 8),
] + CASES

# triton-lang/kernels: flash attention over block pointers (tl.advance in
# the loop, `@jit` imported from triton) and the matmul with dtype
# constexprs, AB_DTYPE=None, a ragged K (masked loads whose `other` is a
# (1, 1) block) and split-K by fp16 atomic adds.
TLK = "triton-lang__kernels/kernels/"


def tlk_attention_case(causal):
    z, h, n, d = 4, 32, 4096, 64
    qkv = {name: (kind, (z, h, n, d), "f16") for name, kind in (("Q", "in"), ("K", "in"), ("V", "in"), ("Out", "out"))}
    strides = {}
    for t in "qkvo":
        strides.update({f"stride_{t}z": h * n * d, f"stride_{t}h": n * d, f"stride_{t}{'m' if t in 'qo' else 'n'}": d,
                        f"stride_{t}{'k' if t != 'o' else 'n'}": 1})
    args = dict(Q=qkv["Q"], K=qkv["K"], V=qkv["V"], sm_scale=0.5, L=("out", (z * h, n), "f32"), Out=qkv["Out"],
                **strides, Z=z, H=h, N_CTX=n, Z_H_N_CTX=z * h * n, BLOCK_M=128, BLOCK_DMODEL=d, BLOCK_N=64,
                IS_CAUSAL=causal)
    return (TLK + "flash_attention.py", "_fwd_kernel", (n // 128, z * h), args, dict(num_warps=4, num_stages=4))


def tlk_matmul_case(m, n, k, even_k, fast_accum, split_k, ab_dtype):
    args = dict(A=("in", (m, k), "f16"), B=("in", (k, n), "f16"), C=("out", (m, n), "f16"), M=m, N=n, K=k,
                stride_am=k, stride_ak=1, stride_bk=n, stride_bn=1, stride_cm=n, stride_cn=1,
                acc_dtype="tl.float32", input_precision="tf32", fp8_fast_accum=fast_accum, BLOCK_M=128, BLOCK_N=128,
                BLOCK_K=32, GROUP_M=8, SPLIT_K=split_k, EVEN_K=even_k, AB_DTYPE=ab_dtype)
    return (TLK + "matmul.py", "_kernel", (((m + 127) // 128) * ((n + 127) // 128), split_k), args,
            dict(num_warps=4, num_stages=3))


CASES = [
    tlk_attention_case(False),
    tlk_attention_case(True),
    tlk_matmul_case(4096, 4096, 4096, True, True, 1, None),
    tlk_matmul_case(2048, 2048, 4000, False, False, 2, "tl.float16"),
] + CASES

# More kernels as their repositories launch them (grids and meta-parameters
# from each file's own host wrapper), chosen for what they exercise: in-place
# updates ("io": random inputs compared after the launch), 2-D reductions,
# scans, Philox random numbers, libdevice math, fp8 in and out, int64 labels
# ("idx": integers in [0, high)).
LIGER = "linkedin__Liger-Kernel/src/liger_kernel/ops/"
BT, VOCAB = 1024, 32000
SEQ, QH, KH, HD = 2048, 32, 8, 128
CASES = CASES + [
    (LIGER + "rope.py", "_triton_rope", (2 * SEQ,),
     dict(q_ptr=("io", (2 * SEQ, QH * HD), "bf16"), q_row_stride=QH * HD, k_ptr=("io", (2 * SEQ, KH * HD), "bf16"),
          k_row_stride=KH * HD, cos=("in", (SEQ, HD), "f32"), cos_row_stride=HD, sin=("in", (SEQ, HD), "f32"),
          sin_row_stride=HD, sl=SEQ, bs=2, cos_bs=1, n_qh=QH, n_kh=KH, hd=HD, pad_n_qh=QH, pad_n_kh=KH, pad_hd=HD,
          BLOCK_SIZE=HD, BACKWARD_PASS=False), dict()),
    (LIGER + "jsd.py", "_jsd_kernel", (BT,),
     dict(X_ptr=("in", (BT, VOCAB), "f32"), X_stride=VOCAB, Y_ptr=("in", (BT, VOCAB), "f32"), Y_stride=VOCAB,
          loss_ptr=("out", (BT, VOCAB), "f32"), loss_stride=VOCAB, dX_ptr=("out", (BT, VOCAB), "f32"),
          dX_stride=VOCAB, label_ptr=("in", (1,), "f32"), beta=0.5, n_non_ignore=BT, ignore_index=-100,
          n_cols=VOCAB, BLOCK_SIZE=32768, HAS_LABEL=False), dict()),
    (LIGER + "group_norm.py", "_group_norm_forward_kernel", (32, 32),
     dict(Y_ptr=("out", (32, 32, 8192), "f32"), Y_row_stride=32 * 8192, Y_col_stride=8192,
          X_ptr=("in", (32, 32, 8192), "f32"), X_row_stride=32 * 8192, X_col_stride=8192,
          Mean_ptr=("out", (32, 32), "f32"), Mean_row_stride=32, Mean_col_stride=1,
          RSTD_ptr=("out", (32, 32), "f32"), RSTD_row_stride=32, RSTD_col_stride=1, W_ptr=("in", (256,), "f32"),
          B_ptr=("in", (256,), "f32"), hidden_size=8192, channels_per_group=8, eps=1e-5, BLOCK_SIZE=8192), dict()),
    (LIGER + "fused_add_rms_norm.py", "_fused_add_rms_norm_forward_kernel", (ROWS,),
     dict(Y_ptr=("out", (ROWS, COLS), "bf16"), Y_row_stride=COLS, S_ptr=("out", (ROWS, COLS), "bf16"),
          S_row_stride=COLS, X_ptr=("in", (ROWS, COLS), "bf16"), X_row_stride=COLS, R_ptr=("in", (ROWS, COLS), "bf16"),
          R_row_stride=COLS, W_ptr=("in", (COLS,), "bf16"), W_row_stride=1, RSTD_ptr=("out", (ROWS,), "f32"),
          RSTD_row_stride=1, n_cols=COLS, eps=1e-6, offset=0.0, casting_mode=0, BLOCK_SIZE=4096), dict(num_warps=8)),
    (LIGER + "dyt.py", "_dyt_fwd_kernel", (COLS // 2048, ROWS),
     dict(X=("in", (ROWS, COLS), "bf16"), Y=("out", (ROWS, COLS), "bf16"), Alpha=("in", (1,), "f32"),
          Gamma=("in", (COLS,), "bf16"), Beta=("in", (COLS,), "bf16"), HAVE_BETA=True, N=COLS, BLOCK_N=2048),
     dict(num_warps=8)),
    (LIGER + "tvd.py", "_tv_distance_kernel", (BT,),
     dict(p_ptr=("prob", (BT, VOCAB), "f32"), p_stride=VOCAB, q_ptr=("prob", (BT, VOCAB), "f32"), q_stride=VOCAB,
          loss_ptr=("out", (BT,), "f32"), loss_stride=1, grads_ptr=("out", (BT, VOCAB), "f32"), grads_stride=VOCAB,
          label_ptr=("in", (1,), "f32"), ignore_index=-100, n_cols=VOCAB, scale=1.0 / BT, BLOCK_SIZE=16384,
          HAS_LABEL=False, reduction=3), dict(num_warps=16)),
    ("Dao-AILab__flash-attention/flash_attn/ops/triton/rotary.py", "rotary_kernel", (QH // 2, SEQ // 8, 2),
     dict(OUT=("out", (2, SEQ, QH, HD), "bf16"), X=("in", (2, SEQ, QH, HD), "bf16"), COS=("in", (SEQ, HD // 2), "bf16"),
          SIN=("in", (SEQ, HD // 2), "bf16"), CU_SEQLENS=None, SEQLEN_OFFSETS=0, seqlen=SEQ, nheads=QH, seqlen_ro=SEQ,
          stride_out_batch=SEQ * QH * HD, stride_out_seqlen=QH * HD, stride_out_nheads=HD, stride_out_headdim=1,
          stride_x_batch=SEQ * QH * HD, stride_x_seqlen=QH * HD, stride_x_nheads=HD, stride_x_headdim=1,
          ROTARY_DIM=HD, IS_SEQLEN_OFFSETS_TENSOR=False, IS_VARLEN=False, INTERLEAVED=False, CONJUGATE=False,
          BLOCK_H=2, BLOCK_M=8), dict()),
    ("Dao-AILab__flash-attention/flash_attn/ops/triton/cross_entropy.py", "cross_entropy_fwd_kernel", (BT,),
     dict(loss_ptr=("out", (BT,), "f32"), lse_ptr=("out", (BT,), "f32"), z_loss_ptr=("out", (BT,), "f32"),
          logits_ptr=("in", (BT, VOCAB), "bf16"), labels_ptr=("idx", (BT,), "i64", VOCAB), smoothing=0.0,
          logit_scale=1.0, lse_square_scale=0.0, ignore_index=-100, total_classes=VOCAB, class_start_idx=0,
          n_cols=VOCAB, logits_row_stride=VOCAB, BLOCK_SIZE=32768, HAS_SMOOTHING=False, SPLIT=False,
          PRECOMPUTED_LSE=False), dict(num_warps=16)),
    ("unslothai__unsloth/unsloth/kernels/rope_embedding.py", "_rope_embedding", (2 * SEQ, QH // 4),
     dict(Q=("io", (2 * SEQ, QH * HD), "bf16"), Q_row_stride=QH * HD, cos=("in", (SEQ, HD // 2), "bf16"),
          cos_row_stride=HD // 2, sin=("in", (SEQ, HD // 2), "bf16"), sin_row_stride=HD // 2, seqlen=SEQ,
          head_dim=HD, n_heads=QH, BACKWARD_PASS=False, BLOCK_SIZE=HD // 2), dict()),
    ("state-spaces__mamba/mamba_ssm/ops/triton/layernorm_gated.py", "_layer_norm_fwd_1pass_kernel", (ROWS, 2),
     dict(X=("in", (ROWS, COLS), "bf16"), Y=("out", (ROWS, COLS), "bf16"), W=("in", (COLS,), "bf16"),
          B=("in", (COLS,), "bf16"), Z=("in", (ROWS, COLS), "bf16"), Mean=("out", (2, ROWS), "f32"),
          Rstd=("out", (2, ROWS), "f32"), stride_x_row=COLS, stride_y_row=COLS, stride_z_row=COLS, M=ROWS,
          N=COLS // 2, eps=1e-6, BLOCK_N=2048, HAS_BIAS=True, HAS_Z=True, NORM_BEFORE_GATE=False,
          IS_RMS_NORM=False), dict(num_warps=8)),
    ("fla-org__flash-linear-attention/fla/modules/l2norm.py", "l2norm_fwd_kernel", (8 * SEQ * QH // 16,),
     dict(x=("in", (8 * SEQ * QH, HD), "bf16"), y=("out", (8 * SEQ * QH, HD), "bf16"),
          rstd=("out", (8 * SEQ * QH,), "f32"), eps=1e-6, T=8 * SEQ * QH, D=HD, BD=HD, NB=64, BT=16),
     dict(num_warps=4)),
    ("fla-org__flash-linear-attention/fla/ops/utils/cumsum.py", "chunk_local_cumsum_scalar_kernel", (SEQ // 64, 8 * QH),
     dict(s=("in", (8, SEQ, QH), "f32"), o=("out", (8, SEQ, QH), "f32"), scale=None, cu_seqlens=None,
          chunk_indices=None, T=SEQ, B=8, H=QH, BT=64, REVERSE=False, HAS_SCALE=False, IS_VARLEN=False), dict()),
    ("InternLM__lmdeploy/lmdeploy/pytorch/kernels/cuda/activation.py", "_silu_and_mul_kernel", (22, 2112),
     dict(gateup_ptr=("in", (ROWS, 2 * 11008), "bf16"), out_ptr=("out", (ROWS, 11008), "bf16"), N=11008, M=ROWS,
          stride_gum=2 * 11008, stride_gun=1, stride_om=11008, stride_on=1, BLOCK_SIZE_N=512),
     dict(num_warps=4, num_stages=1)),
    ("triton-lang__triton/python/tutorials/04-low-memory-dropout.py", "_seeded_dropout", (ROWS * COLS // 1024,),
     dict(x_ptr=("in", (ROWS * COLS,), "f32"), output_ptr=("out", (ROWS * COLS,), "f32"), n_elements=ROWS * COLS,
          p=0.5, seed=123, BLOCK_SIZE=1024), dict()),
    ("deepseek-ai__DeepSeek-V3/inference/kernel.py", "act_quant_kernel", (ROWS * 7168 // 128,),
     dict(x_ptr=("in", (ROWS, 7168), "bf16"), y_ptr=("out", (ROWS, 7168), "fp8"), s_ptr=("out", (ROWS, 56), "f32"),
          BLOCK_SIZE=128, scale_fmt="ue8m0"), dict()),
    ("deepseek-ai__DeepSeek-V3/inference/kernel.py", "weight_dequant_kernel", (7168 // 128, 2048 // 128),
     dict(x_ptr=("in", (7168, 2048), "fp8"), s_ptr=("in", (56, 16), "f32"), y_ptr=("out", (7168, 2048), "bf16"),
          M=7168, N=2048, BLOCK_SIZE=128), dict()),
    ("deepseek-ai__DeepSeek-V3/inference/kernel.py", "fp8_gemm_kernel", (ROWS // 64, 7168 // 128),
     dict(a_ptr=("in", (ROWS, 2048), "fp8"), b_ptr=("in", (7168, 2048), "fp8"), c_ptr=("out", (ROWS, 7168), "bf16"),
          a_s_ptr=("in", (ROWS, 16), "f32"), b_s_ptr=("in", (56, 16), "f32"), M=ROWS, N=7168, K=2048,
          BLOCK_SIZE_M=64, BLOCK_SIZE_N=128, BLOCK_SIZE_K=128), dict(num_warps=8, num_stages=4)),
    # DeepSeek sparse attention's indexer top-k: a bitonic sort of 2048 scores
    # in one warp's registers, the block viewed as a hypercube of 2s.
    ("InternLM__lmdeploy/lmdeploy/pytorch/kernels/cuda/bitonic_topk.py", "_bitonic_topk_kernel0", (NUM_SMS * 8,),
     dict(score_ptr=("in", (64, 16384), "f32"), seqlen_ptr=("idx", (64,), "i32", 16385),
          out_ptr=("out", (64, 16384), "f32"), ids_ptr=("out", (64, 16384), "i32"), stride_m=16384, num_tokens=64,
          num_blocks_per_row=8, K=2048, fill=-1, descending=1, sorted=True), dict(num_warps=1)),
]

NP = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i64": np.int64}
# fp8: one unit in the last place of e4m3 (Triton divides with div.full.f32,
# so a quotient at a rounding boundary may land one code away).
TOL = {"bf16": 3e-2, "f16": 5e-3, "f32": 1e-4, "fp8": 0.15, "i32": 0, "i64": 0}


# Bit patterns: NumPy has neither bfloat16 nor float8.
BITS = {"bf16": np.uint16, "fp8": np.uint8}
SUFFIX = {"bf16": ":bf16", "fp8": ":fp8e4nv"}


def random_data(kind, shape, dt, rng, high):
    if kind == "idx":
        return rng.integers(0, high, shape).astype(NP[dt])
    if kind == "prob":
        x = rng.random(shape).astype(np.float32) + 1e-3
        return (x / x.sum(-1, keepdims=True)).astype(np.float32)
    if dt == "fp8":
        return e4m3_bits(rng, shape)
    x = rng.standard_normal(shape).astype(np.float32)
    return bf16_bits(x) if dt == "bf16" else x.astype(NP[dt])


def make_inputs(case, rng, tmp):
    _, kernel, _, args, _ = case
    arrays, words = {}, []
    for name, v in args.items():
        if isinstance(v, tuple):
            kind, shape, dt = v[:3]
            if kind == "out":
                data = np.zeros(shape, BITS.get(dt) or NP[dt])
            else:
                data = random_data(kind, shape, dt, rng, v[3] if kind == "idx" else None)
            arrays[name] = (kind, dt, data)
            path = os.path.join(tmp, f"{kernel}_{name}.npy")
            np.save(path, data)
            tensor = f"@{path}" + SUFFIX.get(dt, "")
            if len(v) == 4 and kind != "idx":  # a tensor descriptor with this block shape
                tensor = f"tensordesc({tensor}, [{', '.join(map(str, v[3]))}])"
            words.append(f"{name}={tensor}")
        else:
            words.append(f"{name}={str(v).lower() if isinstance(v, bool) else v}")
    return arrays, words


def compared(v):
    """Whether an argument is read back after the launch: outputs and in-place updates."""
    return isinstance(v, tuple) and v[0] in ("out", "io")


def run_kiln(kiln, root, case, words, tmp, repeat, backend):
    file, kernel, grid, args, opts = case
    outs = [n for n, v in args.items() if compared(v)]
    cmd = [kiln, "run", os.path.join(root, file), kernel, "--backend", backend, "--grid", ",".join(map(str, grid)),
           "--repeat", str(repeat), "--json"] + words
    if "num_warps" in opts:
        cmd += ["--num-warps", str(opts["num_warps"])]
    if "num_stages" in opts:
        cmd += ["--num-stages", str(opts["num_stages"])]
    paths = {n: os.path.join(tmp, f"{kernel}_{n}_kiln.npy") for n in outs}
    for n, p in paths.items():
        cmd += ["--out", f"{n}={p}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError((r.stderr or r.stdout).strip()[-600:])
    report = json.loads(r.stdout)
    return {n: np.load(p) for n, p in paths.items()}, report


def load_module(path):
    """The file's top-level statements, each executed on its own: host code
    that fails (imports of packages this machine lacks, wrappers) is skipped,
    decorators other than triton's are dropped, bare calls and the main
    program are not run. Stubs answer the version checks real files make."""
    src = open(path).read()
    tree = ast.parse(src)
    ns = {"__name__": "kiln_parity_" + os.path.basename(path).replace("-", "_")[:-3], "__file__": path,
          "compare_version": lambda *a, **k: True, "is_npu_available": lambda: False}
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr):
            continue
        if isinstance(stmt, ast.If) and "__name__" in ast.unparse(stmt.test):
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
            stmt.decorator_list = [d for d in stmt.decorator_list if ast.unparse(d).startswith("triton.")
                                   or ast.unparse(d) == "jit"]
        try:
            exec(compile(ast.Module([stmt], []), path, "exec"), ns)
        except Exception:
            pass
    return ns


def run_triton(root, case, arrays, repeat):
    import torch
    import triton
    from triton.tools.tensor_descriptor import TensorDescriptor
    # Scratch for descriptors made in the kernel (tl.make_tensor_descriptor).
    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    file, kernel, grid, args, opts = case
    ns = load_module(os.path.join(root, file))
    fn = ns[kernel]
    # An autotuned kernel given its meta-parameters: the config itself, as
    # kiln runs it (Triton's autotuner refuses explicit meta-parameters).
    fn = getattr(fn, "fn", fn) if hasattr(fn, "configs") else fn
    call, tensors = [], {}
    for name, v in args.items():
        if name in arrays:
            kind, dt, data = arrays[name]
            t = torch.from_numpy(data.copy()).cuda()
            if dt == "bf16":
                t = t.view(torch.bfloat16)
            elif dt == "fp8":
                t = t.view(torch.float8_e4m3fn)
            tensors[name] = t
            call.append(TensorDescriptor.from_tensor(t, list(v[3])) if kind != "idx" and len(v) == 4 else t)
        else:  # "tl.float32": the dtype object, as host code passes it
            call.append(getattr(triton.language, v[3:]) if isinstance(v, str) and v.startswith("tl.") else v)
    # Keyword form, as a launch from host code would pass them.
    kwargs = dict(zip(args.keys(), call))
    fn[grid](**kwargs, **opts)
    torch.cuda.synchronize()
    bits = {"bf16": torch.uint16, "fp8": torch.uint8}
    outs = {n: (tensors[n].view(bits[dt]) if dt in bits else tensors[n]).cpu().numpy()
            for n, (kind, dt, _) in arrays.items() if kind in ("out", "io")}
    # As `kiln run --repeat` does: every timed launch starts from the inputs
    # copied in again (same L2 state on both sides).
    host = {n: tensors[n].cpu() for n in tensors}
    times = []
    for _ in range(repeat):
        for n, t in tensors.items():
            t.copy_(host[n])
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn[grid](**kwargs, **opts)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6)
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn[grid](**kwargs, **opts)
    torch.cuda.synchronize()
    burst = (time.perf_counter() - t0) * 1e6 / repeat
    return outs, float(np.median(times)), burst


def as_float(a, dt):
    if dt == "bf16":
        return bf16_values(a)
    if dt == "fp8":
        return e4m3_values()[a]
    return a.astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--json")
    ap.add_argument("--backend", default="cuda", help="cpu: a dry run of the kiln side only")
    ap.add_argument("--filter", default="", help="only cases whose label (repo:file:kernel) holds one of these (comma-separated)")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    tmp = tempfile.mkdtemp(prefix="kiln_parity_")
    rows, failures = [], 0
    print(f"{'kernel':58s} {'kiln us':>9s} {'triton us':>9s} {'ratio':>6s} {'kiln bu':>9s} {'triton bu':>9s} "
          f"{'ratio':>6s}  max err   result")
    print("(us: one launch + synchronize, median; bu: back to back launches, one synchronize, per launch;"
          " ratio: Triton time / kiln time)")
    for case in CASES:
        file, kernel = case[0], case[1]
        label = f"{file.split('/')[0].split('__')[1]}:{os.path.basename(file)}:{kernel}"
        if not any(f in label for f in a.filter.split(",")):
            continue
        try:
            arrays, words = make_inputs(case, rng, tmp)
            kouts, report = run_kiln(a.kiln, a.root, case, words, tmp, a.repeat, a.backend)
            if a.backend != "cuda":
                print(f"{label:58s} kiln {a.backend}: ran, {report['launch_us']} us")
                continue
            touts, t_us, t_burst = run_triton(a.root, case, arrays, a.repeat)
            k_us, k_burst = float(report["launch_us"]), float(report.get("burst_us", 0.0))
            worst, ok = 0.0, True
            for n, (kind, dt, _) in arrays.items():
                if kind not in ("out", "io"):
                    continue
                g, w = as_float(kouts[n], dt).reshape(-1), as_float(touts[n], dt).reshape(-1)
                rel = np.abs(g - w) / (1 + np.abs(w))
                err = float(np.max(rel))
                worst = max(worst, err)
                ok &= err <= TOL[dt]
                if err > TOL[dt]:  # where it is wrong, so a failure says more than its size
                    bad = np.flatnonzero(rel > TOL[dt])
                    shown = ", ".join(f"[{i}] kiln {g[i]:.6g} triton {w[i]:.6g}" for i in bad[:4])
                    print(f"    {n}: {bad.size} of {rel.size} elements off ({shown})")
            failures += not ok
            rows.append(dict(case=label, kiln_us=k_us, triton_us=t_us, kiln_burst_us=k_burst,
                             triton_burst_us=t_burst, max_err=worst, ok=ok))
            if a.json:  # after every case: a run cut short by a time limit keeps what it measured
                json.dump(rows, open(a.json, "w"), indent=1)
            print(f"{label:58s} {k_us:9.1f} {t_us:9.1f} {t_us / k_us:6.2f} {k_burst:9.1f} {t_burst:9.1f} "
                  f"{t_burst / k_burst:6.2f}  {worst:.1e}  {'ok' if ok else 'WRONG'}")
        except Exception as e:
            failures += 1
            rows.append(dict(case=label, error=str(e)[:400]))
            print(f"{label:58s} ERROR {str(e)[:300]}")
    for key, what in (("us", "one launch"), ("burst_us", "back to back")):
        ratios = [r["triton_" + key] / r["kiln_" + key] for r in rows if r.get("kiln_" + key)]
        if ratios:
            print(f"geomean Triton time / kiln time, {what}: {float(np.exp(np.mean(np.log(ratios)))):.3f} "
                  f"over {len(ratios)} kernels")
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
