#include "tools/kiln/bench_report.hpp"

#include <fnmatch.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "kiln/error.hpp"
#include "tools/kiln/cli_common.hpp"

namespace kiln::cli {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string find_shared_dir(const std::string &flag, const std::string &exe) {
  const auto has_kernels = [](const fs::path &p) {
    std::error_code ec;
    return fs::is_directory(p / "kernels", ec);
  };
  if (!flag.empty()) {
    if (!has_kernels(flag))
      throw UsageError("--shared " + flag + " has no kernels/ directory");
    return flag;
  }
  if (const char *env = std::getenv("KILN_SHARED_DIR"); env != nullptr && *env != '\0') {
    if (!has_kernels(env))
      throw UsageError(std::string("KILN_SHARED_DIR=") + env + " has no kernels/ directory");
    return env;
  }
  std::error_code ec;
  const fs::path bin = fs::weakly_canonical(exe, ec).parent_path();
  std::string tried;
  // A bundle with kernels/ beside bin/ (scripts/device-bundle), installed
  // (prefix/bin, prefix/share/kiln), a build tree of a checkout with
  // shared/ inside or beside it (repo/build/bin), shared/ beside bin/.
  for (const char *rel : {"..", "../share/kiln", "../../shared", "../../../shared", "../shared"}) {
    const fs::path p = (bin / rel).lexically_normal();
    if (has_kernels(p))
      return p.string();
    tried += (tried.empty() ? "" : ", ") + p.string();
  }
  throw UsageError("cannot find the shared kernels (tried " + tried +
                   "); pass --shared DIR or set KILN_SHARED_DIR");
}

namespace {

/// Keys that are not figures: spreads, what the run was beside, and the
/// numbers that describe a workload rather than measure it (a kernel's
/// sizes, the run count), which would only fill a comparison with ratios of 1.
bool not_a_figure(const std::string &key) {
  static const std::set<std::string> skipped = {
      "spread", "machine", "anchors", "compare",           "errors",    "case", "runs", "specs",
      "n",      "rows",    "cols",    "bytes_per_element", "best_block"};
  return skipped.contains(key);
}

void flatten(const Json &j, const std::string &prefix, Figures &out) {
  for (const auto &[key, value] : j.items()) {
    if (not_a_figure(key))
      continue;
    const std::string name = prefix.empty() ? key : prefix + "." + key;
    if (value.is_number() && !value.is_boolean())
      out.emplace_back(name, value.get<double>());
    else if (value.is_object())
      flatten(value, name, out);
    else if (key == "wall_s" && value.is_array() && j.contains("threads") &&
             j["threads"].size() == value.size())
      for (std::size_t i = 0; i < value.size(); ++i)
        if (value[i].is_number())
          out.emplace_back(name + "." + std::to_string(j["threads"][i].get<int>()),
                           value[i].get<double>());
  }
}

Json read_json(const std::string &path, const char *what) {
  std::ifstream in(path);
  if (!in)
    throw RuntimeError(std::string(what) + " " + path + ": cannot read the file");
  try {
    return Json::parse(in);
  } catch (const nlohmann::json::exception &e) {
    throw RuntimeError(std::string(what) + " " + path + ": not JSON (" + e.what() + ")");
  }
}

/// The reference figure for `key`: an exact key first, else the first pattern.
const Json *match(const Reference &ref, const std::string &key) {
  for (const auto &[k, v] : ref.figures)
    if (k == key)
      return &v;
  for (const auto &[k, v] : ref.figures)
    if (::fnmatch(k.c_str(), key.c_str(), 0) == 0)
      return &v;
  return nullptr;
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string pad(std::string s, std::size_t width, bool right) {
  if (s.size() < width)
    s.insert(right ? 0 : s.size(), width - s.size(), ' ');
  return s;
}

/// The keys of `ref` that no figure matches.
std::vector<std::string> missing_keys(const Figures &figures, const Reference &ref) {
  std::vector<std::string> missing;
  for (const auto &[k, v] : ref.figures) {
    bool found = false;
    for (const auto &f : figures)
      found = found || f.first == k || ::fnmatch(k.c_str(), f.first.c_str(), 0) == 0;
    if (!found)
      missing.push_back(k);
  }
  return missing;
}

} // namespace

Figures flatten_figures(const Json &results) {
  Figures out;
  flatten(results, "", out);
  return out;
}

Reference read_anchors(const std::string &path) {
  const Json j = read_json(path, "--anchors");
  if (!j.is_object() || !j.contains("figures") || !j["figures"].is_object())
    throw RuntimeError("--anchors " + path +
                       ": not an anchor file (it needs a \"figures\" object of KEY: number)");
  Reference ref;
  ref.label = j.value("name", fs::path(path).stem().string());
  ref.about = j.value("machine", std::string("unknown machine")) + ", " +
              j.value("date", std::string("undated"));
  for (const auto &[key, value] : j["figures"].items()) {
    Json v = value.is_object() ? value : Json{{"value", value}};
    if (!v.contains("value") || !v["value"].is_number() || v["value"].is_boolean())
      throw RuntimeError("--anchors " + path + ": figure \"" + key + "\" has no number (write \"" +
                         key + "\": 1.5 or {\"value\": 1.5})");
    ref.figures.emplace_back(key, std::move(v));
  }
  return ref;
}

Reference read_compare(const std::string &path) {
  const Json j = read_json(path, "--compare");
  if (!j.is_object() || !j.contains("backend"))
    throw RuntimeError("--compare " + path +
                       ": not the JSON of an earlier `kiln bench --json` run");
  Reference ref;
  ref.label = "earlier";
  ref.about = path + " (" + j["backend"].dump() + ")";
  for (const auto &[k, v] : flatten_figures(j))
    ref.figures.emplace_back(k, Json{{"value", v}});
  return ref;
}

std::string beside_text(const Figures &figures, const Reference &ref) {
  std::string out = "beside " + ref.label + " (" + ref.about + ")\n  " + pad("figure", 44, false) +
                    pad("kiln", 12, true) + pad(ref.label.substr(0, 12), 14, true) +
                    pad("kiln/ref", 10, true) + "\n";
  for (const auto &[key, value] : figures) {
    const Json *r = match(ref, key);
    if (r == nullptr)
      continue;
    const double rv = (*r)["value"].get<double>();
    out += "  " + pad(key, 44, false) + pad(number(value), 12, true) + pad(number(rv), 14, true) +
           pad(rv != 0 ? number(value / rv) : "-", 10, true);
    if (r->contains("what"))
      out += "  " + (*r)["what"].get<std::string>();
    out += "\n";
  }
  for (const std::string &k : missing_keys(figures, ref))
    out += "  " + pad(k, 44, false) + pad("missing", 12, true) +
           pad(number(match(ref, k)->at("value").get<double>()), 14, true) + "\n";
  return out;
}

Json beside_json(const Figures &figures, const Reference &ref) {
  Json j = {{"name", ref.label}, {"about", ref.about}, {"figures", Json::object()}};
  for (const auto &[key, value] : figures)
    if (const Json *r = match(ref, key)) {
      const double rv = (*r)["value"].get<double>();
      j["figures"][key] = {{"value", value},
                           {"reference", rv},
                           {"ratio", rv != 0 ? Json(value / rv) : Json(nullptr)}};
      if (r->contains("unit"))
        j["figures"][key]["unit"] = (*r)["unit"];
    }
  j["missing"] = missing_keys(figures, ref);
  return j;
}

} // namespace kiln::cli
