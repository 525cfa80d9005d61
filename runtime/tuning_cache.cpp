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

namespace kiln::runtime {

namespace fs = std::filesystem;

std::string TuningCache::id(const std::string &identity) {
  return sha256_hex(identity);
}

std::optional<std::size_t> TuningCache::get(const std::string &id,
                                            const std::vector<std::string> &config_texts) const {
  if (dir_.empty())
    return std::nullopt;
  std::ifstream in(path(id));
  if (!in)
    return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("config") || !j["config"].is_number_unsigned() ||
      !j.contains("config_text") || !j["config_text"].is_string())
    return std::nullopt;
  const auto c = j["config"].get<std::size_t>();
  if (c >= config_texts.size() || j["config_text"].get<std::string>() != config_texts[c])
    return std::nullopt;
  return c;
}

void TuningCache::put(const std::string &id, const std::string &kernel,
                      const TuningRecord &r) const {
  if (dir_.empty())
    return;
  nlohmann::json times = nlohmann::json::array();
  for (double ms : r.ms)
    times.push_back(std::isfinite(ms) ? nlohmann::json(ms) : nlohmann::json(nullptr));
  const nlohmann::json j = {{"kernel", kernel},
                            {"key", r.key_text},
                            {"config", r.config},
                            {"config_text", r.config_text},
                            {"ms", times}};
  std::error_code ec;
  fs::create_directories(dir_ + "/tuning", ec);
  fs::permissions(dir_ + "/tuning", fs::perms::owner_all, fs::perm_options::replace, ec);
  const std::string final_path = path(id);
  const std::string tmp = final_path + ".tmp" + std::to_string(::getpid()) + "." +
                          std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(2) << "\n";
    if (!out.flush())
      return (void)fs::remove(tmp, ec);
  }
  fs::rename(tmp, final_path, ec);
  if (ec)
    fs::remove(tmp, ec);
}

} // namespace kiln::runtime
