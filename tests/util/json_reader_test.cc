#include "util/json_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/errors.h"

namespace memplan::util {
namespace {

std::string error_of(const std::string& text, const JsonReadOptions& options = {}) {
  try {
    parse_json_text("in.json", text, options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JsonReader, ParsesWhatNlohmannParses) {
  const std::string text =
      R"({"a": [1, -2, 3.5, "x", null, true, {"b": {}}], "c": 18446744073709551615})";
  EXPECT_EQ(parse_json_text("in.json", text), nlohmann::json::parse(text));
}

TEST(JsonReader, RefusesNestingDeeperThanTheLimitSayingWhere) {
  EXPECT_EQ(parse_json_text("in.json", std::string(64, '[') + std::string(64, ']')),
            nlohmann::json::parse(std::string(64, '[') + std::string(64, ']')));
  EXPECT_EQ(
      error_of(std::string(65, '[') + std::string(65, ']')),
      "in.json: "
      "[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0]."
      "[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0]."
      "[0]."
      "[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0].[0]: nested more than "
      "64 "
      "levels deep");
  // 200k levels overflowed the stack before the limit existed.
  EXPECT_NE(error_of(std::string(200000, '[')).find("nested more than 64 levels deep"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"a": [[[]]]})", {.max_depth = 3, .user_named_sections = {}})
                .find("in.json: a.[0].[0]: nested more than 3"),
            std::string::npos);
}

TEST(JsonReader, ADuplicateKeyIsNamedWithItsPath) {
  EXPECT_EQ(error_of(R"({"steps": [{"op": 1}, {"op": 2, "op": 3}]})"),
            "in.json: steps.[1].op: key given twice");
  // The same key in two objects is fine.
  EXPECT_NO_THROW(parse_json_text("in.json", R"([{"op": 1}, {"op": 2}])"));
}

TEST(JsonReader, UserNamesAreQuotedAndOddKeysToo) {
  JsonReadOptions o{.max_depth = 64, .user_named_sections = {"nodes"}};
  EXPECT_EQ(error_of(R"({"nodes": {"MatMul_3": 1, "MatMul_3": 2}})", o),
            "in.json: nodes.\"MatMul_3\": key given twice");
  EXPECT_EQ(error_of(R"({"a b": {"x": 1, "x": 1}})"), "in.json: \"a b\".x: key given twice");
}

TEST(JsonReader, NumbersBeyondADoubleAndSyntaxErrorsAreBadInput) {
  EXPECT_NE(
      error_of(R"({"t": {"seconds": 1e999}})").find("in.json: t.seconds: number out of range"),
      std::string::npos);
  EXPECT_NE(error_of("{\"a\": ").find("in.json: not valid JSON: "), std::string::npos);
  EXPECT_NE(error_of("").find("in.json: not valid JSON: "), std::string::npos);
  EXPECT_NE(error_of("[1] 2").find("in.json: not valid JSON: "), std::string::npos);
}

TEST(JsonReader, AWideObjectParses) {
  // The size that took minutes through nlohmann's callback parser.
  std::string text = "{";
  for (int i = 0; i < 100000; ++i)
    text += (i ? ",\"n" : "\"n") + std::to_string(i) + "\": {\"s\": 1}";
  text += "}";
  auto doc = parse_json_text("in.json", text);
  EXPECT_EQ(doc.size(), 100000u);
  EXPECT_EQ(doc["n99999"]["s"], 1);
}

}  // namespace
}  // namespace memplan::util
