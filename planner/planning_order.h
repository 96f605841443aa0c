#pragma once
// The order the planner schedules in. The graph's own order is the
// baseline's; the planner may issue nodes in any order that respects their
// inputs (PLAN_FORMAT only asks that inputs be resident). ONNX Runtime's
// gradient graphs read forward activations with Shape/Size nodes early in
// the backward (for broadcasting gradients) — they need the shape, not the
// data, yet a reader pins the tensor: on GPT-2 small 142 of 326 activations
// are first read in the backward by a Shape. ORT also leaves weight-gradient
// products and gradient accumulators late, holding activations and
// gradients through the backward. The planning order issues such nodes as
// soon as their inputs exist (shape reads anywhere; in the backward, nodes
// that free at least what they make): on GPT-2 small (batch 8, seq 512)
// the lowest reachable peak drops from 4.66 to 2.63 GiB. A weight gradient
// reads its activation through a Reshape that was ready in the forward;
// that Reshape and the product run together, as soon as the product's
// gradient input exists, when the pair frees at least what it makes: the
// activation's backward readers are then adjacent, so a recomputed
// activation is remade once, not twice (bert_base a100-40gb at 50 %:
// 31.5 % overhead before, 13.9 % after).
#include <optional>
#include <vector>

#include "ir/costs.h"
#include "ir/graph.h"

namespace memplan::planner {

struct PlanningGraph {
  ir::Graph graph;                   // nodes in planning order, same tensor ids
  ir::NodeCosts costs;               // seconds permuted to match
  std::vector<ir::NodeId> original;  // planning NodeId -> the graph's NodeId
  std::size_t hoisted = 0;           // how many nodes moved
};

PlanningGraph planning_graph(const ir::Graph& graph, const ir::NodeCosts& costs);

// `order` with every tensor of solvers::host_state_tensors marked
// ir::Tensor::starts_on_host; nullopt when there is none.
std::optional<PlanningGraph> with_state_on_host(const PlanningGraph& order);

}  // namespace memplan::planner
