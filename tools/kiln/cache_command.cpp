// `kiln cache`: where the disk cache is, how big, its entries, clearing and
// pruning. Works on the folder KILN_CACHE_DIR (or --cache-dir) names.
#include "tools/kiln/cache_command.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "runtime/disk_cache.hpp"
#include "runtime/knobs.hpp"
#include "tools/kiln/cli_common.hpp"

namespace kiln::cli {

namespace {

struct CacheOptions {
  std::string action = "info";
  long long max_bytes = -1;
};

double age_s(int64_t used_ns) {
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  return double(now - used_ns) / 1e9;
}

void cache(const CacheOptions &o, const CommonOptions &common) {
  apply_common_options(common);
  const runtime::Knobs knobs = runtime::Knobs::from_env();
  if (knobs.cache_dir.empty())
    throw UsageError("no cache folder: set KILN_CACHE_DIR or HOME, or pass --cache-dir");
  runtime::DiskCache disk(knobs.cache_dir, knobs.cache_max_bytes);
  if (o.action == "clear" || o.action == "prune") {
    size_t removed = 0;
    uint64_t limit = 0;
    if (o.action == "clear") {
      removed = disk.clear();
    } else {
      if (o.max_bytes < 0 && !knobs.cache_max_bytes)
        throw UsageError("kiln cache prune needs --max-bytes N (or KILN_CACHE_MAX_BYTES)");
      limit = o.max_bytes >= 0 ? uint64_t(o.max_bytes) : knobs.cache_max_bytes;
      removed = disk.prune(limit);
    }
    if (common.json)
      std::cout << nlohmann::json{{"dir", disk.dir()}, {"removed", removed}}.dump() << '\n';
    else
      std::cout << disk.dir() << ": removed " << removed << " entries\n";
    return;
  }
  const auto entries = disk.entries();
  uint64_t bytes = 0;
  for (const auto &e : entries)
    bytes += e.bytes;
  if (common.json) {
    nlohmann::json j = {
        {"dir", disk.dir()},
        {"entries", entries.size()},
        {"bytes", bytes},
        {"max_bytes", knobs.cache_max_bytes ? nlohmann::json(knobs.cache_max_bytes) : nullptr}};
    if (o.action == "ls") {
      nlohmann::json list = nlohmann::json::array();
      for (auto it = entries.rbegin(); it != entries.rend(); ++it)
        list.push_back({{"name", it->name},
                        {"kernel", it->kernel},
                        {"target", it->target},
                        {"bytes", it->bytes},
                        {"age_s", age_s(it->used_ns)}});
      j["list"] = std::move(list);
    }
    std::cout << j.dump() << '\n';
    return;
  }
  std::cout << "cache   " << disk.dir() << "\nentries " << entries.size() << "\nsize    " << bytes
            << " bytes";
  if (knobs.cache_max_bytes)
    std::cout << " (limit " << knobs.cache_max_bytes << ")";
  std::cout << '\n';
  if (o.action != "ls")
    return;
  char line[512];
  std::snprintf(line, sizeof line, "\n%-24s %-34s %10s %10s  %s\n", "kernel", "target", "age_s",
                "bytes", "entry");
  std::cout << line;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) { // most recently used first
    std::snprintf(line, sizeof line, "%-24s %-34s %10.0f %10llu  %s\n",
                  it->kernel.empty() ? "<unreadable>" : it->kernel.c_str(), it->target.c_str(),
                  age_s(it->used_ns), static_cast<unsigned long long>(it->bytes), it->name.c_str());
    std::cout << line;
  }
}

} // namespace

void add_cache_command(CLI::App &app, CommonOptions &common) {
  auto o = std::make_shared<CacheOptions>();
  CLI::App *sub = app.add_subcommand("cache", "Show, list, clear or prune the kernel cache");
  sub->add_option("ACTION", o->action, "info (default), ls, clear or prune")
      ->check(CLI::IsMember({"info", "ls", "clear", "prune"}))
      ->type_name("");
  sub->add_option("--max-bytes", o->max_bytes,
                  "prune: keep the most recently used entries within N bytes")
      ->type_name("N");
  add_common_options(*sub, common);
  sub->callback([o, &common] { cache(*o, common); });
}

} // namespace kiln::cli
