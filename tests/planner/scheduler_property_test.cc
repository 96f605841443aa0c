// Properties of make_schedule on random training-like graphs and on every
// committed fixture: whatever the decisions and the budget, the schedule is
// valid under PLAN_FORMAT.md (planner::validate and an independent replay),
// its peak is the one the rules give, and the decisions it reports as
// applied are the ones it carried out.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "ir/baseline_memory.h"
#include "ir/device_presets.h"
#include "ir/liveness.h"
#include "ir/node_costs.h"
#include "planner/baseline_plan.h"
#include "planner/scheduler.h"
#include "planner/simulator.h"
#include "scheduler_test_util.h"

namespace memplan::planner {
namespace {

using Rng = std::mt19937;

std::size_t pick(Rng& rng, std::size_t n) {
  return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
}
bool chance(Rng& rng, double p) { return std::bernoulli_distribution(p)(rng); }

// A forward DAG (each node reads 1-3 recent values, sometimes a parameter;
// some nodes are Dropout, some make two outputs, some outputs are never
// read), a scalar loss, then a backward part that walks the forward nodes
// in reverse, each backward node reading the running gradient and some of
// the forward node's inputs and outputs, sometimes emitting a parameter
// gradient as a graph output. A few non-forward nodes are interleaved with
// the forward part, as shape computations are in real graphs.
ir::Graph random_training_graph(Rng& rng, std::size_t forward_nodes) {
  ir::Graph g;
  auto value = [&](const std::string& name) {
    const ir::TensorId t = g.add_tensor(name);
    g.mutable_tensors()[t].bytes = 4 * (1 + pick(rng, 256));
    return t;
  };
  auto input = [&](const std::string& name, ir::TensorClass cls) {
    const ir::TensorId t = value(name);
    g.mutable_tensors()[t].is_graph_input = true;
    g.mutable_tensors()[t].cls = cls;
    return t;
  };
  std::vector<ir::TensorId> params;
  for (int i = 0; i < 4; ++i)
    params.push_back(input("w" + std::to_string(i), ir::TensorClass::kParameter));
  std::vector<ir::TensorId> values{input("x", ir::TensorClass::kInput)};
  std::vector<ir::NodeId> forward;
  std::vector<ir::TensorId> side;  // made by interleaved non-forward nodes
  for (std::size_t i = 0; i < forward_nodes; ++i) {
    ir::Node n;
    n.name = "f" + std::to_string(i);
    n.op_type = chance(rng, 0.1) ? "Dropout" : "Add";
    n.is_forward = true;
    const std::size_t reads = 1 + pick(rng, 3);
    for (std::size_t k = 0; k < reads; ++k) {
      // Mostly recent values, like a network's layers.
      const std::size_t back = std::min(values.size() - 1, pick(rng, 4) * (1 + pick(rng, 3)));
      n.inputs.push_back(values[values.size() - 1 - back]);
    }
    if (chance(rng, 0.3)) n.inputs.push_back(params[pick(rng, params.size())]);
    const std::size_t outs = chance(rng, 0.2) ? 2 : 1;
    for (std::size_t k = 0; k < outs; ++k)
      n.outputs.push_back(value(n.name + "_o" + std::to_string(k)));
    forward.push_back(g.add_node(n));
    for (ir::TensorId out : g.nodes().back().outputs) values.push_back(out);
    if (chance(rng, 0.05)) {
      ir::Node s;
      s.name = "shape" + std::to_string(i);
      s.op_type = "Shape";
      s.inputs = {values[pick(rng, values.size())]};
      s.outputs = {value(s.name + "_o")};
      side.push_back(s.outputs[0]);
      g.add_node(s);
    }
  }
  ir::Node loss;
  loss.name = "loss";
  loss.op_type = "ReduceSum";
  loss.is_forward = true;
  loss.inputs = {values.back()};
  loss.outputs = {value("loss_value")};
  g.mutable_tensors()[loss.outputs[0]].is_graph_output = true;
  g.add_node(loss);

  ir::TensorId grad = loss.outputs[0];
  for (std::size_t i = forward.size(); i-- > 0;) {
    const ir::Node f = g.node(forward[i]);
    ir::Node b;
    b.name = "b" + std::to_string(i);
    b.op_type = "Mul";
    b.inputs.push_back(grad);
    for (ir::TensorId t : f.inputs)
      if (chance(rng, 0.5)) b.inputs.push_back(t);
    for (ir::TensorId t : f.outputs)
      if (chance(rng, 0.5)) b.inputs.push_back(t);
    if (!side.empty() && chance(rng, 0.1)) b.inputs.push_back(side[pick(rng, side.size())]);
    b.outputs.push_back(value(b.name + "_grad"));
    if (chance(rng, 0.25)) {
      b.outputs.push_back(value(b.name + "_wgrad"));
      g.mutable_tensors()[b.outputs.back()].is_graph_output = true;
    }
    grad = b.outputs[0];
    g.add_node(b);
  }
  g.mutable_tensors()[grad].is_graph_output = true;
  g.loss = loss.outputs[0];
  return g;
}

ir::NodeCosts random_costs(Rng& rng, const ir::Graph& g) {
  ir::NodeCosts c = sched_test::unit_costs(g);
  std::uniform_real_distribution<double> secs(0.01, 2.0);
  for (double& s : c.seconds) s = secs(rng);
  std::uniform_real_distribution<double> bw(50.0, 2000.0);
  c.device.h2d_bytes_per_s = bw(rng);
  c.device.d2h_bytes_per_s = bw(rng);
  return c;
}

std::vector<Decision> random_decisions(Rng& rng, const ir::Graph& g, double evict) {
  std::vector<Decision> d(g.tensors().size(), Decision::kKeep);
  for (Decision& x : d)
    if (chance(rng, evict)) x = chance(rng, 0.5) ? Decision::kSwap : Decision::kRecompute;
  return d;
}

// Everything a schedule must satisfy, whatever the inputs.
void check_properties(const ir::Graph& g, const ir::NodeCosts& costs,
                      const std::vector<Decision>& requested, const ScheduleOptions& o,
                      const ScheduleResult& r, const std::string& what) {
  SCOPED_TRACE(what);
  std::uint64_t replay_peak = 0;
  ASSERT_EQ(sched_test::replay(g, r.schedule, &replay_peak), "");
  EXPECT_EQ(replay_peak, r.peak_bytes);
  const Validation v = sched_test::validate_result(g, costs, r, o.budget_bytes);
  ASSERT_TRUE(v.valid) << v.message;
  EXPECT_EQ(v.peak_bytes, r.peak_bytes);

  EXPECT_EQ(r.fits, r.peak_bytes <= o.budget_bytes);
  if (!r.fits) {
    EXPECT_EQ(r.over_budget_bytes, r.peak_bytes - o.budget_bytes);
    EXPECT_FALSE(r.diagnosis.empty());
  } else {
    EXPECT_EQ(r.over_budget_bytes, 0u);
  }
  // worst_step is the first state at the peak.
  const SimResult sim = simulate(g, timing_plan(g, costs, r.schedule));
  std::int64_t first_peak = -1;
  std::uint64_t initial = 0;
  for (const ir::Tensor& t : g.tensors())
    if (t.initially_resident()) initial += t.bytes;
  if (initial != r.peak_bytes) {
    for (std::size_t i = 0; i < sim.steps.size(); ++i)
      if (sim.steps[i].bytes_in_use_after == r.peak_bytes) {
        first_peak = static_cast<std::int64_t>(i);
        break;
      }
  }
  EXPECT_EQ(r.worst_step, first_peak);

  // Applied decisions: the requested one or keep, never an impossible one,
  // and carried out as stated.
  ASSERT_EQ(r.applied.size(), g.tensors().size());
  std::vector<int> swap_outs(g.tensors().size()), swap_ins(g.tensors().size());
  std::vector<int> recomputes(g.nodes().size());
  for (const Step& s : r.schedule) {
    if (s.op == StepOp::kSwapOut) ++swap_outs[s.id];
    if (s.op == StepOp::kSwapIn) ++swap_ins[s.id];
    if (s.op == StepOp::kRecompute) ++recomputes[s.id];
  }
  int swapped_state = 0;
  for (ir::TensorId t = 0; t < g.tensors().size(); ++t) {
    const ir::Tensor& x = g.tensor(t);
    const Decision a = r.applied[t];
    EXPECT_TRUE(a == Decision::kKeep || a == requested[t]) << x.name;
    // Outputs stay; graph inputs and initializers may only be swapped
    // (training state), and end the iteration resident as they began it.
    if (x.is_graph_output) {
      EXPECT_EQ(a, Decision::kKeep) << x.name;
    } else if (x.initially_resident()) {
      EXPECT_NE(a, Decision::kRecompute) << x.name;
      if (a == Decision::kSwap) ++swapped_state;
    }
    if (a == Decision::kRecompute) {
      EXPECT_TRUE(g.node(x.producer).reproducible()) << x.name;
      EXPECT_GE(recomputes[x.producer], 1) << x.name;
    }
    EXPECT_EQ(swap_outs[t], a == Decision::kSwap ? 1 : 0) << x.name;
    if (a != Decision::kSwap) {
      EXPECT_EQ(swap_ins[t], 0) << x.name;
    }
  }
  if (swapped_state == 0) return;
  // Swapped state is resident again at the end (the next iteration's start).
  std::vector<char> resident(g.tensors().size(), 0);
  for (ir::TensorId t = 0; t < g.tensors().size(); ++t)
    resident[t] = g.tensor(t).initially_resident();
  for (const Step& s : r.schedule) {
    if (s.op == StepOp::kSwapIn) resident[s.id] = 1;
    if (s.op == StepOp::kFree) resident[s.id] = 0;
  }
  for (ir::TensorId t = 0; t < g.tensors().size(); ++t) {
    if (g.tensor(t).initially_resident()) {
      EXPECT_TRUE(resident[t]) << g.tensor(t).name;
    }
  }
}

TEST(SchedulerProperty, RandomGraphsAndDecisions) {
  for (unsigned seed = 0; seed < 300; ++seed) {
    Rng rng(seed);
    const ir::Graph g = random_training_graph(rng, 3 + pick(rng, 40));
    const ir::NodeCosts costs = random_costs(rng, g);
    const std::uint64_t baseline = ir::baseline_memory(g, ir::Liveness(g)).peak_bytes;
    const std::string what = "seed " + std::to_string(seed);

    // All keep is the baseline, whatever the budget.
    ScheduleOptions keep_options;
    keep_options.budget_bytes = baseline / 2;
    const std::vector<Decision> keep(g.tensors().size(), Decision::kKeep);
    const ScheduleResult base = make_schedule(g, costs, keep, keep_options);
    EXPECT_EQ(base.schedule, baseline_schedule(g)) << what;
    EXPECT_EQ(base.peak_bytes, baseline) << what;

    for (int round = 0; round < 4; ++round) {
      const auto decisions = random_decisions(rng, g, round == 3 ? 0.9 : 0.4);
      ScheduleOptions o;
      o.budget_bytes = baseline * (40 + pick(rng, 80)) / 100;
      if (round == 0) o.budget_bytes = UINT64_MAX;
      const std::size_t windows[] = {0, 1, 3, 64, SIZE_MAX};
      o.prefetch_window = windows[pick(rng, 5)];
      o.defer_swap_frees = chance(rng, 0.7);
      o.split_rounds = chance(rng, 0.5) ? 8 : 0;
      const ScheduleResult r = make_schedule(g, costs, decisions, o);
      check_properties(g, costs, decisions, o, r, what + " round " + std::to_string(round));
      if (HasFatalFailure()) return;
    }
  }
}

// x -> A0 -> ... -> A9 -> loss, then ten backward nodes that read no A_i,
// then b9 .. b0, each b_i reading A_i and the running gradient. 4-byte
// tensors except the 60-byte A_i.
ir::Graph ladder_graph() {
  ir::Graph g;
  auto value = [&](const std::string& name, std::uint64_t bytes) {
    const ir::TensorId t = g.add_tensor(name);
    g.mutable_tensors()[t].bytes = bytes;
    return t;
  };
  auto node = [&](const std::string& name, std::vector<ir::TensorId> in, ir::TensorId out,
                  bool forward) {
    ir::Node n;
    n.name = name;
    n.op_type = "Mul";
    n.inputs = std::move(in);
    n.outputs = {out};
    n.is_forward = forward;
    g.add_node(n);
  };
  ir::TensorId prev = value("x", 4);
  g.mutable_tensors()[prev].is_graph_input = true;
  std::vector<ir::TensorId> a;
  for (int i = 0; i < 10; ++i) {
    a.push_back(value("A" + std::to_string(i), 60));
    node("f" + std::to_string(i), {prev}, a.back(), true);
    prev = a.back();
  }
  ir::TensorId grad = value("loss", 4);
  node("loss", {prev}, grad, true);
  g.mutable_tensors()[grad].is_graph_output = true;
  for (int i = 0; i < 10; ++i) {  // backward work that reads no A_i
    const ir::TensorId next = value("h" + std::to_string(i), 4);
    node("n" + std::to_string(i), {grad}, next, false);
    grad = next;
  }
  for (int i = 9; i >= 0; --i) {
    const ir::TensorId next = value("g" + std::to_string(i), 4);
    node("b" + std::to_string(i), {grad, a[static_cast<std::size_t>(i)]}, next, false);
    grad = next;
  }
  g.mutable_tensors()[grad].is_graph_output = true;
  return g;
}

TEST(SchedulerProperty, QueuedCopiesArePrefetchedEarlyEnough) {
  // Nine 60-B reloads at 40 B/s take 1.5 s each, 13.5 s in all, for nine
  // readers 1 s apart: each copy must start well before its own two-step
  // window, early enough for the copies queued behind it, under the ten
  // seconds of backward work before the readers. As memory allows it, the
  // compute stream never waits.
  const ir::Graph g = ladder_graph();
  ir::NodeCosts costs = sched_test::unit_costs(g);
  costs.device.h2d_bytes_per_s = 40;
  std::vector<Decision> d(g.tensors().size(), Decision::kKeep);
  for (int i = 0; i < 9; ++i) d[*g.find_tensor("A" + std::to_string(i))] = Decision::kSwap;
  ScheduleOptions o;
  o.prefetch_window = 2;
  const ScheduleResult r = make_schedule(g, costs, d, o);
  check_properties(g, costs, d, o, r, "ladder");
  const SimResult sim = simulate(g, timing_plan(g, costs, r.schedule));
  EXPECT_EQ(sim.stall_seconds[0], 0.0);
  EXPECT_DOUBLE_EQ(sim.iteration_seconds, costs.total_seconds());
}

TEST(SchedulerProperty, LargeGraphSchedulesValidly) {
  // ~100k nodes (50k forward, their mirrors, a few shape nodes). Speed is a
  // benchmark figure (bench/), not asserted here: machines are noisy.
  Rng rng(7);
  const ir::Graph g = random_training_graph(rng, 50000);
  const ir::NodeCosts costs = random_costs(rng, g);
  const auto decisions = random_decisions(rng, g, 0.5);
  ScheduleOptions o;
  o.budget_bytes = ir::baseline_memory(g, ir::Liveness(g)).peak_bytes / 2;
  o.split_rounds = 0;
  const ScheduleResult r = make_schedule(g, costs, decisions, o);
  std::uint64_t peak = 0;
  EXPECT_EQ(sched_test::replay(g, r.schedule, &peak), "");
  EXPECT_EQ(peak, r.peak_bytes);
}

TEST(SchedulerProperty, EveryFixture) {
  const auto files = sched_test::fixture_files();
  ASSERT_GE(files.size(), 9u);
  for (const auto& file : files) {
    const sched_test::SmallFixture f = sched_test::load_small_fixture(file);
    const ir::Graph& g = f.graph;
    const ir::NodeCosts& costs = f.costs;
    const std::uint64_t baseline = f.baseline_peak;
    Rng rng(static_cast<unsigned>(g.nodes().size()));
    for (int round = 0; round < 2; ++round) {
      const auto decisions = random_decisions(rng, g, round == 0 ? 0.3 : 0.8);
      ScheduleOptions o;
      o.budget_bytes = baseline * (round == 0 ? 90 : 60) / 100;
      const ScheduleResult r = make_schedule(g, costs, decisions, o);
      check_properties(g, costs, decisions, o, r,
                       file.filename().string() + " round " + std::to_string(round));
      if (HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace memplan::planner
