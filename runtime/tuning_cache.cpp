#include "runtime/tuning_cache.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "compiler/support/sha256.hpp"
#include "runtime/cache_level.hpp"

namespace kiln::runtime {

namespace fs = std::filesystem;

namespace {
constexpr const char *kKind = "tuning";
}

std::string TuningCache::id(const std::string &identity) {
  return sha256_hex(identity);
}

std::optional<std::size_t> TuningCache::parse(const std::string &text,
                                              const std::vector<std::string> &config_texts) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("config") || !j["config"].is_number_unsigned() ||
      !j.contains("config_text") || !j["config_text"].is_string())
    return std::nullopt;
  const auto c = j["config"].get<std::size_t>();
  if (c >= config_texts.size() || j["config_text"].get<std::string>() != config_texts[c])
    return std::nullopt;
  return c;
}

std::optional<TuningCache::Hit>
TuningCache::get(const std::string &id, const std::vector<std::string> &config_texts) const {
  if (!dir_.empty()) {
    if (std::ifstream in(path(id)); in) {
      std::stringstream text;
      text << in.rdbuf();
      if (std::optional<std::size_t> c = parse(text.str(), config_texts))
        return Hit{*c, false};
    }
  }
  for (CacheLevel *level : remote_) {
    const std::optional<std::string> text = level->get_record(kKind, id);
    if (!text)
      continue;
    if (std::optional<std::size_t> c = parse(*text, config_texts)) {
      write_file(id, *text);
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
  const std::string text = j.dump(2) + "\n";
  write_file(id, text);
  for (CacheLevel *level : remote_)
    level->put_record(kKind, id, text);
}

void TuningCache::write_file(const std::string &id, const std::string &text) const {
  if (dir_.empty())
    return;
  std::error_code ec;
  fs::create_directories(dir_ + "/tuning", ec);
  fs::permissions(dir_ + "/tuning", fs::perms::owner_all, fs::perm_options::replace, ec);
  const std::string final_path = path(id);
  const std::string tmp = final_path + ".tmp" + std::to_string(::getpid()) + "." +
                          std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out.flush())
      return (void)fs::remove(tmp, ec);
  }
  fs::rename(tmp, final_path, ec);
  if (ec)
    fs::remove(tmp, ec);
}

} // namespace kiln::runtime
