// Nested remakes on a uniform chain: every state but the input is
// recomputed, and the budget leaves far fewer slots than states, so the
// schedule must hold some remade states as temporary checkpoints, free
// them and remake them again (docs/scheduling.md, rule 7).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>

#include "planner/chain_reversal.h"
#include "planner/plan_search.h"
#include "scheduler_test_util.h"
#include "uniform_chain.h"

namespace memplan::planner {
namespace {

using test_util::griewank_p;
using test_util::uniform_chain;

constexpr std::int64_t kFloats = 1 << 14;

std::vector<Decision> recompute_all(const ir::Graph& g, int l) {
  std::vector<Decision> d(g.tensors().size(), Decision::kKeep);
  for (int i = 1; i < l; ++i) d[*g.find_tensor("x" + std::to_string(i))] = Decision::kRecompute;
  return d;
}

std::map<std::string, int> remakes_by_node(const ir::Graph& g, const ScheduleResult& r) {
  std::map<std::string, int> n;
  for (const Step& s : r.schedule)
    if (s.op == StepOp::kRecompute) ++n[g.node(s.id).name];
  return n;
}

// Budget: x0, x_l (read by the backward's first node), two gradients in
// flight, the loss, and `slots` states.
std::uint64_t budget_for(std::uint64_t state_bytes, int slots) {
  return (4 + static_cast<std::uint64_t>(slots)) * state_bytes + 4;
}

struct Case {
  int l;
  int slots;
};

class NestedRemakes : public ::testing::TestWithParam<Case> {};

TEST_P(NestedRemakes, FitWhereRerunsDoNotAndStayNearTheExactReversal) {
  const auto [l, slots] = GetParam();
  auto c = uniform_chain(l, kFloats);
  const std::uint64_t budget = budget_for(c.state_bytes, slots);
  ScheduleOptions o;
  o.budget_bytes = budget;
  o.nest_remakes = false;
  const ScheduleResult plain = make_schedule(c.graph, c.costs, recompute_all(c.graph, l), o);
  o.nest_remakes = true;
  const ScheduleResult nested = make_schedule(c.graph, c.costs, recompute_all(c.graph, l), o);
  EXPECT_FALSE(plain.fits) << "l=" << l << " slots=" << slots;
  ASSERT_TRUE(nested.fits) << nested.diagnosis;
  EXPECT_GT(nested.unnested_over_bytes, 0u);
  sched_test::expect_valid(c.graph, c.costs, nested, budget);

  const auto remakes = remakes_by_node(c.graph, nested);
  int total = 0, again = 0;
  for (const auto& [node, n] : remakes) {
    total += n;
    again += n >= 2 ? 1 : 0;
  }
  EXPECT_GT(again, 0) << "no state was remade twice";
  // The backward frees x_l after its first node, so the run has slots + 1
  // slots: never below the exact reversal for them (that would mean more
  // states live than the budget holds) nor revolve's bound, and within 10 %
  // of that reversal.
  const detail::ChainReversal table(static_cast<std::size_t>(l), static_cast<std::size_t>(l));
  const auto exact = static_cast<std::int64_t>(
      table.remakes(static_cast<std::size_t>(l - 1), static_cast<std::size_t>(slots + 1)));
  EXPECT_GE(total, griewank_p(l, slots + 1) - l);
  EXPECT_GE(total, exact);
  EXPECT_LE(static_cast<double>(total), 1.1 * static_cast<double>(exact))
      << "l=" << l << " slots=" << slots;
  RecordProperty("recomputes", total);
}

INSTANTIATE_TEST_SUITE_P(Chains, NestedRemakes,
                         ::testing::Values(Case{16, 4}, Case{24, 5}, Case{32, 6}, Case{32, 4},
                                           Case{48, 8}));

// One state freed and remade again between its two remakes: the plan's
// steps show recompute, free, recompute of the same node.
TEST(NestedRemakes, AStateIsFreedBetweenTwoRemakes) {
  auto c = uniform_chain(16, kFloats);
  ScheduleOptions o;
  o.budget_bytes = budget_for(c.state_bytes, 4);
  const ScheduleResult r = make_schedule(c.graph, c.costs, recompute_all(c.graph, 16), o);
  ASSERT_TRUE(r.fits) << r.diagnosis;
  int witnessed = 0;
  for (int i = 1; i < 16; ++i) {
    const ir::TensorId x = *c.graph.find_tensor("x" + std::to_string(i));
    const ir::NodeId f = c.graph.tensor(x).producer;
    int state = 0;  // 0: before, 1: remade, 2: then freed, 3: remade again
    for (const Step& s : r.schedule) {
      if (s.op == StepOp::kRecompute && s.id == f) state = state == 2 ? 3 : std::max(state, 1);
      if (s.op == StepOp::kFree && s.id == x && state == 1) state = 2;
    }
    witnessed += state == 3 ? 1 : 0;
  }
  EXPECT_GT(witnessed, 0);
}

// The exact recompute-only optimum of the whole chain under our memory
// model: the forward keeps checkpoints for free, each run between two is
// reversed with the slots the checkpoints after it leave (chain_reversal.h).
std::uint64_t chain_optimum(const detail::ChainReversal& table, std::size_t n, std::size_t c,
                            std::map<std::pair<std::size_t, std::size_t>, std::uint64_t>& memo) {
  if (n == 0 || c >= n) return 0;
  if (c == 0) return detail::ChainReversal::kNever;
  const auto key = std::make_pair(n, c);
  if (auto it = memo.find(key); it != memo.end()) return it->second;
  std::uint64_t best = detail::ChainReversal::kNever;
  for (std::size_t m = 1; m <= n; ++m) {
    const std::uint64_t rest = chain_optimum(table, n - m, c - 1, memo);
    const std::uint64_t run = table.remakes(m - 1, c);
    if (rest != detail::ChainReversal::kNever && run != detail::ChainReversal::kNever)
      best = std::min(best, rest + run);
  }
  return memo[key] = best;
}

// memplan's plan on a 32-step chain at budgets of 12 states down to the
// floor (5: x0, two gradients, two states): each fits (without nested
// remakes none below 16 states did), never beats the exact optimum and
// stays within 25 % of it (the forward's checkpoints are not the
// optimum's: 50 against 45 remakes at 7 states, 86 against 71 at 6; before
// the checkpoint-spacing search, 59 and 86; issue 15).
TEST(NestedRemakes, PlansFitOnAChainDownToTheFloor) {
  const int l = 32;
  auto c = uniform_chain(l, kFloats);
  const detail::ChainReversal table(l, l);
  std::map<std::pair<std::size_t, std::size_t>, std::uint64_t> memo;
  int checked = 0;
  for (int states : {12, 10, 8, 7, 6, 5}) {
    PlanRequest req;
    req.budget_bytes = static_cast<std::uint64_t>(states) * c.state_bytes + 64;
    req.evictions = solvers::Evictions::recompute_only();
    req.time_limit_seconds = 5;
    const PlanOutcome out = search_plan(c.graph, c.costs, req);
    ASSERT_TRUE(out.fits) << states << " states: " << out.note;
    std::int64_t recomputes = 0;
    for (const Step& st : out.plan.schedule) recomputes += st.op == StepOp::kRecompute ? 1 : 0;
    const auto exact = static_cast<std::int64_t>(
        chain_optimum(table, l - 1, static_cast<std::size_t>(states - 3), memo));
    EXPECT_GE(recomputes, exact) << states << " states";
    EXPECT_LE(static_cast<double>(recomputes), 1.25 * static_cast<double>(exact))
        << states << " states";
    RecordProperty("recomputes_" + std::to_string(states), static_cast<int>(recomputes));
    RecordProperty("optimum_" + std::to_string(states), static_cast<int>(exact));
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

}  // namespace
}  // namespace memplan::planner
