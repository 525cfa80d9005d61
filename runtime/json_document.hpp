// Reading JSON where a disk or remote cache hit waits for it: RapidJSON's
// DOM over buffers inside the document, so that a hit's metadata (1-2 KB)
// costs neither a heap allocation nor the tree of std::maps nlohmann
// builds. Measured on the 1.8 KB meta.json of reduce_rows, first parse in a
// fresh process: nlohmann 55-70 us, this 10-13 us. Writing stays on
// nlohmann (cached_kernel_json.cpp), off the hit path.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

// A type or shape RapidJSON asserts on is a kiln bug (the getters below
// check first), never an abort on a damaged file.
#ifndef RAPIDJSON_ASSERT
#define RAPIDJSON_ASSERT(x)                                                                        \
  do {                                                                                             \
    if (!(x))                                                                                      \
      throw std::logic_error("kiln bug: RapidJSON assertion " #x);                                 \
  } while (0)
#endif
#define RAPIDJSON_HAS_STDSTRING 1
#include <rapidjson/document.h>

namespace kiln::runtime {

using JsonValue = rapidjson::Value;

/// One parsed JSON text. Throws std::runtime_error ("not JSON: ...") for
/// text that is not one well-formed JSON value in valid UTF-8. The text
/// may be dropped once parsed: strings are copied into the document.
class JsonDocument {
public:
  explicit JsonDocument(std::string_view text);
  JsonDocument(const JsonDocument &) = delete;
  JsonDocument &operator=(const JsonDocument &) = delete;

  const JsonValue &root() const { return doc_; }

private:
  using Pool = rapidjson::MemoryPoolAllocator<>;
  // Sized for a kernel's metadata; a larger text spills into the heap.
  alignas(8) char values_[16384];
  alignas(8) char stack_[4096];
  Pool value_pool_{values_, sizeof values_};
  Pool stack_pool_{stack_, sizeof stack_};
  rapidjson::GenericDocument<rapidjson::UTF8<>, Pool, Pool> doc_{&value_pool_, 1024, &stack_pool_};
};

/// An object's fields, each read by name; every getter throws
/// std::runtime_error naming the field when it is missing or holds another
/// type (or an integer out of the range asked for).
class JsonObject {
public:
  /// Throws if `v` is not an object; `what` names it in that message.
  explicit JsonObject(const JsonValue &v, const char *what = "metadata");

  bool has(const char *name) const { return v_->HasMember(name); }
  const JsonValue &value() const { return *v_; }
  const JsonValue &at(const char *name) const;
  std::string_view string_view(const char *name) const;
  std::string string(const char *name) const { return std::string(string_view(name)); }
  bool boolean(const char *name) const;
  double number(const char *name) const;
  int64_t int64(const char *name) const;
  uint64_t uint64(const char *name) const;
  /// An integer field that must fit T.
  template <class T> T integer(const char *name) const;
  JsonObject object(const char *name) const { return JsonObject(at(name), name); }
  /// The elements of an array field.
  rapidjson::GenericArray<true, JsonValue> array(const char *name) const;

private:
  [[noreturn]] void wrong(const char *name, const char *expected) const;
  const JsonValue *v_;
};

template <class T> T JsonObject::integer(const char *name) const {
  const JsonValue &v = at(name);
  if (v.IsInt64()) {
    const int64_t i = v.GetInt64();
    if (std::in_range<T>(i))
      return static_cast<T>(i);
  } else if (v.IsUint64()) {
    const uint64_t u = v.GetUint64();
    if (std::in_range<T>(u))
      return static_cast<T>(u);
  }
  wrong(name, "an integer in range");
}

} // namespace kiln::runtime
