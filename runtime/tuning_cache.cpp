#include "runtime/tuning_cache.hpp"

#include <sys/stat.h>

#include <cmath>
#include <iostream>
#include <mutex>
#include <set>

#include <nlohmann/json.hpp>

#include "compiler/support/sha256.hpp"
#include "runtime/background_writer.hpp"
#include "runtime/cache_files.hpp"
#include "runtime/cache_level.hpp"

namespace kiln::runtime {

namespace {

constexpr const char *kKind = "tuning";

/// Warns once per `what` (a file, a failure) in this process: a launch that
/// asks again must not repeat it.
void warn_once(const std::string &what, const std::string &message) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  {
    std::lock_guard lock(mutex);
    if (!warned.insert(what).second)
      return;
  }
  std::cerr << "kiln: warning: " << message << "\n";
}

} // namespace

std::string TuningCache::id(const std::string &identity) {
  return sha256_hex(identity);
}

std::optional<std::size_t> TuningCache::parse(const std::string &text,
                                              const std::vector<std::string> &config_texts,
                                              std::string *why) {
  auto fail = [&](const char *reason) -> std::optional<std::size_t> {
    if (why)
      *why = reason;
    return std::nullopt;
  };
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return fail("not JSON (truncated or corrupt)");
  if (!j.is_object() || !j.contains("config") || !j["config"].is_number_unsigned() ||
      !j.contains("config_text") || !j["config_text"].is_string())
    return fail("no config index and text");
  const auto c = j["config"].get<std::size_t>();
  if (c >= config_texts.size() || j["config_text"].get<std::string>() != config_texts[c])
    return fail("it names a config the kernel does not have");
  return c;
}

std::optional<TuningCache::Hit>
TuningCache::get(const std::string &id, const std::vector<std::string> &config_texts) const {
  if (!dir_.empty()) {
    const std::string file = path(id);
    std::string why;
    if (std::optional<std::string> text = read_trusted(file, why)) {
      if (std::optional<std::size_t> c = parse(*text, config_texts, &why))
        return Hit{*c, false};
      warn_once(file, "ignoring the tuning record " + file + ": " + why +
                          "; the kernel is tuned again and the record replaced");
    } else if (struct stat st{};
               ::lstat(file.c_str(), &st) == 0) { // there, but unreadable or not ours
      warn_once(file, "ignoring the tuning record " + why +
                          "; the kernel is tuned again and the record replaced");
    }
  }
  for (CacheLevel *level : remote_) {
    const std::optional<std::string> text = level->get_record(kKind, id);
    if (!text)
      continue;
    if (std::optional<std::size_t> c = parse(*text, config_texts)) {
      write([dir = dir_, id, text = *text] { write_file(dir, id, text); });
      return Hit{*c, true};
    }
  }
  return std::nullopt;
}

void TuningCache::put(const std::string &id, const std::string &kernel,
                      const TuningRecord &r) const {
  if (dir_.empty() && remote_.empty())
    return;
  nlohmann::json times = nlohmann::json::array();
  for (double ms : r.ms)
    times.push_back(std::isfinite(ms) ? nlohmann::json(ms) : nlohmann::json(nullptr));
  const nlohmann::json j = {{"kernel", kernel},
                            {"key", r.key_text},
                            {"config", r.config},
                            {"config_text", r.config_text},
                            {"ms", times}};
  write([dir = dir_, remote = remote_, id, text = j.dump(2) + "\n"] {
    write_file(dir, id, text);
    for (CacheLevel *level : remote)
      level->put_record(kKind, id, text);
  });
}

void TuningCache::write(std::function<void()> w) const {
  if (writer_)
    writer_->post(std::move(w));
  else
    w();
}

void TuningCache::write_file(const std::string &dir, const std::string &id,
                             const std::string &text) {
  if (dir.empty())
    return;
  const std::string folder = dir + "/tuning";
  try {
    ensure_own_dir(dir);
    ensure_own_dir(folder, "the kiln tuning folder");
    write_atomic(folder, id + ".json", text);
    fsync_dir(folder);
  } catch (const std::exception &e) {
    warn_once("write",
              std::string(e.what()) + " (tuning results are not stored; launches still work)");
  }
}

} // namespace kiln::runtime
