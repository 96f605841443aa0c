#pragma once
// Small training-shaped graphs with branches, where the rematerialization
// optimum can be enumerated: a residual block and a two-branch attention,
// every activation n floats, with a backward that reads the forward's
// values (the arithmetic is not a true gradient; only the reads matter).
#include <cstdint>
#include <string>
#include <vector>

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

// One node per entry, named after its output; ReduceSum keeps no dims.
struct DagOp {
  std::string op;
  std::vector<std::string> inputs;
  std::string output;
};

inline SmallDag small_dag(const std::vector<DagOp>& ops, const std::string& stem, std::int64_t n) {
  ModelBuilder b;
  b.input("x", {n});
  for (const DagOp& o : ops) {
    auto& node = b.node(o.op, o.inputs, {o.output}, o.output);
    if (o.op == "ReduceSum") set_int_attr(node, "keepdims", 0);
  }
  b.output("loss").output("g_x");
  SmallDag d;
  d.graph = ir::load_model(b.write(stem), {}).graph;
  std::vector<std::string> warnings;
  d.costs = ir::make_node_costs(d.graph, ir::device_preset("a100-40gb"), {}, "roofline", warnings);
  d.value_bytes = static_cast<std::uint64_t>(n) * 4;
  return d;
}

// a = σ(x), b = tanh(a), c = σ(b), r = c + a (the skip), loss = Σ r.
inline SmallDag residual_block(std::int64_t n) {
  return small_dag({{"Sigmoid", {"x"}, "a"},
                    {"Tanh", {"a"}, "b"},
                    {"Sigmoid", {"b"}, "c"},
                    {"Add", {"c", "a"}, "r"},
                    {"ReduceSum", {"r"}, "loss"},
                    {"Neg", {"r"}, "g_r"},
                    {"Mul", {"g_r", "b"}, "g_c"},
                    {"Mul", {"g_c", "c"}, "g_b"},
                    {"Mul", {"g_b", "a"}, "g_a1"},
                    {"Add", {"g_a1", "g_r"}, "g_a"},
                    {"Mul", {"g_a", "x"}, "g_x"}},
                   "residual_block", n);
}

// q = σ(x), k = tanh(x), s = q·k, p = σ(s), v = relu(x), o = p·v, loss = Σ o.
inline SmallDag two_branch_attention(std::int64_t n) {
  return small_dag({{"Sigmoid", {"x"}, "q"},
                    {"Tanh", {"x"}, "k"},
                    {"Mul", {"q", "k"}, "s"},
                    {"Sigmoid", {"s"}, "p"},
                    {"Relu", {"x"}, "v"},
                    {"Mul", {"p", "v"}, "o"},
                    {"ReduceSum", {"o"}, "loss"},
                    {"Neg", {"o"}, "g_o"},
                    {"Mul", {"g_o", "v"}, "g_p"},
                    {"Mul", {"g_o", "p"}, "g_v"},
                    {"Mul", {"g_p", "s"}, "g_s"},
                    {"Mul", {"g_s", "k"}, "g_q"},
                    {"Mul", {"g_s", "q"}, "g_k"},
                    {"Sum", {"g_q", "g_k", "g_v"}, "g_x"}},
                   "two_branch_attention", n);
}

}  // namespace memplan::test
