#include "runtime/json_document.hpp"

#include <rapidjson/error/en.h>

namespace kiln::runtime {

JsonDocument::JsonDocument(std::string_view text) {
  // Iterative, not recursive: a damaged file of ten thousand '[' must not
  // overflow the stack. Validated UTF-8, as nlohmann's parser checks it.
  constexpr unsigned kFlags =
      rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag;
  doc_.Parse<kFlags>(text.data(), text.size());
  if (doc_.HasParseError())
    throw std::runtime_error(std::string("not JSON: ") +
                             rapidjson::GetParseError_En(doc_.GetParseError()) + " at byte " +
                             std::to_string(doc_.GetErrorOffset()));
}

JsonObject::JsonObject(const JsonValue &v, const char *what) : v_(&v) {
  if (!v.IsObject())
    throw std::runtime_error(std::string(what) + " is not a JSON object");
}

void JsonObject::wrong(const char *name, const char *expected) const {
  throw std::runtime_error(std::string("field '") + name + "' is missing or not " + expected);
}

const JsonValue &JsonObject::at(const char *name) const {
  const auto it = v_->FindMember(name);
  if (it == v_->MemberEnd())
    throw std::runtime_error(std::string("no field '") + name + "'");
  return it->value;
}

std::string_view JsonObject::string_view(const char *name) const {
  const JsonValue &v = at(name);
  if (!v.IsString())
    wrong(name, "a string");
  return {v.GetString(), v.GetStringLength()};
}

bool JsonObject::boolean(const char *name) const {
  const JsonValue &v = at(name);
  if (!v.IsBool())
    wrong(name, "a boolean");
  return v.GetBool();
}

double JsonObject::number(const char *name) const {
  const JsonValue &v = at(name);
  if (!v.IsNumber())
    wrong(name, "a number");
  return v.GetDouble();
}

int64_t JsonObject::int64(const char *name) const {
  return integer<int64_t>(name);
}

uint64_t JsonObject::uint64(const char *name) const {
  return integer<uint64_t>(name);
}

rapidjson::GenericArray<true, JsonValue> JsonObject::array(const char *name) const {
  const JsonValue &v = at(name);
  if (!v.IsArray())
    wrong(name, "an array");
  return v.GetArray();
}

} // namespace kiln::runtime
