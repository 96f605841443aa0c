#pragma once
// A uniform chain x0 -> x1 -> … -> xl (Sigmoid, n floats each) with
// loss = ReduceSum(xl) and a backward that reads the states last first:
// g_l = Neg(x_l), g_{i-1} = Mul(g_i, x_{i-1}) for i = l … 1. And Griewank's
// binomial bound for reversing it (Griewank & Walther, "revolve").
#include <cstdint>
#include <string>
#include <vector>

#include "ir/device_presets.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"
#include "support/model_builder.h"

namespace memplan::planner::test_util {

inline std::uint64_t binom(std::uint64_t n, std::uint64_t k) {
  std::uint64_t r = 1;
  for (std::uint64_t i = 1; i <= k; ++i) r = r * (n - k + i) / i;
  return r;
}

// Reversing l steps with memory for s chain states needs at least p(l, s)
// forward evaluations, p(l, s) = r·l − C(s+r, s+1) with r minimal such that
// C(s+r, s) ≥ l: at least p(l, s) − l recomputations.
inline std::int64_t griewank_p(std::int64_t l, std::int64_t s) {
  std::int64_t r = 0;
  while (static_cast<std::int64_t>(
             binom(static_cast<std::uint64_t>(s + r), static_cast<std::uint64_t>(s))) < l)
    ++r;
  return r * l - static_cast<std::int64_t>(
                     binom(static_cast<std::uint64_t>(s + r), static_cast<std::uint64_t>(s + 1)));
}

struct Chain {
  ir::Graph graph;
  ir::NodeCosts costs;
  std::uint64_t state_bytes = 0;
};

inline Chain uniform_chain(int l, std::int64_t n) {
  test::ModelBuilder b;
  b.input("x0", {n});
  for (int i = 1; i <= l; ++i)
    b.node("Sigmoid", {"x" + std::to_string(i - 1)}, {"x" + std::to_string(i)},
           "f" + std::to_string(i));
  test::set_int_attr(b.node("ReduceSum", {"x" + std::to_string(l)}, {"loss"}, "loss_node"),
                     "keepdims", 0);
  b.node("Neg", {"x" + std::to_string(l)}, {"g" + std::to_string(l)}, "b_start");
  for (int i = l; i >= 1; --i)
    b.node("Mul", {"g" + std::to_string(i), "x" + std::to_string(i - 1)},
           {"g" + std::to_string(i - 1)}, "b" + std::to_string(i));
  b.output("loss").output("g0");
  Chain c;
  c.graph = ir::load_model(b.write("chain"), {}).graph;
  std::vector<std::string> warnings;
  c.costs = ir::make_node_costs(c.graph, ir::device_preset("a100-40gb"), {}, "roofline", warnings);
  c.state_bytes = static_cast<std::uint64_t>(n) * 4;
  return c;
}

}  // namespace memplan::planner::test_util
