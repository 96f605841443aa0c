#include "planner/planning_order.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ir/device_presets.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"
#include "planner/plan_search.h"
#include "planner/reachable_floor.h"
#include "solvers/problem_builder.h"
#include "support/model_builder.h"

namespace memplan::planner {
namespace {

ir::NodeCosts costs_for(const ir::Graph& g) {
  std::vector<std::string> w;
  return ir::make_node_costs(g, ir::device_preset("a100-40gb"), {}, "roofline", w);
}

// x -> a = Relu(x) -> b = Neg(a) -> loss = ReduceSum(b); backward: a Shape
// of `a` issued late, then a Mul reading `a`.
TEST(PlanningOrder, HoistsShapeReadsIntoTheForward) {
  test::ModelBuilder m;
  m.input("x", {std::int64_t{64}});
  m.node("Relu", {"x"}, {"a"}, "relu");
  m.node("Neg", {"a"}, {"b"}, "neg");
  test::set_int_attr(m.node("ReduceSum", {"b"}, {"loss"}, "sum"), "keepdims", 0);
  m.node("Neg", {"b"}, {"gb"}, "grad_start");
  m.node("Shape", {"a"}, {"sa"}, "shape_of_a");
  m.node("Reshape", {"gb", "sa"}, {"gb2"}, "reshape");
  m.node("Mul", {"gb2", "a"}, {"ga"}, "grad_a");
  m.output("loss").output("ga");
  ir::Graph g = ir::load_model(m.write("hoist"), {}).graph;
  PlanningGraph pg = planning_graph(g, costs_for(g));
  EXPECT_GE(pg.hoisted, 1u);
  // The Shape now runs right after Relu, counted as forward.
  EXPECT_EQ(pg.graph.node(1).name, "shape_of_a");
  EXPECT_TRUE(pg.graph.node(1).is_forward);
  EXPECT_EQ(g.node(pg.original[1]).name, "shape_of_a");
  // Same tensors, same ids.
  for (ir::TensorId t = 0; t < g.tensors().size(); ++t)
    EXPECT_EQ(pg.graph.tensor(t).name, g.tensor(t).name);
  // Costs follow their nodes.
  for (ir::NodeId i = 0; i < g.nodes().size(); ++i)
    EXPECT_EQ(pg.costs.seconds[i], costs_for(g).seconds[pg.original[i]]);
}

// ORT's weight-gradient product reads the activation through a Reshape
// that is ready from the forward on, and both sit at the end of the
// backward. The planning order runs the Reshape and the product as soon as
// the product's gradient input exists, so the activation's two backward
// readers are adjacent (it is not held, or remade, twice).
TEST(PlanningOrder, RunsAWeightGradientAndItsReshapedActivationWithItsGradient) {
  test::ModelBuilder m;
  m.input("x", {std::int64_t{64}});
  m.int64_constant("flat", {64});
  m.node("Relu", {"x"}, {"a"}, "relu");
  m.node("Neg", {"a"}, {"b"}, "neg");
  test::set_int_attr(m.node("ReduceSum", {"b"}, {"loss"}, "sum"), "keepdims", 0);
  m.node("Neg", {"b"}, {"gb"}, "grad_start");
  m.node("Mul", {"gb", "a"}, {"ga"}, "data_grad");
  m.node("Neg", {"ga"}, {"g2"}, "tail_1");
  m.node("Neg", {"g2"}, {"g3"}, "tail_2");
  m.node("Reshape", {"gb", "flat"}, {"gb_2d"}, "dy_reshape");
  m.node("Reshape", {"a", "flat"}, {"a_2d"}, "a_reshape");
  m.node("Mul", {"a_2d", "gb_2d"}, {"dw"}, "weight_grad");
  m.output("loss").output("g3").output("dw");
  ir::Graph g = ir::load_model(m.write("weight_grad"), {}).graph;
  PlanningGraph pg = planning_graph(g, costs_for(g));
  std::map<std::string, ir::NodeId> at;
  for (ir::NodeId i = 0; i < pg.graph.nodes().size(); ++i) at[pg.graph.node(i).name] = i;
  EXPECT_EQ(at["dy_reshape"], at["grad_start"] + 1);
  EXPECT_EQ(at["a_reshape"], at["grad_start"] + 2);
  EXPECT_EQ(at["weight_grad"], at["grad_start"] + 3);
  EXPECT_LT(at["weight_grad"], at["data_grad"]);
  EXPECT_GE(pg.hoisted, 3u);
}

TEST(PlanningOrder, IsATopologicalPermutationOnEveryFixture) {
  for (const char* f : {"resnet50", "bert_base", "gpt2_small"}) {
    ir::LoadOptions o;
    o.dims = {{"batch", 2}, {"seq", 64}};
    ir::Graph g =
        ir::load_model(std::string(MEMPLAN_FIXTURES) + "/" + f + ".training.onnx", o).graph;
    PlanningGraph pg = planning_graph(g, costs_for(g));
    std::vector<bool> seen(g.nodes().size(), false);
    for (ir::NodeId i = 0; i < pg.original.size(); ++i) {
      ASSERT_FALSE(seen[pg.original[i]]) << f;
      seen[pg.original[i]] = true;
      for (ir::TensorId in : pg.graph.node(i).inputs) {
        ir::NodeId p = pg.graph.tensor(in).producer;
        EXPECT_TRUE(p == ir::kNoNode || p < i) << f << ": " << pg.graph.node(i).name;
      }
    }
  }
}

TEST(PlanningOrder, LowersTheReachablePeakOnGpt2) {
  ir::LoadOptions o;
  o.dims = {{"batch", 8}, {"seq", 512}};
  ir::Graph g =
      ir::load_model(std::string(MEMPLAN_FIXTURES) + "/gpt2_small.training.onnx", o).graph;
  ir::NodeCosts c = costs_for(g);
  // Every swappable activation swapped (the rest kept), scheduled in the
  // graph's own order.
  solvers::Problem p = solvers::build_problem(g, c, 0, {});
  std::vector<Decision> all(p.candidates.size());
  for (std::size_t i = 0; i < all.size(); ++i)
    all[i] = p.candidates[i].can_swap ? Decision::kSwap : Decision::kKeep;
  ScheduleOptions so;
  so.budget_bytes = 0;
  const std::uint64_t graph_order =
      make_schedule(g, c, decisions_by_tensor(g, p, all), so).peak_bytes;
  // Measured: 4.66 GiB in the graph's order, 2.63 GiB in the planning order.
  const std::uint64_t planning_order = smallest_reachable_peak(g, c, solvers::Evictions::both());
  EXPECT_LT(planning_order, graph_order * 7 / 10);
}

}  // namespace
}  // namespace memplan::planner
