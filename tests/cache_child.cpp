// A second process for the cache tests: launches vector_add's add_kernel
// once through whatever caches its environment names (KILN_CACHE_DIR, ...),
// checks the result, and prints {"source": ..., "correct": ..., "stages":
// ...} (the stage texts the loaded kernel kept, comma-separated). Exit 0 when
// the result is right, 1 when it is wrong, 2 on an error (printed).
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

int main(int argc, char **argv) {
  const std::string file =
      argc > 1 ? argv[1] : std::string(KILN_SHARED_DIR) + "/kernels/vector_add.py";
  try {
    const int n = 1000;
    std::vector<float> x(n), y(n), out(n, -1.0f);
    for (int i = 0; i < n; ++i) {
      x[i] = float(i);
      y[i] = 0.25f * float(i);
    }
    kiln::Module m = kiln::Module::from_file(file);
    const kiln::Kernel add = m.kernel("add_kernel");
    const kiln::LaunchResult r = add[{static_cast<uint32_t>(kiln::cdiv(n, 256))}](
        x.data(), y.data(), out.data(), n, kiln::arg("BLOCK", 256));
    bool correct = true;
    for (int i = 0; i < n; ++i)
      correct = correct && out[i] == x[i] + y[i];
    std::string stages;
    for (const auto &[stage, text] : r.kernel->stages)
      stages += (stages.empty() ? "" : ",") + stage;
    std::printf("{\"source\": \"%s\", \"correct\": %s, \"stages\": \"%s\"}\n",
                kiln::binary_source_name(r.source), correct ? "true" : "false", stages.c_str());
    return correct ? 0 : 1;
  } catch (const std::exception &e) {
    std::printf("{\"error\": \"%s\"}\n", e.what());
    return 2;
  }
}
