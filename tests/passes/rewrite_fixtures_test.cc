// Every committed training graph x {greedy, ilp, chen-sqrt, vdnn} at half
// its baseline peak: the rewrite is well formed for stock ONNX tooling, has
// one node per step that makes something, reads every copy it makes, and is
// the same bytes every time. (That it computes the same numbers is checked
// in ONNX Runtime by tests/integration.)
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/baseline_memory.h"
#include "ir/device_presets.h"
#include "ir/liveness.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"
#include "passes/model_check.h"
#include "passes/order_anchor.h"
#include "passes/rewrite_model.h"
#include "passes/swap_functions.h"
#include "planner/plan_search.h"
#include "planner/reachable_floor.h"

namespace memplan::passes {
namespace {

const char* const kFixtures[] = {"mlp",         "mlp_dropout", "resnet50",
                                 "bert_base",   "bert_large",  "gpt2_small",
                                 "gpt2_medium", "gpt2_large",  "gpt2_xl"};
const char* const kSolvers[] = {"greedy", "ilp", "chen-sqrt", "vdnn"};

struct Case {
  std::string fixture;
  std::string solver;
};

std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string s = info.param.fixture + "_" + info.param.solver;
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (const char* f : kFixtures)
    for (const char* s : kSolvers) out.push_back({f, s});
  return out;
}

// Small dims keep 36 plans quick; the structure does not depend on them.
ir::LoadedModel load_fixture(const std::string& name) {
  ir::LoadOptions o;
  o.dims = {{"batch", 2}};
  if (name.rfind("bert", 0) == 0 || name.rfind("gpt2", 0) == 0) o.dims["seq"] = 64;
  return ir::load_model(std::string(MEMPLAN_FIXTURES) + "/" + name + ".training.onnx", o);
}

class RewriteFixture : public testing::TestWithParam<Case> {};

TEST_P(RewriteFixture, HalfBudgetPlanRewritesCleanly) {
  const Case& c = GetParam();
  ir::LoadedModel m = load_fixture(c.fixture);
  std::vector<std::string> warnings;
  ir::NodeCosts costs =
      ir::make_node_costs(m.graph, ir::device_preset("a100-40gb"), {}, "roofline", warnings);
  planner::PlanRequest req;
  // Half the baseline peak, or the smallest peak memplan can reach where
  // that is more (at these small dims parameters and gradients dominate):
  // a budget no solver can meet would leave the ILP keeping everything.
  const std::uint64_t half = ir::baseline_memory(m.graph, ir::Liveness(m.graph)).peak_bytes / 2;
  req.budget_bytes =
      std::max(half, planner::smallest_reachable_peak(m.graph, costs, solvers::Evictions::both()));
  req.solver = c.solver;
  req.time_limit_seconds = 10;  // the ILP's; a time-limited incumbent is still a plan
  req.model_path = m.path;
  req.model_sha256 = m.sha256;
  planner::PlanOutcome outcome = planner::search_plan(m.graph, costs, req);
  RecordProperty("budget_share_of_baseline", std::to_string(req.budget_bytes / (2.0 * half)));
  RecordProperty("fits", outcome.fits ? "yes" : "no");
  // Over budget or not, the plan is valid; the rewrite is what is tested.
  const planner::Plan& plan = outcome.plan;

  std::size_t made = 0;
  for (const auto& step : plan.schedule)
    made += step.op == planner::StepOp::kSwapOut || step.op == planner::StepOp::kSwapIn ||
            step.op == planner::StepOp::kRecompute;

  RewriteOptions options;
  options.model_sha256 = m.sha256;
  auto start = std::chrono::steady_clock::now();
  onnx::ModelProto out = rewrite_model(m.proto, m.graph, plan, options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("rewrite_seconds", std::to_string(seconds));
  RecordProperty("nodes_before", std::to_string(m.proto.graph().node_size()));
  RecordProperty("nodes_after", std::to_string(out.graph().node_size()));

  // Besides the plan's steps, only anchors and the ops redone after a
  // reload of their input (swap_fold.h) were added; and every reload and
  // every recompute (one node of each remake) reads an anchored Reshape or
  // the output of the node before it.
  std::size_t anchor_nodes = 0, anchored = 0, refolds = 0;
  std::unordered_set<std::string> anchored_values;
  for (const auto& n : out.graph().node()) {
    refolds += n.doc_string().rfind(kRefoldDoc, 0) == 0;
    const bool anchored_reshape = n.doc_string().rfind(kAnchorDoc, 0) == 0;
    if (!anchored_reshape && n.doc_string().rfind(kAnchorTokenDoc, 0) != 0) continue;
    ++anchor_nodes;
    if (anchored_reshape) anchored_values.insert(n.output(0));
  }
  // A remake that reads an output of the latest computed node, or of a
  // remake since, is ordered by that input already and gets no anchor.
  std::unordered_set<std::string> recent;
  for (const auto& n : out.graph().node()) {
    const bool remake = n.doc_string().rfind(kRecomputeDoc, 0) == 0 || is_swap_node(n, kSwapInOp);
    if (n.doc_string().rfind("memplan:anchor", 0) == 0) continue;
    if (remake) {
      bool ordered = false;
      for (const auto& in : n.input())
        ordered |= anchored_values.count(in) != 0 || recent.count(in) != 0;
      anchored += ordered;
    } else {
      recent.clear();
    }
    for (const auto& o : n.output()) recent.insert(o);
  }
  EXPECT_EQ(static_cast<std::size_t>(out.graph().node_size()),
            m.graph.nodes().size() + made + anchor_nodes + refolds);
  std::size_t reloads_and_recomputes = 0;
  for (const auto& step : plan.schedule)
    reloads_and_recomputes +=
        step.op == planner::StepOp::kSwapIn || step.op == planner::StepOp::kRecompute;
  EXPECT_EQ(anchored, reloads_and_recomputes);

  // As well formed as the original: resnet50's MaxPoolGrad, which ORT puts
  // in the default domain, fails the checker before and after alike.
  EXPECT_EQ(checker_problem(out), checker_problem(m.proto));
  EXPECT_EQ(shape_inference_problem(out), "");

  // Every copy is read: each SwapIn output, and at least one output of each
  // recompute clone (the others are duplicates of resident tensors or of
  // outputs the plan frees at once, and the op requires them).
  std::unordered_set<std::string> reads;
  for (const auto& n : out.graph().node())
    for (const auto& in : n.input()) reads.insert(in);
  for (const auto& n : out.graph().node()) {
    if (is_swap_node(n, kSwapInOp) || is_swap_node(n, kSwapOutOp)) {
      EXPECT_EQ(reads.count(n.output(0)), 1u)
          << n.name() << " makes " << n.output(0) << ", read by no node";
    } else if (n.doc_string().rfind(kRecomputeDoc, 0) == 0) {
      bool any = false;
      for (const auto& o : n.output()) any |= reads.count(o) != 0;
      EXPECT_TRUE(any) << "no output of recompute clone " << n.name() << " is read";
    }
  }

  std::string first, second;
  ASSERT_TRUE(out.SerializeToString(&first));
  ASSERT_TRUE(rewrite_model(m.proto, m.graph, plan, options).SerializeToString(&second));
  EXPECT_TRUE(first == second) << "two rewrites of one plan differ";

  // The same plan is refused for another fixture's model.
  ir::LoadedModel other = load_fixture(c.fixture == "mlp" ? "mlp_dropout" : "mlp");
  EXPECT_ANY_THROW(rewrite_model(other.proto, other.graph, plan, {}));
}

INSTANTIATE_TEST_SUITE_P(AllFixtures, RewriteFixture, testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace memplan::passes
