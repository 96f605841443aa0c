#include "planner/dtr_evictor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "ir/baseline_memory.h"
#include "ir/device_presets.h"
#include "ir/liveness.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"
#include "planner/baseline_plan.h"
#include "planner/plan_validator.h"
#include "scheduler_test_util.h"
#include "support/model_builder.h"

namespace memplan::planner {
namespace {

constexpr std::uint64_t kUnlimited = std::numeric_limits<std::uint64_t>::max();

ir::Graph load(const test::ModelBuilder& b, const std::string& stem) {
  ir::LoadOptions o;
  return ir::load_model(b.write(stem), o).graph;
}

ir::NodeCosts unit_costs(const ir::Graph& g) {
  ir::NodeCosts c;
  c.seconds.assign(g.nodes().size(), 1.0);
  c.device.name = "test-gpu";
  c.device.memory_bytes = 1ull << 40;
  c.device.h2d_bytes_per_s = 1e12;
  c.device.d2h_bytes_per_s = 1e12;
  return c;
}

// The result as a whole plan (sched_test::whole_plan), solved by dtr.
Plan plan_of(const ir::Graph& g, const ir::NodeCosts& costs, const DtrResult& r,
             std::uint64_t budget) {
  Plan plan =
      sched_test::whole_plan(g, costs, r.schedule, r.decisions, r.fits, r.peak_bytes, budget);
  plan.solver = {"dtr", "heuristic", 0, std::nullopt, r.solve_seconds};
  return plan;
}

std::size_t count(const std::vector<Step>& schedule, StepOp op) {
  return static_cast<std::size_t>(
      std::count_if(schedule.begin(), schedule.end(), [op](const Step& s) { return s.op == op; }));
}

// Decisions say recompute exactly for tensors some recompute step makes, and
// never for outputs of random nodes; the counters match the schedule.
void expect_consistent(const ir::Graph& g, const ir::NodeCosts& costs, const DtrResult& r) {
  std::vector<bool> recomputed_node(g.nodes().size(), false);
  double seconds = 0;
  for (const Step& s : r.schedule) {
    if (s.op != StepOp::kRecompute) continue;
    recomputed_node[s.id] = true;
    seconds += costs.seconds[s.id];
    EXPECT_FALSE(g.node(s.id).is_random()) << g.node(s.id).name;
  }
  for (ir::TensorId t = 0; t < g.tensors().size(); ++t) {
    if (r.decisions[t] != Decision::kRecompute) continue;
    const ir::NodeId p = g.tensor(t).producer;
    ASSERT_NE(p, ir::kNoNode) << g.tensor(t).name;
    EXPECT_TRUE(recomputed_node[p]) << g.tensor(t).name;
  }
  EXPECT_EQ(r.recomputes, count(r.schedule, StepOp::kRecompute));
  EXPECT_DOUBLE_EQ(r.recompute_seconds, seconds);
}

// float32 [2,4] (32 B) everywhere; x is the graph input. A forward chain
// a1..a5 read back in reverse by a backward chain, so every activation
// lives until late. Baseline peak: x + a1..a5 + b5 = 224 B.
ir::Graph chain() {
  test::ModelBuilder b;
  b.input("x", {std::int64_t{2}, std::int64_t{4}});
  b.node("Relu", {"x"}, {"a1"}, "f1");
  b.node("Neg", {"a1"}, {"a2"}, "f2");
  b.node("Sigmoid", {"a2"}, {"a3"}, "f3");
  b.node("Tanh", {"a3"}, {"a4"}, "f4");
  b.node("Relu", {"a4"}, {"a5"}, "f5");
  b.node("Neg", {"a5"}, {"b5"}, "g5");
  b.node("Mul", {"b5", "a4"}, {"b4"}, "g4");
  b.node("Mul", {"b4", "a3"}, {"b3"}, "g3");
  b.node("Mul", {"b3", "a2"}, {"b2"}, "g2");
  b.node("Mul", {"b2", "a1"}, {"b1"}, "g1");
  b.output("b1");
  return load(b, "dtr_chain");
}

TEST(Dtr, UnlimitedBudgetIsTheBaseline) {
  const ir::Graph g = chain();
  const ir::NodeCosts costs = unit_costs(g);
  const DtrResult r = dtr_schedule(g, costs, kUnlimited);
  EXPECT_EQ(r.schedule, baseline_schedule(g));
  EXPECT_TRUE(r.fits);
  EXPECT_EQ(r.evictions, 0u);
  EXPECT_EQ(r.recomputes, 0u);
  EXPECT_EQ(r.peak_bytes, 224u);
  EXPECT_EQ(r.decisions, std::vector<Decision>(g.tensors().size(), Decision::kKeep));
}

TEST(Dtr, UnlimitedBudgetIsTheBaselineOnAFixture) {
  ir::LoadOptions lo;
  lo.dims = {{"batch", 2}, {"seq", 64}};
  const ir::Graph g =
      ir::load_model(std::string(MEMPLAN_FIXTURES) + "/gpt2_small.training.onnx", lo).graph;
  std::vector<std::string> warnings;
  const ir::NodeCosts costs =
      ir::make_node_costs(g, ir::device_preset("a100-40gb"), {}, "roofline a100-40gb", warnings);
  const DtrResult r = dtr_schedule(g, costs, kUnlimited);
  EXPECT_EQ(r.schedule, baseline_schedule(g));
  EXPECT_EQ(r.peak_bytes, ir::baseline_memory(g, ir::Liveness(g)).peak_bytes);
  EXPECT_EQ(r.evictions, 0u);
}

// shufflenet_tiny (PyTorch export) at half its peak: DTR's chains evict each
// other's inputs without end (the run grew past 24 GiB of schedule before
// it was stopped). It gives up evicting after its recompute cap, and the run
// it finishes is a valid schedule that says it does not fit.
TEST(Dtr, AThrashingRunGivesUpAndStaysValid) {
  ir::LoadOptions lo;
  lo.dims = {{"batch", 4}};
  const ir::Graph g =
      ir::load_model(std::string(MEMPLAN_FIXTURES) + "/torch/shufflenet_tiny.opset13.training.onnx",
                     lo)
          .graph;
  std::vector<std::string> warnings;
  const ir::NodeCosts costs =
      ir::make_node_costs(g, ir::device_preset("a100-40gb"), {}, "roofline a100-40gb", warnings);
  const std::uint64_t budget = ir::baseline_memory(g, ir::Liveness(g)).peak_bytes / 2;
  const DtrResult r = dtr_schedule(g, costs, budget);
  const std::size_t cap = DtrResult::kMaxRecomputesPerNode * g.nodes().size();
  EXPECT_TRUE(r.gave_up);
  EXPECT_NE(dtr_note(r).find("DTR thrashed"), std::string::npos);
  EXPECT_GE(r.recomputes, cap);
  EXPECT_LT(r.recomputes, 2 * cap);
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(count(r.schedule, StepOp::kCompute), g.nodes().size());
  const Plan plan = plan_of(g, costs, r, budget);
  Plan check = plan;
  check.budget_bytes = std::max(plan.budget_bytes, r.peak_bytes);
  const Validation v = validate(g, check);
  EXPECT_TRUE(v.valid) << v.step << ": " << v.message;
  EXPECT_EQ(v.peak_bytes, r.peak_bytes);
}

TEST(Dtr, TightBudgetEvictsAndRecomputes) {
  const ir::Graph g = chain();
  const ir::NodeCosts costs = unit_costs(g);
  const std::uint64_t budget = 160;  // x and four more 32-byte tensors
  const DtrResult r = dtr_schedule(g, costs, budget);
  EXPECT_TRUE(r.fits);
  EXPECT_LE(r.peak_bytes, budget);
  EXPECT_GT(r.evictions, 0u);
  EXPECT_GT(r.recomputes, 0u);
  EXPECT_EQ(count(r.schedule, StepOp::kCompute), g.nodes().size());
  const Plan plan = plan_of(g, costs, r, budget);
  const Validation v = validate(g, plan);
  EXPECT_TRUE(v.valid) << v.step << ": " << v.message;
  EXPECT_EQ(v.peak_bytes, r.peak_bytes);
  EXPECT_EQ(plan.predicted.compute_seconds, 10.0 + r.recompute_seconds);
  expect_consistent(g, costs, r);
  EXPECT_TRUE(std::any_of(r.decisions.begin(), r.decisions.end(),
                          [](Decision d) { return d == Decision::kRecompute; }));
  // The graph input and output are never freed.
  for (const Step& s : r.schedule)
    if (s.op == StepOp::kFree) {
      EXPECT_NE(g.tensor(s.id).name, "x");
      EXPECT_NE(g.tensor(s.id).name, "b1");
    }
}

// "compute n1", "free p": a schedule readable in test failures.
std::vector<std::string> text(const ir::Graph& g, const std::vector<Step>& schedule) {
  std::vector<std::string> out;
  for (const Step& s : schedule)
    out.push_back(std::string(to_string(s.op)) + " " +
                  (s.on_node() ? g.node(s.id).name : g.tensor(s.id).name));
  return out;
}

TEST(Dtr, EvictsTheLowestCostPerByteAndStaleness) {
  // Four 32-byte tensors made from x; the budget holds x and three of them.
  // When s is made, h = cost / (32 x staleness): p 1/(32x3), q 10/(32x2),
  // r 1/(32x1): p goes. At n5 (reads q, s) only r may go. Then n6 and n7
  // bring r and p back by recomputing their producers.
  test::ModelBuilder b;
  b.input("x", {std::int64_t{2}, std::int64_t{4}});
  b.node("Relu", {"x"}, {"p"}, "n1");
  b.node("Neg", {"x"}, {"q"}, "n2");
  b.node("Sigmoid", {"x"}, {"r"}, "n3");
  b.node("Tanh", {"x"}, {"s"}, "n4");
  b.node("Mul", {"q", "s"}, {"o1"}, "n5");
  b.node("Mul", {"o1", "r"}, {"o2"}, "n6");
  b.node("Mul", {"o2", "p"}, {"o3"}, "n7");
  b.output("o3");
  const ir::Graph g = load(b, "dtr_heuristic");
  ir::NodeCosts costs = unit_costs(g);
  costs.seconds[*g.find_node("n2")] = 10;
  const DtrResult r = dtr_schedule(g, costs, 128);
  EXPECT_EQ(text(g, r.schedule),
            (std::vector<std::string>{"compute n1", "compute n2", "compute n3", "free p",
                                      "compute n4", "free r", "compute n5", "free q", "free s",
                                      "recompute n3", "compute n6", "free r", "free o1",
                                      "recompute n1", "compute n7", "free p", "free o2"}));
  EXPECT_TRUE(r.fits);
  EXPECT_EQ(r.peak_bytes, 128u);
  EXPECT_EQ(r.evictions, 2u);
  EXPECT_EQ(r.recomputes, 2u);
  EXPECT_EQ(r.recompute_seconds, 2.0);
  EXPECT_EQ(r.decisions[*g.find_tensor("p")], Decision::kRecompute);
  EXPECT_EQ(r.decisions[*g.find_tensor("r")], Decision::kRecompute);
  EXPECT_EQ(r.decisions[*g.find_tensor("q")], Decision::kKeep);
  const Validation v = validate(g, plan_of(g, costs, r, 128));
  EXPECT_TRUE(v.valid) << v.step << ": " << v.message;
}

TEST(Dtr, LongRecomputeChainsUseNoDeepRecursion) {
  // A forward chain of 400 tensors read back in reverse under a budget of a
  // handful: the first backward node recomputes the whole chain from x.
  constexpr int kDepth = 400;
  test::ModelBuilder b;
  b.input("x", {std::int64_t{2}, std::int64_t{4}});
  for (int i = 1; i <= kDepth; ++i)
    b.node(i % 2 ? "Relu" : "Neg", {i == 1 ? "x" : "a" + std::to_string(i - 1)},
           {"a" + std::to_string(i)}, "f" + std::to_string(i));
  b.node("Neg", {"a" + std::to_string(kDepth)}, {"b" + std::to_string(kDepth)}, "g_top");
  for (int i = kDepth - 1; i >= 1; --i)
    b.node("Mul", {"b" + std::to_string(i + 1), "a" + std::to_string(i)}, {"b" + std::to_string(i)},
           "g" + std::to_string(i));
  b.output("b1");
  const ir::Graph g = load(b, "dtr_long_chain");
  const ir::NodeCosts costs = unit_costs(g);
  const std::uint64_t budget = 32 * 8;
  const DtrResult r = dtr_schedule(g, costs, budget);
  EXPECT_TRUE(r.fits);
  EXPECT_LE(r.peak_bytes, budget);
  EXPECT_GT(r.recomputes, static_cast<std::size_t>(kDepth));
  const Validation v = validate(g, plan_of(g, costs, r, budget));
  EXPECT_TRUE(v.valid) << v.step << ": " << v.message;
  EXPECT_EQ(v.peak_bytes, r.peak_bytes);
  expect_consistent(g, costs, r);
}

TEST(Dtr, BudgetBelowThePinnedTensorsDoesNotFit) {
  // Nothing can make room for x alone: every step runs, over budget.
  const ir::Graph g = chain();
  const ir::NodeCosts costs = unit_costs(g);
  const DtrResult r = dtr_schedule(g, costs, 16);
  EXPECT_FALSE(r.fits);
  EXPECT_GT(r.peak_bytes, 16u);
  const Validation v = validate(g, plan_of(g, costs, r, 16));
  EXPECT_TRUE(v.valid) << v.step << ": " << v.message;
  EXPECT_EQ(v.peak_bytes, r.peak_bytes);
  expect_consistent(g, costs, r);
}

// A Dropout in the forward chain: d cannot be recomputed, so it is never
// evicted; e (made from d, read after d's last reader) cannot be brought
// back once d is freed, so it must stay resident too.
ir::Graph chain_with_dropout() {
  test::ModelBuilder b;
  b.input("x", {std::int64_t{2}, std::int64_t{4}});
  b.node("Relu", {"x"}, {"a1"}, "f1");
  b.node("Dropout", {"a1"}, {"d"}, "drop");
  b.node("Sigmoid", {"d"}, {"e"}, "fe");
  b.node("Neg", {"d"}, {"a2"}, "f2");
  b.node("Tanh", {"a2"}, {"a3"}, "f3");
  b.node("Relu", {"a3"}, {"a4"}, "f4");
  b.node("Neg", {"a4"}, {"b4"}, "g4");
  b.node("Mul", {"b4", "a3"}, {"b3"}, "g3");
  b.node("Mul", {"b3", "a2"}, {"b2"}, "g2");
  b.node("Mul", {"b2", "d"}, {"bd"}, "gd");
  b.node("Mul", {"bd", "a1"}, {"b1"}, "g1");
  b.node("Mul", {"b1", "e"}, {"out"}, "ge");
  b.output("out");
  return load(b, "dtr_dropout");
}

TEST(Dtr, RandomOutputsAreNeverRecomputed) {
  const ir::Graph g = chain_with_dropout();
  const ir::NodeCosts costs = unit_costs(g);
  const ir::NodeId drop = *g.find_node("drop");
  ASSERT_TRUE(g.node(drop).is_random());
  const std::uint64_t baseline = ir::baseline_memory(g, ir::Liveness(g)).peak_bytes;
  bool evicted_somewhere = false;
  for (std::uint64_t budget = 32; budget <= baseline; budget += 32) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    const DtrResult r = dtr_schedule(g, costs, budget);
    evicted_somewhere = evicted_somewhere || r.evictions > 0;
    for (const Step& s : r.schedule) EXPECT_FALSE(s.op == StepOp::kRecompute && s.id == drop);
    EXPECT_EQ(r.decisions[*g.find_tensor("d")], Decision::kKeep);
    EXPECT_EQ(r.decisions[*g.find_tensor("e")], Decision::kKeep);
    const Validation v = validate(g, plan_of(g, costs, r, budget));
    EXPECT_TRUE(v.valid) << v.step << ": " << v.message;
    EXPECT_EQ(v.peak_bytes, r.peak_bytes);
    EXPECT_EQ(r.fits, r.peak_bytes <= budget);
    expect_consistent(g, costs, r);
  }
  EXPECT_TRUE(evicted_somewhere);
}

TEST(Dtr, EveryFixtureAtSeventyPercent) {
  const auto files = sched_test::fixture_files();
  ASSERT_FALSE(files.empty());
  for (const auto& file : files) {
    const sched_test::SmallFixture f = sched_test::load_small_fixture(file);
    const std::string& name = f.name;
    SCOPED_TRACE(name);
    const ir::Graph& g = f.graph;
    const ir::NodeCosts& costs = f.costs;
    const std::uint64_t baseline = f.baseline_peak;
    const std::uint64_t budget = baseline * 70 / 100;
    const DtrResult r = dtr_schedule(g, costs, budget);
    EXPECT_EQ(r.fits, r.peak_bytes <= budget);
    EXPECT_EQ(count(r.schedule, StepOp::kCompute), g.nodes().size());
    const Plan plan = plan_of(g, costs, r, budget);
    const Validation v = validate(g, plan);
    EXPECT_TRUE(v.valid) << v.step << ": " << v.message;
    EXPECT_EQ(v.peak_bytes, r.peak_bytes);
    expect_consistent(g, costs, r);
    // Loose for slow CI machines; it takes milliseconds.
    EXPECT_LT(r.solve_seconds, 2.0);
    RecordProperty(name + ".peak_over_baseline", std::to_string(static_cast<double>(r.peak_bytes) /
                                                                static_cast<double>(baseline)));
    RecordProperty(name + ".recompute_fraction",
                   std::to_string(r.recompute_seconds / costs.total_seconds()));
    RecordProperty(name + ".solve_seconds", std::to_string(r.solve_seconds));
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace memplan::planner
