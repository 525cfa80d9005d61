// Tuning results on disk: the config the autotuner chose for one (kernel
// source and globals, config list, tuning key, device), under
// KILN_CACHE_DIR/tuning/, so that a later process launches the best config
// without benchmarking (Triton's `cache_results`). A file is written under a
// temporary name and renamed, so readers see all of it or nothing; a file
// that does not parse or does not match the configs it was made for is
// ignored (and tuned again), never trusted.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kiln::runtime {

struct TuningRecord {
  std::size_t config = 0;  ///< index into the decorator's configs
  std::string config_text; ///< "BLOCK=128, num_warps=4": checked on read
  std::string key_text;    ///< the tuning key, for people reading the file
  std::vector<double> ms;  ///< each config's median time (inf: failed)
};

class TuningCache {
public:
  /// `dir`: the cache folder (KILN_CACHE_DIR); empty: nothing is stored.
  explicit TuningCache(std::string dir) : dir_(std::move(dir)) {}

  /// The file name of a tuning: SHA-256 of what identifies it.
  static std::string id(const std::string &identity);

  /// The stored choice for `id`, when its config index and text match.
  std::optional<std::size_t> get(const std::string &id,
                                 const std::vector<std::string> &config_texts) const;
  /// Stores a choice; a failure to write only means tuning again later.
  void put(const std::string &id, const std::string &kernel, const TuningRecord &r) const;

private:
  std::string path(const std::string &id) const { return dir_ + "/tuning/" + id + ".json"; }
  std::string dir_;
};

} // namespace kiln::runtime
