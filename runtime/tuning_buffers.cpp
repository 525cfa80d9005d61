#include "runtime/tuning_buffers.hpp"

#include <algorithm>
#include <cstring>

#include "kiln/error.hpp"
#include "runtime/device_copy.hpp"

namespace kiln::runtime {

TuningBuffers::TuningBuffers(const std::vector<std::string> &reset_to_zero,
                             const std::vector<std::string> &restore_value,
                             const std::vector<KernelParam> &params, const Arg *const *bound,
                             Device device, const std::string &kernel)
    : device_(device) {
  auto region = [&](const std::string &name, const char *list) -> Region {
    const KernelParam *p = nullptr;
    for (const KernelParam &q : params)
      if (q.name == name)
        p = &q;
    const Arg *a = p ? bound[p->index] : nullptr;
    if (!a || a->kind() != Arg::Kind::Pointer)
      throw ArgumentError(kernel + ": the autotuner's " + list + " names '" + name +
                          "', which this launch does not pass as a tensor");
    if (a->extent() < 0)
      throw ArgumentError(
          kernel + ": to tune, kiln must " +
          (std::string(list) == "reset_to_zero" ? "zero" : "restore") + " '" + name +
          "' between runs but does not know its size; pass it as a kiln::Tensor with a shape "
          "(kiln::Tensor(ptr, dtype, {n}), a Buffer's tensor(), or DLPack)");
    return Region{const_cast<void *>(a->as_pointer()), static_cast<std::size_t>(a->extent()), {}};
  };
  for (const std::string &n : reset_to_zero)
    zero_.push_back(region(n, "reset_to_zero"));
  for (const std::string &n : restore_value) {
    Region r = region(n, "restore_value");
    r.saved.resize(r.bytes);
    copy_to_host(device_, r.saved.data(), r.data, r.bytes);
    restore_.push_back(std::move(r));
  }
  std::size_t most = 0;
  for (const Region &r : zero_)
    most = std::max(most, r.bytes);
  if (device_.backend != Backend::cpu)
    zeros_.assign(most, 0);
}

void TuningBuffers::before_run() const {
  for (const Region &r : zero_) {
    if (device_.backend == Backend::cpu)
      std::memset(r.data, 0, r.bytes);
    else
      copy_from_host(device_, r.data, zeros_.data(), r.bytes);
  }
}

void TuningBuffers::after_run() const {
  for (const Region &r : restore_)
    copy_from_host(device_, r.data, r.saved.data(), r.bytes);
}

} // namespace kiln::runtime
