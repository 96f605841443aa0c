// Shared chain steps (problem.h): a forward intermediate that the recompute
// chains of several candidates run is remade once by the scheduler, so the
// model pays it once however many of those candidates are recomputed.
#include <gtest/gtest.h>

#include <string>

#include "built_graph.h"
#include "planner/scheduler.h"
#include "solvers/greedy_solver.h"
#include "solvers/model_eval.h"
#include "solvers/problem_builder.h"

namespace memplan::solvers {
namespace {

// h = Exp(x) is read by two forward nodes only, a = Sigmoid(h) and
// b = Tanh(h); the backward reads a and b, not h. Recomputing a or b runs
// Exp again.
using Fork = test::BuiltGraph;
using test::candidate_of;

Fork fork_graph() {
  test::ModelBuilder b;
  b.input("x", {std::int64_t{1 << 16}});
  b.node("Exp", {"x"}, {"h"}, "f_exp");
  b.node("Sigmoid", {"h"}, {"a"}, "f_a");
  b.node("Tanh", {"h"}, {"b"}, "f_b");
  b.node("Add", {"a", "b"}, {"s"}, "f_add");
  test::set_int_attr(b.node("ReduceSum", {"s"}, {"loss"}, "loss_node"), "keepdims", 0);
  b.node("Neg", {"s"}, {"g"}, "b_start");
  b.node("Mul", {"g", "a"}, {"ga"}, "b_a");
  b.node("Mul", {"ga", "b"}, {"gb"}, "b_b");
  b.output("loss").output("gb");
  return test::load_built(b, "shared_fork");
}

double seconds_of(const Fork& f, const std::string& node) {
  for (ir::NodeId n = 0; n < f.graph.nodes().size(); ++n)
    if (f.graph.node(n).name == node) return f.costs.seconds[n];
  return -1;
}

TEST(SharedChainSteps, TheIntermediateBothChainsRunIsOneSharedStep) {
  const Fork f = fork_graph();
  ProblemOptions options;
  options.evictions = Evictions::recompute_only();
  const Problem p = build_problem(f.graph, f.costs, 0, options);
  const std::size_t a = candidate_of(p, f.graph, "a"), b = candidate_of(p, f.graph, "b");
  ASSERT_LT(a, p.candidates.size());
  ASSERT_LT(b, p.candidates.size());
  const double exp = seconds_of(f, "f_exp");
  ASSERT_GT(exp, 0);
  // Each chain alone: its own node and Exp.
  EXPECT_DOUBLE_EQ(p.candidates[a].recompute_seconds, seconds_of(f, "f_a") + exp);
  EXPECT_DOUBLE_EQ(p.candidates[b].recompute_seconds, seconds_of(f, "f_b") + exp);
  ASSERT_EQ(p.shared_steps.size(), 1u);
  EXPECT_DOUBLE_EQ(p.shared_steps[0].seconds, exp);
  EXPECT_EQ(p.shared_steps[0].readers, (std::vector<std::size_t>{std::min(a, b), std::max(a, b)}));

  std::vector<Decision> choice(p.candidates.size(), Decision::kKeep);
  choice[a] = Decision::kRecompute;
  const double only_a = evaluate(p, choice).overhead_seconds;
  EXPECT_DOUBLE_EQ(only_a, p.candidates[a].recompute_seconds);
  choice[b] = Decision::kRecompute;
  EXPECT_DOUBLE_EQ(shared_step_saving(p, choice), exp);
  EXPECT_NEAR(evaluate(p, choice).overhead_seconds,
              seconds_of(f, "f_a") + seconds_of(f, "f_b") + exp, 1e-15);
}

// What the model charges is what the scheduler runs: Exp once for both.
TEST(SharedChainSteps, TheScheduleRunsTheSharedStepOnce) {
  const Fork f = fork_graph();
  ProblemOptions options;
  options.evictions = Evictions::recompute_only();
  const Problem p = build_problem(f.graph, f.costs, 0, options);
  std::vector<Decision> choice(p.candidates.size(), Decision::kRecompute);
  std::vector<planner::Decision> by_tensor(f.graph.tensors().size(), Decision::kKeep);
  for (std::size_t i = 0; i < p.candidates.size(); ++i)
    by_tensor[p.candidates[i].tensor] = choice[i];
  const planner::ScheduleResult r = planner::make_schedule(f.graph, f.costs, by_tensor, {});
  double recomputed = 0;
  int exp_runs = 0;
  for (const planner::Step& s : r.schedule) {
    if (s.op != planner::StepOp::kRecompute) continue;
    recomputed += f.costs.seconds[s.id];
    exp_runs += f.graph.node(s.id).name == "f_exp" ? 1 : 0;
  }
  EXPECT_EQ(exp_runs, 1);
  EXPECT_NEAR(recomputed, evaluate(p, choice).overhead_seconds, 1e-15);
}

// The greedy's running objective keeps the saving in step with its moves.
TEST(SharedChainSteps, GreedyObjectiveIsTheModels) {
  const Fork f = fork_graph();
  ProblemOptions options;
  options.evictions = Evictions::recompute_only();
  Problem p = build_problem(f.graph, f.costs, 0, options);
  p.budget_bytes = p.baseline_peak() - p.candidates[0].bytes - 1;  // needs both out somewhere
  const Solution s = GreedySolver().solve(p, {});
  EXPECT_NEAR(s.objective_seconds, evaluate(p, s.choice).overhead_seconds, 1e-15);
}

}  // namespace
}  // namespace memplan::solvers
