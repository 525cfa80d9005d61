// Batch warmup from a recorded .jsonl: one run records every specialization
// it compiles (jit_post_compile_hook gives each one's JSON, one line each);
// a later process preloads them all on the async compile pool at start-up,
// so its launches find their kernels compiled. `kiln warmup FILE.jsonl`
// reads the same lines.
//
//   build/examples/warmup_jsonl record specs.jsonl [path/to/vector_add.py]
//   build/examples/warmup_jsonl replay specs.jsonl [path/to/vector_add.py]
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

namespace {

const int n = 5000;

// The run whose specializations are recorded.
kiln::LaunchResult run_workload(const kiln::Module &module, std::vector<float> &out) {
  std::vector<float> x(n, 1.5f), y(n, 2.0f);
  kiln::Kernel add = module.kernel("add_kernel");
  add[{kiln::cdiv(n, 256)}](x.data(), y.data(), out.data(), n, kiln::arg("BLOCK", 256));
  module.kernel("axpy_kernel")[{kiln::cdiv(n, 512)}](2.0f, x.data(), y.data(), n,
                                                     kiln::arg("BLOCK", 512));
  return add[{kiln::cdiv(n, 1024)}](x.data(), y.data(), out.data(), n, kiln::arg("BLOCK", 1024));
}

// The "kernel" field of a recorded line (written by kiln without spaces);
// a JSON library reads it as well.
std::string kernel_name(const std::string &line) {
  const char *tag = "\"kernel\":\"";
  const std::size_t at = line.find(tag);
  if (at == std::string::npos)
    throw kiln::ArgumentError("a line without \"kernel\": " + line);
  const std::size_t from = at + std::strlen(tag);
  return line.substr(from, line.find('"', from) - from);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3 || (std::strcmp(argv[1], "record") != 0 && std::strcmp(argv[1], "replay") != 0)) {
    std::fprintf(stderr, "usage: %s record|replay FILE.jsonl [kernel file]\n", argv[0]);
    return 2;
  }
  const bool record = std::strcmp(argv[1], "record") == 0;
  const std::string jsonl = argv[2];
  const char *path = argc > 3 ? argv[3] : KILN_SHARED_DIR "/kernels/vector_add.py";
  try {
    kiln::Module module = kiln::Module::from_file(path);
    std::vector<float> out(n);
    if (record) {
      std::ofstream file(jsonl);
      kiln::hooks().jit_post_compile_hook = [&](const kiln::CompileEvent &e) {
        file << e.specialization_data << '\n';
      };
      run_workload(module, out);
      kiln::hooks() = kiln::Hooks{};
      std::printf("recorded the specializations of this run in %s\n", jsonl.c_str());
      return file ? 0 : 1;
    }

    std::ifstream file(jsonl);
    if (!file)
      throw kiln::RuntimeError("cannot read " + jsonl + " (run `record` first)");
    int lines = 0;
    {
      kiln::AsyncCompileMode mode; // every preload compiles on the pool, side by side
      for (std::string line; std::getline(file, line); ++lines)
        module.kernel(kernel_name(line)).preload(line);
    } // waits for all of them
    kiln::LaunchResult r = run_workload(module, out);
    const bool ok = lines == 3 && r.source != kiln::BinarySource::compiled &&
                    out[n - 1] == 6.5f; // x + (2x + y): axpy updates y in place
    std::printf("preloaded %d specializations; the workload's last launch: %s\n%s\n", lines,
                kiln::binary_source_name(r.source), ok ? "ok" : "FAIL");
    return ok ? 0 : 1;
  } catch (const kiln::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
