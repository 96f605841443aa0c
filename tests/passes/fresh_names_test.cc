// Names the rewrite adds: `<base><suffix>`, then `_2`, `_3`, … past every
// name the graph already has or an earlier call took.
#include "passes/fresh_names.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace memplan::passes {
namespace {

onnx::GraphProto graph_with_values(std::initializer_list<const char*> names) {
  onnx::GraphProto g;
  for (const char* n : names) g.add_input()->set_name(n);
  return g;
}

TEST(FreshNames, NumbersFromTwoPastTheGraphsOwnNames) {
  FreshNames names = FreshNames::values_of(graph_with_values({"x_anchor", "x_anchor_3"}));
  EXPECT_EQ(names.take("x", "_anchor"), "x_anchor_2");
  EXPECT_EQ(names.take("x", "_anchor"), "x_anchor_4");  // _3 is the graph's
  EXPECT_EQ(names.take("y", "_anchor"), "y_anchor");
  EXPECT_EQ(names.take("y", "_anchor"), "y_anchor_2");
}

// A name reserved after a stem was numbered is still skipped.
TEST(FreshNames, AReservedNameIsSkippedLater) {
  FreshNames names = FreshNames::values_of({});
  EXPECT_EQ(names.take("a", "_r"), "a_r");
  names.reserve("a_r_2");
  EXPECT_EQ(names.take("a", "_r"), "a_r_3");
}

// One stem shared by many anchors: every name distinct, numbered in order.
TEST(FreshNames, ManyTakesOfOneStemAreDistinctAndConsecutive) {
  FreshNames names = FreshNames::values_of({});
  std::set<std::string> seen;
  for (int k = 0; k < 5000; ++k) seen.insert(names.take("n", "_anchor_empty"));
  EXPECT_EQ(seen.size(), 5000u);
  EXPECT_EQ(seen.count("n_anchor_empty"), 1u);
  EXPECT_EQ(seen.count("n_anchor_empty_5000"), 1u);
  EXPECT_EQ(seen.count("n_anchor_empty_5001"), 0u);
}

}  // namespace
}  // namespace memplan::passes
