#pragma once
// A five-node graph small enough to time and size by hand, and plans for it
// written as readable step lists. Shared by the planner tests.
#include <gtest/gtest.h>

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ir/onnx_loader.h"
#include "planner/baseline_plan.h"
#include "planner/plan.h"
#include "support/model_builder.h"

namespace memplan::planner::test_util {

// float32 throughout. x [2,4] 32 B and w [4,4] 64 B are graph inputs.
//   mm:  a = MatMul(x, w)   32 B      relu: b = Relu(a)      32 B
//   neg: c = Neg(b)         32 B      mul:  d = Mul(c, a)    32 B  (reads a late)
//   sum: loss = ReduceSum(d) 4 B, the graph output
// Baseline memory: 96 at the start; mm 128; relu 160; neg 192, free b 160;
// mul 192, free a c 128; sum 132, free d 100. Peak 192.
inline std::string write_tiny_model(bool symbolic_batch = false) {
  test::ModelBuilder b;
  b.input("x", {symbolic_batch ? test::Dim{std::string("batch")} : test::Dim{std::int64_t{2}},
                std::int64_t{4}});
  b.input("w", {std::int64_t{4}, std::int64_t{4}});
  b.node("MatMul", {"x", "w"}, {"a"}, "mm");
  b.node("Relu", {"a"}, {"b"}, "relu");
  b.node("Neg", {"b"}, {"c"}, "neg");
  b.node("Mul", {"c", "a"}, {"d"}, "mul");
  test::set_int_attr(b.node("ReduceSum", {"d"}, {"loss"}, "sum"), "keepdims", 0);
  b.output("loss");
  return b.write("tiny_plan");
}

inline ir::Graph tiny_graph() {
  ir::LoadOptions o;
  return ir::load_model(write_tiny_model(), o).graph;
}

// Node times mm 1, relu 0.5, neg 3, mul 1, sum 0.5 (binary fractions, so
// every sum below is exact); d2h 16 B/s and h2d 32 B/s, so moving a 32-byte
// tensor takes 2 s out and 1 s in.
inline void set_tiny_costs(const ir::Graph& g, Plan& plan) {
  const std::pair<const char*, double> times[] = {
      {"mm", 1}, {"relu", 0.5}, {"neg", 3}, {"mul", 1}, {"sum", 0.5}};
  plan.node_seconds.assign(g.nodes().size(), 0);
  for (const auto& [name, s] : times)
    if (auto id = g.find_node(name)) plan.node_seconds.at(*id) = s;
  plan.device.name = "test-gpu";
  plan.device.memory_bytes = 1 << 20;
  plan.device.d2h_bytes_per_s = 16;
  plan.device.h2d_bytes_per_s = 32;
}

// {"compute", "mm"}, {"free", "a"}: a step by op and node or tensor name.
inline std::vector<Step> steps(const ir::Graph& g,
                               std::initializer_list<std::pair<const char*, const char*>> list) {
  std::vector<Step> out;
  for (const auto& [op_text, name] : list) {
    auto op = parse_step_op(op_text);
    if (!op) throw std::invalid_argument(op_text);
    Step s{*op, 0};
    auto id = s.on_node() ? g.find_node(name) : g.find_tensor(name);
    if (!id) throw std::invalid_argument(name);
    s.id = *id;
    out.push_back(s);
  }
  return out;
}

// A complete plan for `schedule`: graph sizes, tiny costs, all-keep
// decisions, a roomy budget, and predicted filled in from the rules.
inline Plan plan_for(const ir::Graph& g, std::vector<Step> schedule) {
  Plan plan;
  plan.model_path = "tiny.onnx";
  plan.model_sha256 = std::string(64, '0');
  plan.dims = g.dims;
  set_tiny_costs(g, plan);
  plan.budget_bytes = 1 << 20;
  for (const ir::Tensor& t : g.tensors()) plan.tensor_bytes.push_back(t.bytes);
  plan.decisions.assign(g.tensors().size(), Decision::kKeep);
  plan.solver = {"test", "heuristic", 0, std::nullopt, 0};
  plan.schedule = std::move(schedule);
  fill_predicted(g, plan);
  return plan;
}

// Swap `a` out after mm and back in for mul (the simulator test times it).
inline std::vector<Step> swap_a_schedule(const ir::Graph& g) {
  return steps(g, {{"compute", "mm"},
                   {"swap_out", "a"},
                   {"compute", "relu"},
                   {"free", "a"},
                   {"compute", "neg"},
                   {"free", "b"},
                   {"swap_in", "a"},
                   {"compute", "mul"},
                   {"free", "a"},
                   {"free", "c"},
                   {"compute", "sum"},
                   {"free", "d"}});
}

// a dropped without a copy right after relu and recomputed from x and w for
// mul.
inline std::vector<Step> recompute_a_schedule(const ir::Graph& g) {
  return steps(g, {{"compute", "mm"},
                   {"compute", "relu"},
                   {"free", "a"},
                   {"compute", "neg"},
                   {"free", "b"},
                   {"recompute", "mm"},
                   {"compute", "mul"},
                   {"free", "a"},
                   {"free", "c"},
                   {"compute", "sum"},
                   {"free", "d"}});
}

}  // namespace memplan::planner::test_util
