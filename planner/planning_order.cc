#include "planner/planning_order.h"

#include "ir/liveness.h"
#include "ir/reorder.h"

namespace memplan::planner {
namespace {

// Ops that read only their input's shape.
bool reads_shape_only(const ir::Node& n) {
  return (n.domain.empty() || n.domain == "ai.onnx") &&
         (n.op_type == "Shape" || n.op_type == "Size") && n.inputs.size() == 1;
}

// The first backward step (shape reads aside): no node is pulled ahead of
// it except shape reads, so nothing becomes a long-lived backward tensor
// made during the forward.
ir::NodeId first_backward_step(const ir::Graph& g) {
  const auto n = static_cast<ir::NodeId>(g.nodes().size());
  for (ir::NodeId i = 0; i < n; ++i)
    if (!g.node(i).is_forward && !reads_shape_only(g.node(i))) return i;
  return n;
}

// Issues the graph's order, and behind each node the backward nodes it
// made ready that shrink memory (shape reads, dW products that read an
// activation last, gradient accumulators): ORT's order leaves many of them
// to the end of the backward, holding their inputs all the way.
class Issuer {
 public:
  explicit Issuer(const ir::Graph& g)
      : g_(g),
        live_(g),
        first_backward_(first_backward_step(g)),
        pending_(g.nodes().size(), 0),
        issued_(g.nodes().size(), false),
        forwardish_(g.nodes().size(), false) {
    for (ir::NodeId i = 0; i < g.nodes().size(); ++i)
      for (ir::TensorId in : g.node(i).inputs)
        pending_[i] += g.tensor(in).producer != ir::kNoNode ? 1 : 0;
    order_.reserve(g.nodes().size());
  }

  void run() {
    for (ir::NodeId i = 0; i < g_.nodes().size(); ++i)
      if (!issued_[i]) issue_from(i);
  }

  const std::vector<ir::NodeId>& order() const { return order_; }
  bool forwardish(ir::NodeId v) const { return forwardish_[v]; }
  std::size_t hoisted() const { return hoisted_; }

 private:
  // Bytes a node frees (inputs it reads last) against those it makes.
  bool frees_at_least_what_it_makes(ir::NodeId v) const {
    std::uint64_t freed = 0, made = 0;
    for (ir::TensorId in : g_.node(v).inputs)
      if (!live_.pinned(in) && live_.free_step(in) == static_cast<std::int64_t>(v))
        freed += g_.tensor(in).bytes;
    for (ir::TensorId out : g_.node(v).outputs) made += g_.tensor(out).bytes;
    return freed >= made;
  }

  // Node i's turn: it, then (depth first) what it made ready and hoists.
  void issue_from(ir::NodeId i) {
    stack_.push_back(i);
    while (!stack_.empty()) {
      const ir::NodeId v = stack_.back();
      stack_.pop_back();
      if (issued_[v]) continue;
      issued_[v] = true;
      order_.push_back(v);
      for (ir::TensorId out : g_.node(v).outputs)
        for (ir::NodeId c : g_.tensor(out).consumers)
          if (--pending_[c] == 0 && !issued_[c] && c > v) hoist_if_it_helps(c, i);
    }
  }

  void hoist_if_it_helps(ir::NodeId c, ir::NodeId turn) {
    const ir::Node& cn = g_.node(c);
    if (cn.is_forward || cn.is_random()) return;
    const bool shape_read = reads_shape_only(cn);
    const bool in_backward = turn >= first_backward_;
    if (!shape_read && !(in_backward && frees_at_least_what_it_makes(c))) return;
    stack_.push_back(c);
    forwardish_[c] = shape_read && turn < first_backward_;
    ++hoisted_;
  }

  const ir::Graph& g_;
  const ir::Liveness live_;
  const ir::NodeId first_backward_;
  std::vector<std::uint32_t> pending_;  // inputs whose producer is not issued yet
  std::vector<bool> issued_, forwardish_;
  std::vector<ir::NodeId> order_, stack_;
  std::size_t hoisted_ = 0;
};

}  // namespace

PlanningGraph planning_graph(const ir::Graph& g, const ir::NodeCosts& costs) {
  const auto n = static_cast<ir::NodeId>(g.nodes().size());
  Issuer issuer(g);
  issuer.run();
  const std::vector<ir::NodeId>& order = issuer.order();
  PlanningGraph pg;
  pg.hoisted = issuer.hoisted();
  pg.graph = pg.hoisted == 0 ? g : ir::reorder_nodes(g, order);
  pg.original = order;
  // A shape read hoisted into the forward ends its tensor's forward life
  // there, and opens its backward window.
  for (ir::NodeId i = 0; i < n; ++i)
    if (issuer.forwardish(order[i])) pg.graph.mutable_nodes()[i].is_forward = true;
  pg.costs = costs;
  for (ir::NodeId i = 0; i < n; ++i) pg.costs.seconds[i] = costs.seconds[order[i]];
  return pg;
}

}  // namespace memplan::planner
