// `--solver checkmate`: the MILP's runs as a plan that validates, fits,
// costs the optimum it claims, remakes a tensor more than once where that
// pays, and is what `auto` hands out on small graphs where it is faster.
#include "planner/checkmate_plan.h"

#include <gtest/gtest.h>

#include <map>

#include "planner/baseline_plan.h"
#include "planner/plan_search.h"
#include "planner/plan_validator.h"
#include "solvers/remat_milp.h"
#include "support/model_builder.h"
#include "support/small_dags.h"
#include "uniform_chain.h"

namespace memplan::planner {
namespace {

constexpr double kNoTimeLimit = 3600;

double recompute_seconds(const Plan& plan, const ir::NodeCosts& costs) {
  double s = 0;
  for (const Step& st : plan.schedule)
    if (st.op == StepOp::kRecompute) s += costs.seconds[st.id];
  return s;
}

PlanOutcome plan_with(const ir::Graph& g, const ir::NodeCosts& costs, std::uint64_t budget,
                      const std::string& solver) {
  PlanRequest req;
  req.budget_bytes = budget;
  req.solver = solver;
  req.evictions = solvers::Evictions::recompute_only();
  // No limit Cbc could reach: what these tests check must not depend on
  // how fast the machine is (CI's, under ASan, is many times slower).
  req.time_limit_seconds = kNoTimeLimit;
  return search_plan(g, costs, req);
}

// The optimum of Checkmate's MILP on the graph as given, less its compute.
std::optional<double> optimum(const ir::Graph& g, const ir::NodeCosts& costs,
                              std::uint64_t budget) {
  const solvers::RematProblem p = solvers::remat_problem(g, costs, budget);
  solvers::RematMilpOptions o;
  o.time_limit_seconds = kNoTimeLimit;
  const solvers::RematSchedule s = solve_remat_milp(p, o);
  if (s.status != solvers::SolveStatus::kOptimal) return std::nullopt;
  return s.seconds - p.compute_seconds();
}

TEST(CheckmatePlan, OnAUniformChainItCostsTheOptimumAndTheHeuristicMore) {
  const test_util::Chain c = test_util::uniform_chain(10, 1 << 12);
  const std::uint64_t base = solvers::remat_problem(c.graph, c.costs, UINT64_MAX).base_bytes;
  int checked = 0, beat_greedy = 0;
  for (std::uint64_t states = 8; states >= 5; --states) {
    const std::uint64_t budget = base + states * c.state_bytes + 64;
    const auto best = optimum(c.graph, c.costs, budget);
    ASSERT_TRUE(best.has_value()) << states;
    const PlanOutcome out = plan_with(c.graph, c.costs, budget, "checkmate");
    ASSERT_TRUE(out.fits) << states << ": " << out.note;
    const Validation v = validate(c.graph, out.plan);
    EXPECT_TRUE(v.valid) << states << ": " << v.message;
    EXPECT_EQ(out.plan.solver.status, "optimal") << states;
    EXPECT_NEAR(recompute_seconds(out.plan, c.costs), *best, 1e-12) << states;
    // No swaps: the simulated overhead is the recompute time, the objective.
    const auto& pr = out.plan.predicted;
    EXPECT_NEAR(pr.iteration_seconds - pr.baseline_iteration_seconds, *best, 1e-12) << states;
    EXPECT_NEAR(out.plan.solver.objective_seconds, *best, 1e-12) << states;
    const PlanOutcome greedy = plan_with(c.graph, c.costs, budget, "recompute-greedy");
    if (!greedy.fits || recompute_seconds(greedy.plan, c.costs) > *best + 1e-12) ++beat_greedy;
    ++checked;
  }
  EXPECT_EQ(checked, 4);
  EXPECT_GE(beat_greedy, 1);  // 5 states: 30 against 40 us (docs/model.md)
}

TEST(CheckmatePlan, AutoFitsWhereTheHeuristicCannotOnASmallGraph) {
  // A 6-step chain at 3 states: no heuristic plan fits; the MILP proves
  // its optimum at Cbc's root node, inside auto's node limit on any
  // machine (a slow one once ran out of the 2 s auto used to allow).
  const test_util::Chain c = test_util::uniform_chain(6, 1 << 12);
  const std::uint64_t base = solvers::remat_problem(c.graph, c.costs, UINT64_MAX).base_bytes;
  const std::uint64_t budget = base + 3 * c.state_bytes + 64;
  EXPECT_FALSE(plan_with(c.graph, c.costs, budget, "recompute-greedy").fits);
  const PlanOutcome out = plan_with(c.graph, c.costs, budget, "auto");
  ASSERT_TRUE(out.fits) << out.note;
  EXPECT_EQ(out.plan.solver.name, "auto/checkmate");
  EXPECT_TRUE(validate(c.graph, out.plan).valid);
  EXPECT_NEAR(recompute_seconds(out.plan, c.costs), *optimum(c.graph, c.costs, budget), 1e-12);
}

TEST(CheckmatePlan, RemakesATensorTwiceAndFreesItInBetween) {
  const test_util::Chain c = test_util::uniform_chain(10, 1 << 12);
  const std::uint64_t base = solvers::remat_problem(c.graph, c.costs, UINT64_MAX).base_bytes;
  const PlanOutcome out = plan_with(c.graph, c.costs, base + 4 * c.state_bytes + 64, "checkmate");
  ASSERT_TRUE(out.fits) << out.note;
  EXPECT_TRUE(validate(c.graph, out.plan).valid);
  // Per tensor: recompute steps that made it, and frees between them.
  std::map<ir::TensorId, int> remade, freed_between;
  for (const Step& st : out.plan.schedule) {
    if (st.op == StepOp::kFree && remade.count(st.id) > 0) ++freed_between[st.id];
    if (st.op != StepOp::kRecompute) continue;
    for (ir::TensorId t : c.graph.nodes()[st.id].outputs) ++remade[t];
  }
  int twice = 0;
  for (const auto& [t, n] : remade)
    if (n >= 2 && freed_between[t] >= 1) {
      ++twice;
      EXPECT_EQ(out.plan.decisions[t], Decision::kRecompute) << c.graph.tensor(t).name;
    }
  EXPECT_GE(twice, 1);
}

TEST(CheckmatePlan, NeverRunsARandomNodeTwice) {
  test::ModelBuilder b;
  const std::int64_t n = 1024;
  b.input("x", {n});
  b.node("Sigmoid", {"x"}, {"a"}, "fa");
  b.node("Dropout", {"a"}, {"d"}, "drop");
  b.node("Tanh", {"d"}, {"e"}, "fe");
  b.node("Sigmoid", {"e"}, {"f"}, "ff");
  test::set_int_attr(b.node("ReduceSum", {"f"}, {"loss"}, "loss_node"), "keepdims", 0);
  b.node("Neg", {"f"}, {"gf"}, "gf_node");
  b.node("Mul", {"gf", "e"}, {"ge"}, "ge_node");
  b.node("Mul", {"ge", "d"}, {"gd"}, "gd_node");
  b.node("Mul", {"gd", "a"}, {"ga"}, "ga_node");
  b.output("loss").output("ga");
  const ir::Graph g = ir::load_model(b.write("dropout_chain"), {}).graph;
  std::vector<std::string> warnings;
  const ir::NodeCosts costs =
      ir::make_node_costs(g, ir::device_preset("a100-40gb"), {}, "roofline", warnings);
  const std::uint64_t top = solvers::remat_problem(g, costs, UINT64_MAX).base_bytes + 8 * n * 4;
  int planned = 0;
  for (std::uint64_t budget = top; budget > top / 3; budget -= n * 4) {
    const PlanOutcome out = plan_with(g, costs, budget, "checkmate");
    if (!out.fits) continue;
    ++planned;
    EXPECT_TRUE(validate(g, out.plan).valid) << budget;
    for (const Step& st : out.plan.schedule)
      EXPECT_FALSE(st.op == StepOp::kRecompute && g.nodes()[st.id].op_type == "Dropout");
  }
  EXPECT_GE(planned, 3);
}

TEST(CheckmatePlan, PastItsSizeHandsOutNoPlanAndSaysWhy) {
  const test_util::Chain c = test_util::uniform_chain(80, 16);  // 162 nodes
  ASSERT_GT(c.graph.nodes().size(), kCheckmateMaxNodes);
  const PlanOutcome out = plan_with(c.graph, c.costs, 1, "checkmate");
  EXPECT_FALSE(out.fits);
  EXPECT_NE(out.note.find("more than the 64"), std::string::npos) << out.note;
  EXPECT_TRUE(out.plan.schedule == baseline_schedule(c.graph));
}

TEST(CheckmatePlan, ScheduleOfRunsFreesEachTensorAfterItsLastReadBeforeItsRemake) {
  const test_util::Chain c = test_util::uniform_chain(2, 16);
  // f1 f2 loss b_start b2 b1: x1 = f1's output is read by f2 and b2 (Mul g2·x1).
  const auto& nodes = c.graph.nodes();
  std::vector<std::size_t> order(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) order[i] = i;
  const std::vector<Step> plain = schedule_of_runs(c.graph, order);
  int computes = 0, recomputes = 0;
  for (const Step& st : plain) {
    computes += st.op == StepOp::kCompute;
    recomputes += st.op == StepOp::kRecompute;
  }
  EXPECT_EQ(computes, static_cast<int>(nodes.size()));
  EXPECT_EQ(recomputes, 0);
  // With f1 run again before b2, x1 is freed after f2 and remade.
  std::vector<std::size_t> again;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == "b2") again.push_back(0);
    again.push_back(i);
  }
  ASSERT_EQ(nodes[0].name, "f1");
  const std::vector<Step> steps = schedule_of_runs(c.graph, again);
  const ir::TensorId x1 = nodes[0].outputs[0];
  std::vector<StepOp> of_x1;
  for (const Step& st : steps)
    if ((st.on_node() && st.id == 0) || (st.op == StepOp::kFree && st.id == x1))
      of_x1.push_back(st.op);
  EXPECT_EQ(of_x1, (std::vector<StepOp>{StepOp::kCompute, StepOp::kFree, StepOp::kRecompute,
                                        StepOp::kFree}));
}

}  // namespace
}  // namespace memplan::planner
