#include "ir/node_costs.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ir/device_presets.h"
#include "ir/roofline.h"
#include "util/errors.h"

namespace memplan::ir {
namespace {

TensorId add_float(Graph& g, const std::string& name, std::vector<std::int64_t> shape) {
  TensorId id = g.add_tensor(name);
  Tensor& t = g.mutable_tensors()[id];
  t.elem_type = 1;
  std::uint64_t n = 1;
  for (auto d : shape) n *= static_cast<std::uint64_t>(d);
  t.bytes = 4 * n;
  t.shape = std::move(shape);
  t.shape_known = true;
  return id;
}

void add_op(Graph& g, std::string name, std::string op, std::vector<TensorId> in,
            std::vector<TensorId> out) {
  Node n;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  g.add_node(std::move(n));
}

// x -> Relu_a -> y -> MatMul_b (with w) -> z -> Relu_c -> out
Graph three_nodes() {
  Graph g;
  TensorId x = add_float(g, "x", {256, 512});
  TensorId w = add_float(g, "w", {512, 512});
  TensorId y = add_float(g, "y", {256, 512});
  TensorId z = add_float(g, "z", {256, 512});
  add_op(g, "Relu_a", "Relu", {x}, {y});
  add_op(g, "MatMul_b", "MatMul", {y, w}, {z});
  add_op(g, "Relu_c", "Relu", {z}, {add_float(g, "out", {256, 512})});
  return g;
}

bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const auto& l : lines)
    if (l.find(part) != std::string::npos) return true;
  return false;
}

TEST(NodeCosts, MeasuredWhereGivenRooflineElsewhere) {
  Graph g = three_nodes();
  const DeviceSpec& d = device_preset("a100-40gb");
  std::vector<std::string> warnings;
  NodeCosts c = make_node_costs(g, d, {{"Relu_a", 1e-3}, {"ghost", 2e-3}}, "memplan.costs run.json",
                                warnings);
  EXPECT_EQ(c.measured, 1u);
  EXPECT_EQ(c.modelled, 2u);
  EXPECT_EQ(c.source, "memplan.costs run.json");
  EXPECT_EQ(c.device.name, "a100-40gb");
  ASSERT_EQ(c.seconds.size(), 3u);
  EXPECT_EQ(c.seconds[0], 1e-3);
  EXPECT_DOUBLE_EQ(c.seconds[1], roofline_seconds(g, g.node(1), d));
  EXPECT_DOUBLE_EQ(c.seconds[2], roofline_seconds(g, g.node(2), d));
  EXPECT_DOUBLE_EQ(c.total_seconds(), c.seconds[0] + c.seconds[1] + c.seconds[2]);
  EXPECT_TRUE(any_contains(warnings, "'ghost'"));
  EXPECT_FALSE(any_contains(warnings, "'Relu_a'"));
  EXPECT_TRUE(any_contains(warnings, "2 of 3 nodes fell back to the roofline"));
  EXPECT_EQ(warnings.size(), 2u);
}

TEST(NodeCosts, AllMeasuredNeedsNoFallback) {
  Graph g = three_nodes();
  std::vector<std::string> warnings;
  NodeCosts c = make_node_costs(g, device_preset("h100-80gb"),
                                {{"Relu_a", 1e-5}, {"MatMul_b", 2e-5}, {"Relu_c", 0}},
                                "ort-profile p.json", warnings);
  EXPECT_EQ(c.measured, 3u);
  EXPECT_EQ(c.modelled, 0u);
  EXPECT_TRUE(warnings.empty());
  EXPECT_DOUBLE_EQ(c.total_seconds(), 3e-5);
}

TEST(NodeCosts, RooflineAsTheChosenModelIsNotAFallback) {
  Graph g = three_nodes();
  std::vector<std::string> warnings;
  NodeCosts c = make_node_costs(g, device_preset("v100-32gb"), {}, "roofline v100-32gb", warnings);
  EXPECT_EQ(c.measured, 0u);
  EXPECT_EQ(c.modelled, 3u);
  EXPECT_TRUE(warnings.empty());
  for (double s : c.seconds) EXPECT_GE(s, device_preset("v100-32gb").launch_seconds);
  // A costs file that times nothing is a fallback for every node.
  make_node_costs(g, device_preset("v100-32gb"), {}, "memplan.costs empty.json", warnings);
  EXPECT_TRUE(any_contains(warnings, "3 of 3 nodes fell back"));
}

TEST(NodeCosts, NegativeMeasuredTimeIsAnInputError) {
  Graph g = three_nodes();
  std::vector<std::string> warnings;
  EXPECT_THROW(make_node_costs(g, device_preset("a100-40gb"), {{"Relu_a", -1.0}},
                               "memplan.costs bad.json", warnings),
               InputError);
}

TEST(NodeCosts, EmptyGraphTotalsZero) {
  Graph g;
  std::vector<std::string> warnings;
  NodeCosts c = make_node_costs(g, device_preset("a100-40gb"), {}, "roofline a100-40gb", warnings);
  EXPECT_TRUE(c.seconds.empty());
  EXPECT_EQ(c.total_seconds(), 0);
}

}  // namespace
}  // namespace memplan::ir
