#include "runtime/redis_codec.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "compiler/support/sha256.hpp"
#include "runtime/cached_kernel_json.hpp"

namespace kiln::runtime {

using nlohmann::json;

namespace {

constexpr std::string_view kMagic = "KILN2";
constexpr std::string_view kRecordMagic = "KILNR2";
constexpr char kSigned = 'S', kUnsigned = 'U';
constexpr size_t kSigBytes = 32;

std::array<uint8_t, kSigBytes> sign(const std::string &hmac_key, std::string_view payload) {
  std::array<uint8_t, kSigBytes> sig{};
  unsigned len = 0;
  HMAC(EVP_sha256(), hmac_key.data(), static_cast<int>(hmac_key.size()),
       reinterpret_cast<const unsigned char *>(payload.data()), payload.size(), sig.data(), &len);
  return sig;
}

void put_u64(std::string &out, uint64_t n) {
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>(n >> (8 * i));
}

uint64_t get_u64(std::string_view in) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= uint64_t(static_cast<uint8_t>(in[static_cast<size_t>(i)])) << (8 * i);
  return n;
}

} // namespace

std::string RedisCodec::seal(std::string_view magic, std::string_view payload) const {
  std::string value(magic);
  if (hmac_key_.empty()) {
    value += kUnsigned;
  } else {
    value += kSigned;
    const auto sig = sign(hmac_key_, payload);
    value.append(reinterpret_cast<const char *>(sig.data()), sig.size());
  }
  return value.append(payload);
}

std::optional<std::string_view> RedisCodec::unseal(std::string_view magic, std::string_view value,
                                                   std::string &why) const {
  if (value.size() <= magic.size() || value.substr(0, magic.size()) != magic) {
    why = "not a kiln value of this version";
    return std::nullopt;
  }
  const char how = value[magic.size()];
  std::string_view rest = value.substr(magic.size() + 1);
  if (how == kUnsigned) {
    if (!hmac_key_.empty()) {
      why = "it is not signed, and KILN_CACHE_HMAC_KEY is set: only entries signed with it are "
            "trusted";
      return std::nullopt;
    }
    return rest;
  }
  if (how != kSigned || rest.size() < kSigBytes) {
    why = "not a kiln value of this version";
    return std::nullopt;
  }
  if (hmac_key_.empty()) {
    why = "it is signed, and KILN_CACHE_HMAC_KEY is not set, so it cannot be checked: set the "
          "fleet's key";
    return std::nullopt;
  }
  const std::string_view payload = rest.substr(kSigBytes);
  const auto sig = sign(hmac_key_, payload);
  if (CRYPTO_memcmp(sig.data(), rest.data(), kSigBytes) != 0) {
    why = "its signature does not match KILN_CACHE_HMAC_KEY";
    return std::nullopt;
  }
  return payload;
}

std::string RedisCodec::encode(const CachedKernel &entry) const {
  std::optional<json> meta = metadata_json(entry);
  if (!meta)
    return "";
  const CompiledKernel &k = entry.kernel;
  json parts = json::array();
  parts.push_back({{"bytes", k.binary.size()}});
  for (const auto &[stage, text] : k.stages)
    parts.push_back({{"stage", stage}, {"bytes", text.size()}, {"sha256", sha256_hex(text)}});
  (*meta)["parts"] = std::move(parts);
  const std::string text = meta->dump();
  std::string payload;
  put_u64(payload, text.size());
  payload += text;
  payload.append(reinterpret_cast<const char *>(k.binary.data()), k.binary.size());
  for (const auto &[stage, stage_text] : k.stages)
    payload += stage_text;
  return seal(kMagic, payload);
}

std::optional<CachedKernel> RedisCodec::decode(std::string_view value, std::string &why) const {
  const std::optional<std::string_view> sealed = unseal(kMagic, value, why);
  if (!sealed)
    return std::nullopt;
  std::string_view payload = *sealed;
  if (payload.size() < 8 || get_u64(payload) > payload.size() - 8) {
    why = "truncated";
    return std::nullopt;
  }
  const uint64_t n = get_u64(payload);
  try {
    const JsonDocument doc(payload.substr(8, n));
    const JsonObject meta(doc.root());
    CachedKernel out = from_metadata_json(meta);
    std::string_view rest = payload.substr(8 + n);
    // Each part is cut from the rest by its size; together they are all of it.
    auto cut = [&](const JsonObject &part) {
      const uint64_t bytes = part.uint64("bytes");
      if (bytes > rest.size())
        throw std::runtime_error("truncated");
      const std::string_view p = rest.substr(0, bytes);
      rest.remove_prefix(bytes);
      return p;
    };
    const auto parts = meta.array("parts");
    if (parts.Empty())
      throw std::runtime_error("no parts");
    const std::string_view binary = cut(JsonObject(parts[0], "a part"));
    if (sha256_hex(binary) != out.kernel.hash)
      throw std::runtime_error("its binary does not match its hash");
    out.kernel.binary.assign(binary.begin(), binary.end());
    for (rapidjson::SizeType i = 1; i < parts.Size(); ++i) {
      const JsonObject part(parts[i], "a part");
      const std::string stage = part.string("stage");
      const std::string_view text = cut(part);
      if (sha256_hex(text) != part.string_view("sha256"))
        throw std::runtime_error("stage " + stage + " does not match its hash");
      out.kernel.stages[stage] = std::string(text);
    }
    if (!rest.empty())
      throw std::runtime_error("bytes after its last part");
    return out;
  } catch (const std::exception &e) {
    why = std::string("unreadable: ") + e.what();
    return std::nullopt;
  }
}

std::string RedisCodec::encode_record(std::string_view text) const {
  return seal(kRecordMagic, text);
}

std::optional<std::string> RedisCodec::decode_record(std::string_view value,
                                                     std::string &why) const {
  const std::optional<std::string_view> text = unseal(kRecordMagic, value, why);
  return text ? std::optional<std::string>(*text) : std::nullopt;
}

} // namespace kiln::runtime
