#pragma once
// Small training-shaped graphs with branches, where the rematerialization
// optimum can be enumerated: a residual block and a two-branch attention,
// every activation n floats, with a backward that reads the forward's
// values (the arithmetic is not a true gradient; only the reads matter).
#include <cstdint>
#include <string>

#include "ir/device_presets.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"
#include "support/model_builder.h"

namespace memplan::test {

struct SmallDag {
  ir::Graph graph;
  ir::NodeCosts costs;
  std::uint64_t value_bytes = 0;  // of every activation
};

inline SmallDag load_small_dag(const ModelBuilder& b, const std::string& stem, std::int64_t n) {
  SmallDag d;
  d.graph = ir::load_model(b.write(stem), {}).graph;
  std::vector<std::string> warnings;
  d.costs = ir::make_node_costs(d.graph, ir::device_preset("a100-40gb"), {}, "roofline", warnings);
  d.value_bytes = static_cast<std::uint64_t>(n) * 4;
  return d;
}

// a = σ(x), b = tanh(a), c = σ(b), r = c + a (the skip), loss = Σ r.
inline SmallDag residual_block(std::int64_t n) {
  ModelBuilder b;
  b.input("x", {n});
  b.node("Sigmoid", {"x"}, {"a"}, "a");
  b.node("Tanh", {"a"}, {"b"}, "b");
  b.node("Sigmoid", {"b"}, {"c"}, "c");
  b.node("Add", {"c", "a"}, {"r"}, "r");
  set_int_attr(b.node("ReduceSum", {"r"}, {"loss"}, "loss"), "keepdims", 0);
  b.node("Neg", {"r"}, {"g_r"}, "g_r");
  b.node("Mul", {"g_r", "b"}, {"g_c"}, "g_c");
  b.node("Mul", {"g_c", "c"}, {"g_b"}, "g_b");
  b.node("Mul", {"g_b", "a"}, {"g_a1"}, "g_a1");
  b.node("Add", {"g_a1", "g_r"}, {"g_a"}, "g_a");
  b.node("Mul", {"g_a", "x"}, {"g_x"}, "g_x");
  b.output("loss").output("g_x");
  return load_small_dag(b, "residual_block", n);
}

// q = σ(x), k = tanh(x), s = q·k, p = σ(s), v = relu(x), o = p·v, loss = Σ o.
inline SmallDag two_branch_attention(std::int64_t n) {
  ModelBuilder b;
  b.input("x", {n});
  b.node("Sigmoid", {"x"}, {"q"}, "q");
  b.node("Tanh", {"x"}, {"k"}, "k");
  b.node("Mul", {"q", "k"}, {"s"}, "s");
  b.node("Sigmoid", {"s"}, {"p"}, "p");
  b.node("Relu", {"x"}, {"v"}, "v");
  b.node("Mul", {"p", "v"}, {"o"}, "o");
  set_int_attr(b.node("ReduceSum", {"o"}, {"loss"}, "loss"), "keepdims", 0);
  b.node("Neg", {"o"}, {"g_o"}, "g_o");
  b.node("Mul", {"g_o", "v"}, {"g_p"}, "g_p");
  b.node("Mul", {"g_o", "p"}, {"g_v"}, "g_v");
  b.node("Mul", {"g_p", "s"}, {"g_s"}, "g_s");
  b.node("Mul", {"g_s", "k"}, {"g_q"}, "g_q");
  b.node("Mul", {"g_s", "q"}, {"g_k"}, "g_k");
  b.node("Sum", {"g_q", "g_k", "g_v"}, {"g_x"}, "g_x");
  b.output("loss").output("g_x");
  return load_small_dag(b, "two_branch_attention", n);
}

}  // namespace memplan::test
