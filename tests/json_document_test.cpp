// The JSON reader of cache hits (runtime/json_document.hpp): what it accepts
// and how it refuses damaged text, by name of the field.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "runtime/json_document.hpp"

using kiln::runtime::JsonDocument;
using kiln::runtime::JsonObject;

namespace {

std::string error_of(const std::string &text, void (*read)(const JsonObject &)) {
  try {
    const JsonDocument doc(text);
    read(JsonObject(doc.root()));
  } catch (const std::runtime_error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("json document: fields are read by name and type") {
  const JsonDocument doc(R"({"s": "x\u00e9", "i": -3, "u": 18446744073709551615, "b": true,
                             "f": 0.5, "o": {"n": 7}, "a": [1, 2, 3]})");
  const JsonObject o(doc.root());
  CHECK(o.string("s") == "x\xc3\xa9");
  CHECK(o.int64("i") == -3);
  CHECK(o.uint64("u") == UINT64_MAX);
  CHECK(o.boolean("b"));
  CHECK(o.number("f") == 0.5);
  CHECK(o.number("i") == -3.0);
  CHECK(o.object("o").integer<int>("n") == 7);
  CHECK(o.array("a").Size() == 3);
  CHECK(o.has("s"));
  CHECK_FALSE(o.has("t"));
}

TEST_CASE(
    "json document: a missing field, another type or an integer out of range names the field") {
  const std::string text = R"({"n": 300, "s": "x", "neg": -1, "o": [1]})";
  CHECK(error_of(text, [](const JsonObject &o) { (void)o.string("absent"); }) ==
        "no field 'absent'");
  CHECK(error_of(text, [](const JsonObject &o) { (void)o.string("n"); }) ==
        "field 'n' is missing or not a string");
  CHECK(error_of(text, [](const JsonObject &o) { (void)o.integer<uint8_t>("n"); }) ==
        "field 'n' is missing or not an integer in range");
  CHECK(error_of(text, [](const JsonObject &o) { (void)o.uint64("neg"); }) ==
        "field 'neg' is missing or not an integer in range");
  CHECK(error_of(text, [](const JsonObject &o) { (void)o.int64("s"); }) ==
        "field 's' is missing or not an integer in range");
  CHECK(error_of(text, [](const JsonObject &o) { (void)o.object("o"); }) ==
        "o is not a JSON object");
  CHECK(error_of(text, [](const JsonObject &o) { (void)o.array("s"); }) ==
        "field 's' is missing or not an array");
  CHECK(error_of("[1, 2]", [](const JsonObject &) {}) == "metadata is not a JSON object");
}

TEST_CASE("json document: text that is not one JSON value is refused, however deep") {
  for (const std::string &bad : {std::string("{\"a\": 1}x"), std::string("{\"a\": "),
                                 std::string(""), std::string("{\"a\": \"\xff\"}"),
                                 std::string(200000, '['), std::string("{\"a\": 1, \"a\" 2}")}) {
    CAPTURE(bad.substr(0, 20));
    const std::string e = error_of(bad, [](const JsonObject &) {});
    CHECK(e.rfind("not JSON: ", 0) == 0);
  }
  // Nesting as deep as that, well formed, parses without recursion.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK_NOTHROW(JsonDocument{deep});
}
