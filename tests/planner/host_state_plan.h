#pragma once
// A graph with training state written in place (an accumulation buffer that
// InPlaceAccumulatorV2 updates) and plans that start that state on the host
// (PLAN_FORMAT's `initial_host`). Shared by the planner, runtime and passes
// tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "ir/onnx_loader.h"
#include "planner/plan.h"
#include "planner/plan_assembly.h"
#include "support/model_builder.h"
#include "tiny_plan.h"

namespace memplan::planner::test_util {

// float32. x, w [4,4] and buf [4,4] (64 B each) are graph inputs.
//   mm:  a = MatMul(x, w)                     64 B
//   acc: flag = InPlaceAccumulatorV2(buf, a)   1 B (bool); writes buf in place
//   sum: loss = ReduceSum(a)                   4 B
// Graph outputs: loss and flag.
inline std::string write_host_state_model() {
  test::ModelBuilder b;
  b.input("x", {std::int64_t{4}, std::int64_t{4}});
  b.input("w", {std::int64_t{4}, std::int64_t{4}});
  b.input("buf", {std::int64_t{4}, std::int64_t{4}});
  b.node("MatMul", {"x", "w"}, {"a"}, "mm");
  b.node("InPlaceAccumulatorV2", {"buf", "a"}, {"flag"}, "acc", "com.microsoft");
  test::set_int_attr(b.node("ReduceSum", {"a"}, {"loss"}, "sum"), "keepdims", 0);
  b.output("loss").output("flag");
  return b.write("host_state");
}

inline ir::Graph host_state_graph() {
  ir::LoadOptions o;
  return ir::load_model(write_host_state_model(), o).graph;
}

// buf brought in for acc, copied out after acc wrote it and freed: the
// state ends as it began, on the host only.
//   0 swap_in buf  1 compute mm  2 compute acc  3 swap_out buf  4 free buf
//   5 compute sum  6 free a
inline std::vector<Step> offload_buf_schedule(const ir::Graph& g) {
  return steps(g, {{"swap_in", "buf"},
                   {"compute", "mm"},
                   {"compute", "acc"},
                   {"swap_out", "buf"},
                   {"free", "buf"},
                   {"compute", "sum"},
                   {"free", "a"}});
}

// buf brought in, written and copied out, but never freed: it ends the
// iteration resident.
inline std::vector<Step> buf_left_resident_schedule(const ir::Graph& g) {
  return steps(g, {{"swap_in", "buf"},
                   {"compute", "mm"},
                   {"compute", "acc"},
                   {"swap_out", "buf"},
                   {"compute", "sum"},
                   {"free", "a"}});
}

// Node times mm 1, acc 0.5, sum 0.5; d2h 16 B/s, h2d 32 B/s: buf (64 B)
// takes 4 s out and 2 s in. A roomy budget; predicted filled in from the
// rules after `on_host` is set, since it changes the initial state.
inline Plan host_plan(const ir::Graph& g, std::vector<Step> schedule,
                      std::initializer_list<const char*> on_host = {"buf"}) {
  Plan plan = plan_for(g, std::move(schedule));
  const std::pair<const char*, double> times[] = {{"mm", 1}, {"acc", 0.5}, {"sum", 0.5}};
  for (const auto& [name, s] : times) plan.node_seconds.at(*g.find_node(name)) = s;
  for (const char* name : on_host) plan.initial_host.push_back(*g.find_tensor(name));
  std::sort(plan.initial_host.begin(), plan.initial_host.end());
  fill_predicted(g, plan);
  return plan;
}

}  // namespace memplan::planner::test_util
