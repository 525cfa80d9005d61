// Tuning results that persist: the config the autotuner chose for one
// (kernel source and globals, config list, tuning key, device), so that a
// later process, or another machine of the fleet, launches the best config
// without benchmarking (Triton's `cache_results`).
//
// On disk under KILN_CACHE_DIR/tuning/<id>.json (folder 0700, files 0600),
// written as the disk cache writes (a temporary name in the folder, fsync,
// rename), so readers see all of it or nothing, even after a crash; and,
// when KILN_REDIS_URL is set, the same text as a record of the remote cache
// (kind "tuning", signed with KILN_CACHE_HMAC_KEY). A record from either
// place that does not parse or does not match the configs it was made for
// is ignored with a warning (and tuned again), never trusted, as is a file
// another user could have written; a remote record that passes is written
// to disk, so the next process finds it locally. Writes go through a
// BackgroundWriter when given one, so the launch that tuned does not wait
// for the fsync.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::runtime {

class BackgroundWriter;
class CacheLevel;

struct TuningRecord {
  std::size_t config = 0;  ///< index into the decorator's configs
  std::string config_text; ///< "BLOCK=128, num_warps=4": checked on read
  std::string key_text;    ///< the tuning key, for people reading the file
  std::vector<double> ms;  ///< each config's median time (inf: failed)
};

class TuningCache {
public:
  /// `dir`: the cache folder (KILN_CACHE_DIR); empty: nothing is stored on
  /// disk. `remote`: the levels asked after the disk (those that keep no
  /// records find nothing).
  /// `writer`: where stores are queued (the process's, flushed at exit);
  /// null: they are written before put() returns.
  explicit TuningCache(std::string dir, std::vector<CacheLevel *> remote = {},
                       BackgroundWriter *writer = nullptr)
      : dir_(std::move(dir)), remote_(std::move(remote)), writer_(writer) {}

  /// The file name of a tuning: SHA-256 of what identifies it.
  static std::string id(const std::string &identity);

  struct Hit {
    std::size_t config = 0;
    bool remote = false; ///< found in a remote level (and written to disk)
  };
  /// The stored choice for `id`, when its config index and text match.
  std::optional<Hit> get(const std::string &id, const std::vector<std::string> &config_texts) const;
  /// Stores a choice; a failure to write only means tuning again later.
  void put(const std::string &id, const std::string &kernel, const TuningRecord &r) const;

  /// The config a record's text names, if it names one of `config_texts`
  /// by index and text; otherwise nullopt, and `why` (if given) says why.
  static std::optional<std::size_t> parse(const std::string &text,
                                          const std::vector<std::string> &config_texts,
                                          std::string *why = nullptr);

private:
  std::string path(const std::string &id) const { return dir_ + "/tuning/" + id + ".json"; }
  /// Now, or on the writer's thread.
  void write(std::function<void()> w) const;
  /// Writes the file now; a failure is a warning (once per process).
  static void write_file(const std::string &dir, const std::string &id, const std::string &text);
  std::string dir_;
  std::vector<CacheLevel *> remote_;
  BackgroundWriter *writer_;
};

} // namespace kiln::runtime
