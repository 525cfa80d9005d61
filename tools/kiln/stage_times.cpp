#include "tools/kiln/stage_times.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>

#include "tools/kiln/summary.hpp"

namespace kiln::cli {

namespace {

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string padded(std::string s, std::size_t width) {
  if (s.size() < width)
    s.insert(0, width - s.size(), ' ');
  return s;
}

} // namespace

void StageTimes::add(const CompiledKernel &k) {
  double total = 0;
  for (const StageTime &t : k.times) {
    const auto it = std::find(stages_.begin(), stages_.end(), t.stage);
    const std::size_t i = static_cast<std::size_t>(it - stages_.begin());
    if (it == stages_.end()) {
      stages_.push_back(t.stage);
      samples_.emplace_back(totals_.size(), 0.0); // a stage earlier compiles did not have took 0
    }
    samples_[i].push_back(t.ms);
    total += t.ms;
  }
  totals_.push_back(total);
  for (std::vector<double> &s : samples_)
    s.resize(totals_.size(), 0.0);
}

void StageTimes::print(std::ostream &out, const std::string &note) const {
  if (totals_.empty())
    return;
  const bool several = totals_.size() > 1;
  out << "compile time by stage, ms (" << note << ")\n  " << std::string(8, ' ')
      << padded("first", 10);
  if (several)
    out << padded("median (min-max) of " + std::to_string(totals_.size()), 32);
  out << '\n';
  auto row = [&](const std::string &name, const std::vector<double> &v) {
    out << "  " << name << std::string(name.size() < 8 ? 8 - name.size() : 0, ' ')
        << padded(ms(v.front()), 10);
    if (several) {
      const Summary s = summarize(v);
      out << padded(ms(s.median) + " (" + ms(s.min) + "-" + ms(s.max) + ")", 32);
    }
    out << '\n';
  };
  for (std::size_t i = 0; i < stages_.size(); ++i)
    row(stages_[i], samples_[i]);
  row("total", totals_);
}

nlohmann::json StageTimes::json() const {
  nlohmann::json first = nlohmann::json::object(), median = first, lo = first, hi = first;
  if (totals_.empty())
    return {{"runs", 0}};
  auto put = [&](const std::string &name, const std::vector<double> &v) {
    const Summary s = summarize(v);
    first[name] = v.front();
    median[name] = s.median;
    lo[name] = s.min;
    hi[name] = s.max;
  };
  for (std::size_t i = 0; i < stages_.size(); ++i)
    put(stages_[i], samples_[i]);
  put("total", totals_);
  return {{"runs", totals_.size()},
          {"first_ms", first},
          {"median_ms", median},
          {"min_ms", lo},
          {"max_ms", hi}};
}

} // namespace kiln::cli
