#include "planner/planning_order.h"

#include "ir/liveness.h"
#include "ir/reorder.h"

namespace memplan::planner {
namespace {

// Ops that read only their input's shape.
bool reads_shape_only(const ir::Node& n) {
  return (n.domain.empty() || n.domain == "ai.onnx") && (n.op_type == "Shape" || n.op_type == "Size") &&
         n.inputs.size() == 1;
}

}  // namespace

PlanningGraph planning_graph(const ir::Graph& g, const ir::NodeCosts& costs) {
  const auto n = static_cast<ir::NodeId>(g.nodes().size());
  const ir::Liveness live(g);
  PlanningGraph pg;

  // Bytes a node frees (inputs it reads last) and makes.
  auto frees_at_least_what_it_makes = [&](ir::NodeId v) {
    std::uint64_t freed = 0, made = 0;
    for (ir::TensorId in : g.node(v).inputs)
      if (!live.pinned(in) && live.free_step(in) == static_cast<std::int64_t>(v)) freed += g.tensor(in).bytes;
    for (ir::TensorId out : g.node(v).outputs) made += g.tensor(out).bytes;
    return freed >= made;
  };
  // The first backward step (shape reads aside): no node is pulled ahead
  // of it except shape reads, so nothing becomes a long-lived backward
  // tensor made during the forward.
  ir::NodeId first_backward = n;
  for (ir::NodeId i = 0; i < n && first_backward == n; ++i)
    if (!g.node(i).is_forward && !reads_shape_only(g.node(i))) first_backward = i;

  std::vector<std::uint32_t> pending(n, 0);  // inputs whose producer is not issued yet
  for (ir::NodeId i = 0; i < n; ++i)
    for (ir::TensorId in : g.node(i).inputs) pending[i] += g.tensor(in).producer != ir::kNoNode ? 1 : 0;
  std::vector<bool> issued(n, false), forwardish(n, false);
  std::vector<ir::NodeId> order;
  order.reserve(n);
  std::vector<ir::NodeId> stack;

  // Issue the graph's order, and behind each node the backward nodes it
  // made ready that shrink memory (shape reads, dW products that read an
  // activation last, gradient accumulators): ORT's order leaves many of
  // them to the end of the backward, holding their inputs all the way.
  for (ir::NodeId i = 0; i < n; ++i) {
    if (issued[i]) continue;
    stack.push_back(i);
    while (!stack.empty()) {
      ir::NodeId v = stack.back();
      stack.pop_back();
      if (issued[v]) continue;
      issued[v] = true;
      order.push_back(v);
      for (ir::TensorId out : g.node(v).outputs) {
        for (ir::NodeId c : g.tensor(out).consumers) {
          if (--pending[c] != 0 || issued[c] || c <= v) continue;
          const ir::Node& cn = g.node(c);
          if (cn.is_forward || cn.is_random()) continue;
          const bool shape_read = reads_shape_only(cn);
          const bool in_backward = i >= first_backward;
          if (shape_read || (in_backward && frees_at_least_what_it_makes(c))) {
            stack.push_back(c);
            forwardish[c] = shape_read && i < first_backward;
            ++pg.hoisted;
          }
        }
      }
    }
  }
  pg.graph = pg.hoisted == 0 ? g : ir::reorder_nodes(g, order);
  pg.original = order;
  // A shape read hoisted into the forward ends its tensor's forward life
  // there, and opens its backward window.
  for (ir::NodeId i = 0; i < n; ++i)
    if (forwardish[order[i]]) pg.graph.mutable_nodes()[i].is_forward = true;
  pg.costs = costs;
  for (ir::NodeId i = 0; i < n; ++i) pg.costs.seconds[i] = costs.seconds[order[i]];
  return pg;
}

}  // namespace memplan::planner
