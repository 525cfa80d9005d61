// A program outside kiln's tree: loads its own kernel file, launches it on
// the CPU and checks the result. With a path argument it also runs
// add_kernel of that file (the shared vector_add.py).
#include <cstdio>
#include <vector>

#include <kiln/kiln.hpp>

int main(int argc, char **argv) {
  try {
    kiln::set_device({kiln::Backend::cpu, 0});
    const int n = 1 << 14;
    std::vector<float> x(n), out(n);
    for (int i = 0; i < n; ++i)
      x[i] = static_cast<float>(i % 97);
    kiln::Kernel scale = kiln::Module::from_file(SCALE_KERNEL).kernel("scale_kernel");
    scale[{kiln::cdiv(n, 1024)}](x.data(), out.data(), 3.0f, n, kiln::arg("BLOCK", 1024));
    int wrong = 0;
    for (int i = 0; i < n; ++i)
      wrong += out[i] != 3.0f * x[i];

    if (argc > 1) {
      kiln::Kernel add = kiln::Module::from_file(argv[1]).kernel("add_kernel");
      std::vector<float> sum(n);
      add[{kiln::cdiv(n, 1024)}](x.data(), out.data(), sum.data(), n, kiln::arg("BLOCK", 1024));
      for (int i = 0; i < n; ++i)
        wrong += sum[i] != 4.0f * x[i];
    }
    std::printf("kiln %s: %s (%d wrong)\n", kiln::version_info().version.c_str(),
                wrong ? "FAIL" : "ok", wrong);
    return wrong ? 1 : 0;
  } catch (const kiln::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
