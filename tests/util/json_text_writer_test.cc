#include "util/json_text_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

namespace memplan::util {
namespace {

using nlohmann::json;

std::string dumped(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string written(double v) {
  std::string out;
  JsonTextWriter(out).value(v);
  return out;
}

TEST(JsonTextWriter, DoublesAsNlohmannWritesThem) {
  std::mt19937_64 rng(11);
  std::vector<double> values = {0.0,
                                -0.0,
                                1.0,
                                0.1,
                                1e-5,
                                1e-4,
                                123456789012345.0,
                                1e15,
                                1e16,
                                1e21,
                                5e-324,
                                std::numeric_limits<double>::max(),
                                -2.5};
  for (int k = 0; k < 2000; ++k) {
    // Random bit patterns cover every exponent; random micro-second times
    // are what the trace holds.
    double v = 0;
    const std::uint64_t bits = rng();
    std::memcpy(&v, &bits, sizeof v);
    values.push_back(v);
    values.push_back(static_cast<double>(rng() % 10000000) * 1e-7 * 1e6);
  }
  for (double v : values) ASSERT_EQ(written(v), dumped(json(v))) << v;
}

TEST(JsonTextWriter, NonFiniteIsNull) {
  EXPECT_EQ(written(std::nan("")), "null");
  EXPECT_EQ(written(std::numeric_limits<double>::infinity()), "null");
}

TEST(JsonTextWriter, StringsEscapedAndRepairedAsNlohmann) {
  const std::vector<std::string> texts = {"",
                                          "plain/Name_0",
                                          "quo\"te",
                                          "back\\slash",
                                          "tab\tnew\nline\x01\x1f\x7f",
                                          "caf\xc3\xa9",
                                          "bad \xff\xfe utf8",
                                          "cut \xe2\x82",
                                          "\xf0\x9f\x98\x80"};
  for (const std::string& t : texts) {
    std::string out;
    JsonTextWriter(out).value(t);
    EXPECT_EQ(out, dumped(json(t))) << t;
  }
}

TEST(JsonTextWriter, NestedDocumentMatchesTheDom) {
  const json doc = {{"a", json::array({1, -2, std::uint64_t{18446744073709551615u}, 0.5})},
                    {"b", json::object()},
                    {"c", {{"d", "x"}, {"e", json::array()}}},
                    {"f", true},
                    {"g", false}};
  std::string out;
  JsonTextWriter w(out);
  w.begin_object().key("a").begin_array();
  w.value(1).value(-2).value(std::uint64_t{18446744073709551615u}).value(0.5);
  w.end_array().key("b").begin_object().end_object();
  w.key("c").begin_object().member("d", "x").key("e").begin_array().end_array().end_object();
  w.member("f", true).member("g", false).end_object();
  EXPECT_EQ(out, dumped(doc));
}

}  // namespace
}  // namespace memplan::util
