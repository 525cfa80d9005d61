#include "runtime/knobs.hpp"

#include <cstdlib>

#include "kiln/error.hpp"

namespace kiln::runtime {

namespace {

const char *env(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

bool env_bool(const char *name) {
  const char *v = env(name);
  if (!v)
    return false;
  const std::string s(v);
  if (s == "1" || s == "true" || s == "on" || s == "yes")
    return true;
  if (s == "0" || s == "false" || s == "off" || s == "no")
    return false;
  throw ArgumentError(std::string(name) + "='" + s + "' is not a boolean; use 1 or 0");
}

uint64_t env_uint(const char *name) {
  const char *v = env(name);
  if (!v)
    return 0;
  char *end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (*end != '\0' || v[0] == '-')
    throw ArgumentError(std::string(name) + "='" + v + "' is not a non-negative integer");
  return n;
}

/// `name`'s value, `fallback` when unset; outside [min, max] is an error
/// (a bound keeps durations clear of overflow where they are added to a clock).
uint64_t env_uint_in(const char *name, uint64_t fallback, uint64_t min, uint64_t max) {
  if (!env(name))
    return fallback;
  const uint64_t n = env_uint(name);
  if (n < min || n > max)
    throw ArgumentError(std::string(name) + "='" + env(name) + "' must be from " +
                        std::to_string(min) + " to " + std::to_string(max));
  return n;
}

} // namespace

Knobs Knobs::from_env() {
  Knobs k;
  if (const char *b = env("KILN_BACKEND")) {
    k.backend = b;
    if (k.backend != "cpu" && k.backend != "cuda" && k.backend != "auto")
      throw ArgumentError("KILN_BACKEND='" + k.backend + "' is not one of cpu, cuda, auto");
  }
  if (const char *d = env("KILN_CACHE_DIR"))
    k.cache_dir = d;
  else if (const char *x = env("XDG_CACHE_HOME"))
    k.cache_dir = std::string(x) + "/kiln";
  else if (const char *h = env("HOME"))
    k.cache_dir = std::string(h) + "/.cache/kiln";
  k.cache_max_bytes = env_uint("KILN_CACHE_MAX_BYTES");
  k.compile_threads = static_cast<int>(env_uint("KILN_COMPILE_THREADS"));
  if (const char *r = env("KILN_REDIS_URL"))
    k.redis_url = r;
  if (const char *h = env("KILN_CACHE_HMAC_KEY"))
    k.cache_hmac_key = h;
  constexpr uint64_t hour_ms = 3600 * 1000, ten_years_s = 10ull * 365 * 24 * 3600;
  k.redis_connect_timeout_ms =
      env_uint_in("KILN_REDIS_CONNECT_TIMEOUT_MS", k.redis_connect_timeout_ms, 1, hour_ms);
  k.redis_timeout_ms = env_uint_in("KILN_REDIS_TIMEOUT_MS", k.redis_timeout_ms, 1, hour_ms);
  k.redis_ttl_s = env_uint_in("KILN_REDIS_TTL_S", k.redis_ttl_s, 0, ten_years_s);
  k.redis_claim_ttl_ms = env_uint_in("KILN_REDIS_CLAIM_TTL_MS", k.redis_claim_ttl_ms, 1, hour_ms);
  k.redis_peer_wait_ms = env_uint_in("KILN_REDIS_PEER_WAIT_MS", k.redis_peer_wait_ms, 0, hour_ms);
  k.debug = env_bool("KILN_DEBUG");
  if (const char *d = env("KILN_DUMP_DIR"))
    k.dump_dir = d;
  if (const char *d = env("KILN_OVERRIDE_DIR"))
    k.override_dir = d;
  k.no_cache = env_bool("KILN_NO_CACHE");
  k.always_compile = env_bool("KILN_ALWAYS_COMPILE");
  k.keep_stages = env_bool("KILN_KEEP_STAGES");
  k.print_autotuning = env_bool("KILN_PRINT_AUTOTUNING");
  // 0 is no bound, as KILN_CACHE_MAX_BYTES's; the top keeps table sizes
  // clear of overflow.
  k.memory_cache_max = env_uint_in("KILN_MEMORY_CACHE_MAX", 0, 0, uint64_t{1} << 32);
  if (const char *p = env("KILN_PATH")) {
    std::string_view rest = p;
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      if (std::string_view dir = rest.substr(0, colon); !dir.empty())
        k.module_path.emplace_back(dir);
      rest = colon == std::string_view::npos ? "" : rest.substr(colon + 1);
    }
  }
  return k;
}

} // namespace kiln::runtime
