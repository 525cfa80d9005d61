// The NVPTX path without a GPU: the kernels of shared/kernels compile to
// PTX for sm_90 and assemble to a cubin (nvJitLink, or ptxas) in-process,
// with every block value in registers (no local memory).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "compiler/target.hpp"
#include "runtime/jit_function.hpp"

namespace {

kiln::CompiledKernel compile_sm90(const char *file, const char *kernel, std::vector<kiln::Arg> args) {
  kiln::Module m = kiln::Module::from_file(std::string(KILN_SHARED_DIR) + "/kernels/" + file);
  return m.kernel(kernel).impl()->compile_only(args, kiln::compiler::Target::cuda(90));
}

kiln::Arg f32ptr() { return kiln::Arg::mock(kiln::DType::f32); }

void check_gpu_binary(const kiln::CompiledKernel &k) {
  CHECK(k.target == "cuda:sm_90a"); // wgmma needs the arch-specific target
  const std::string &ptx = k.stages.at("ptx");
  CHECK(ptx.find(".target sm_90") != std::string::npos);
  CHECK(ptx.find(".entry " + k.name) != std::string::npos);
  CHECK(ptx.find(".local") == std::string::npos); // the blocked layout stays in registers
  if (k.binary_kind == "cubin") {
    CHECK(k.registers > 0); // from the assembler's log
    CHECK(k.spill_bytes == 0);
    REQUIRE(k.binary.size() > 4);
    CHECK(k.binary[0] == 0x7f); // an ELF image
    CHECK(k.binary[1] == 'E');
  } else {
    std::printf("[SKIP] no nvJitLink or ptxas here: %s\n", k.stages.at("cubin_log").c_str());
    CHECK(k.binary_kind == "ptx");
  }
}

} // namespace

TEST_CASE("nvptx: add_kernel compiles to PTX and a cubin, with predicated loads and stores") {
  const kiln::CompiledKernel k = compile_sm90("vector_add.py", "add_kernel",
                                              {f32ptr(), f32ptr(), f32ptr(), 10007, kiln::arg("BLOCK", 1024)});
  check_gpu_binary(k);
  const std::string &ptx = k.stages.at("ptx");
  // The mask reaches the inline PTX as a predicate register.
  CHECK(ptx.find(" ld.global.b32") != std::string::npos);
  CHECK(ptx.find(" st.global.b32") != std::string::npos);
  CHECK(ptx.find("@%p") != std::string::npos);
  CHECK(ptx.find("%tid.x") != std::string::npos);
  CHECK(ptx.find("%ctaid.x") != std::string::npos);
}

TEST_CASE("nvptx: axpy_kernel and empty_kernel compile") {
  check_gpu_binary(compile_sm90("vector_add.py", "axpy_kernel",
                                {1.5, f32ptr(), f32ptr(), 4096, kiln::arg("BLOCK", 256)}));
  check_gpu_binary(compile_sm90("vector_add.py", "empty_kernel", {f32ptr(), 64, kiln::arg("BLOCK", 64)}));
}

TEST_CASE("nvptx: softmax reduces with warp shuffles and shared memory across warps") {
  const kiln::CompiledKernel k =
      compile_sm90("softmax.py", "softmax_kernel",
                   {f32ptr(), f32ptr(), 4096, 4096, 4096, kiln::arg("BLOCK", 4096), kiln::arg("num_warps", 8)});
  check_gpu_binary(k);
  const std::string &ptx = k.stages.at("ptx");
  CHECK(ptx.find("shfl.sync.bfly") != std::string::npos);
  CHECK(ptx.find("bar.sync") != std::string::npos);
  CHECK(ptx.find(".shared") != std::string::npos);
  CHECK(ptx.find("ex2.approx") != std::string::npos);
  CHECK(k.shared_bytes > 0);
}

TEST_CASE("nvptx: 2-D tiles: dot, scans, reductions on either axis, attention compile to cubins") {
  const kiln::Arg h = kiln::Arg::mock(kiln::DType::f16), i32 = kiln::Arg::mock(kiln::DType::i32);
  check_gpu_binary(compile_sm90("matmul.py", "matmul_kernel",
                                {h, h, h, 64, 64, 64, 64, 1, 64, 1, 64, 1, kiln::arg("BM", 32), kiln::arg("BN", 32),
                                 kiln::arg("BK", 32)}));
  check_gpu_binary(compile_sm90("reductions.py", "prefix_sum", {i32, i32, 100, kiln::arg("BLOCK", 128)}));
  check_gpu_binary(compile_sm90("reductions.py", "reduce_rows",
                                {f32ptr(), f32ptr(), f32ptr(), i32, 50, 60, 60, kiln::arg("BM", 16), kiln::arg("BN", 64)}));
  check_gpu_binary(compile_sm90("reductions.py", "column_sum",
                                {f32ptr(), f32ptr(), 50, 60, 60, kiln::arg("BM", 16), kiln::arg("BN", 32)}));
  const kiln::CompiledKernel a =
      compile_sm90("attention.py", "attn_fwd",
                   {h, h, h, h, 0.125, 150, kiln::arg("HEAD_DIM", 64), kiln::arg("BLOCK_M", 64), kiln::arg("BLOCK_N", 32),
                    kiln::arg("CAUSAL", true)});
  check_gpu_binary(a);
  // fp16 rows of 8 move as 16 bytes: k and v by cp.async (fetched ahead for
  // the dots), the output by 4 words (PTX vectors have at most 4 elements).
  CHECK(a.stages.at("ptx").find("cp.async.cg.shared.global") != std::string::npos);
  CHECK(a.stages.at("ptx").find("st.global.v4.b32") != std::string::npos);
  CHECK(a.stages.at("ptx").find(".v8.") == std::string::npos);
  // Both dots on wgmma, A (q, then p) from registers, the assembler accepting them.
  CHECK(a.stages.at("ptx").find("wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16") !=
        std::string::npos);
  CHECK(a.stages.at("ptx").find("mma.sync") == std::string::npos);
}

TEST_CASE("nvptx: aligned, divisible sizes move 16 bytes per access (axis info)") {
  // n = 4096 specializes as i32:D, so `offs < n` is constant over runs of 16
  // and every run of four floats starts 16-byte aligned.
  const kiln::CompiledKernel k = compile_sm90("vector_add.py", "add_kernel",
                                              {f32ptr(), f32ptr(), f32ptr(), 4096, kiln::arg("BLOCK", 1024)});
  const std::string &ptx = k.stages.at("ptx");
  CHECK(ptx.find("ld.global.v4.b32") != std::string::npos);
  CHECK(ptx.find("st.global.v4.b32") != std::string::npos);
  // Without D on x_ptr its alignment is unknown: x loads scalar, y still by vectors.
  const kiln::CompiledKernel u = compile_sm90(
      "vector_add.py", "add_kernel",
      {kiln::Tensor(reinterpret_cast<float *>(4100), {}), f32ptr(), f32ptr(), 4096, kiln::arg("BLOCK", 1024)});
  auto count = [](const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
      ++n;
    return n;
  };
  CHECK(count(u.stages.at("ptx"), "ld.global.v4") * 2 == count(ptx, "ld.global.v4"));
  CHECK(count(u.stages.at("ptx"), "st.global.v4") == count(ptx, "st.global.v4"));
}
