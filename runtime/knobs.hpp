// Every environment variable kiln reads, read in one place (DESIGN.md §7).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::runtime {

struct Knobs {
  std::string backend = "auto";     ///< KILN_BACKEND: cpu | cuda | auto
  std::string cache_dir;            ///< KILN_CACHE_DIR (default $XDG_CACHE_HOME/kiln or ~/.cache/kiln)
  uint64_t cache_max_bytes = 0;     ///< KILN_CACHE_MAX_BYTES (0: no limit)
  int compile_threads = 0;          ///< KILN_COMPILE_THREADS (0: all cores)
  std::string redis_url;            ///< KILN_REDIS_URL (empty: off)
  std::string cache_hmac_key;       ///< KILN_CACHE_HMAC_KEY
  uint64_t redis_connect_timeout_ms = 50; ///< KILN_REDIS_CONNECT_TIMEOUT_MS (at least 1)
  uint64_t redis_timeout_ms = 200;        ///< KILN_REDIS_TIMEOUT_MS: a whole request (at least 1)
  uint64_t redis_ttl_s = 7 * 24 * 3600;   ///< KILN_REDIS_TTL_S: value expiry (0: never)
  /// KILN_REDIS_CLAIM_TTL_MS: how long a compiling process holds a key's
  /// fleet-wide claim (at least 1; a claim outlived by its compile lets a
  /// peer compile the key too, a cost, not an error).
  uint64_t redis_claim_ttl_ms = 30000;
  /// KILN_REDIS_PEER_WAIT_MS: how long a process waits for the entry of a
  /// peer that holds the key's claim before compiling itself (0: not at all).
  uint64_t redis_peer_wait_ms = 10000;
  bool debug = false;               ///< KILN_DEBUG
  std::string dump_dir;             ///< KILN_DUMP_DIR
  std::string override_dir;         ///< KILN_OVERRIDE_DIR: user-edited stage files used in place of the compiler's
  bool no_cache = false;            ///< KILN_NO_CACHE (`--no-cache`): no disk or remote cache at all
  bool always_compile = false;      ///< KILN_ALWAYS_COMPILE
  /// KILN_KEEP_STAGES: kernels in the memory cache keep their stage texts
  /// (tile IR, LLVM IR, PTX: tens of KB each); off, they keep the binary
  /// and metadata only (KILN_DUMP_DIR and compile_only still see every stage).
  bool keep_stages = false;
  /// KILN_MEMORY_CACHE_MAX: at most this many compiled kernels per kernel
  /// and device in memory, least recently used evicted first (0: no bound).
  uint64_t memory_cache_max = 0;
  bool print_autotuning = false;    ///< KILN_PRINT_AUTOTUNING: the chosen config and each config's time, on stderr
  /// KILN_PATH (':'-separated): more folders where a kernel file's
  /// `import x` / `from x import f` finds other kernel files.
  std::vector<std::string> module_path;

  /// The knobs that change generated code, as text for the compile key.
  std::string code_knobs() const { return override_dir.empty() ? "" : "override=" + override_dir; }

  /// Reads the environment. Throws ArgumentError for a malformed value.
  static Knobs from_env();
};

} // namespace kiln::runtime
