#include "planner/planning_order.h"

#include <algorithm>
#include <span>

#include "ir/liveness.h"
#include "ir/reorder.h"
#include "solvers/problem_builder.h"

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
        forwardish_(g.nodes().size(), false),
        wanted_(g.nodes().size(), false) {
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

  // Bytes a group of nodes run now frees against those it makes. Now, not
  // in the graph's order: an input is freed only when every other reader
  // has run or is in the group (a Reshape of an activation that another
  // backward node still reads is a second copy, not a move).
  std::int64_t group_balance(std::span<const ir::NodeId> group) const {
    auto in_group = [&](ir::NodeId v) {
      return std::find(group.begin(), group.end(), v) != group.end();
    };
    std::vector<ir::TensorId> read;
    std::int64_t balance = 0;
    for (ir::NodeId v : group) {
      for (ir::TensorId out : g_.node(v).outputs)
        balance -= static_cast<std::int64_t>(g_.tensor(out).bytes);
      read.insert(read.end(), g_.node(v).inputs.begin(), g_.node(v).inputs.end());
    }
    std::sort(read.begin(), read.end());
    read.erase(std::unique(read.begin(), read.end()), read.end());
    for (ir::TensorId in : read) {
      const ir::Tensor& t = g_.tensor(in);
      if (live_.pinned(in) || t.producer == ir::kNoNode) continue;
      if (std::all_of(t.consumers.begin(), t.consumers.end(),
                      [&](ir::NodeId r) { return issued_[r] || in_group(r); }))
        balance += static_cast<std::int64_t>(t.bytes);
    }
    return balance;
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
        for (ir::NodeId c : g_.tensor(out).consumers) {
          const bool ready = --pending_[c] == 0;
          if (issued_[c] || c <= v) continue;
          if (ready)
            hoist_if_it_helps(c, i);
          else if (i >= first_backward_)
            hoist_with_ready_producers(c);
        }
    }
  }

  // Whether v may run ahead of its turn: a backward node that draws no
  // random numbers (a Dropout's mask must stay where the graph put it).
  bool movable(ir::NodeId v) const { return !g_.node(v).is_forward && !g_.node(v).is_random(); }

  // ORT reads a forward activation for a weight gradient through a Reshape
  // that became ready in the forward, so it never came up for a hoist and
  // the weight-gradient product waits for it at the end of the backward;
  // meanwhile the activation is held (or, once planned, remade twice).
  // When c waits only on such ready producers, they and c run now if the
  // group frees at least what it makes.
  void hoist_with_ready_producers(ir::NodeId c) {
    if (!movable(c) || wanted_[c]) return;
    std::vector<ir::NodeId>& ready = scratch_;
    ready.clear();
    for (ir::TensorId in : g_.node(c).inputs) {
      const ir::NodeId p = g_.tensor(in).producer;
      if (p == ir::kNoNode || issued_[p]) continue;
      if (pending_[p] != 0 || !movable(p) || wanted_[p]) return;
      if (std::find(ready.begin(), ready.end(), p) == ready.end()) ready.push_back(p);
    }
    ready.push_back(c);
    if (group_balance(ready) < 0) return;
    ready.pop_back();
    wanted_[c] = true;  // hoisted when its last producer issues
    for (ir::NodeId p : ready) {
      wanted_[p] = true;
      stack_.push_back(p);
      ++hoisted_;
    }
  }

  void hoist_if_it_helps(ir::NodeId c, ir::NodeId turn) {
    if (!movable(c)) return;
    const bool shape_read = reads_shape_only(g_.node(c));
    const bool in_backward = turn >= first_backward_;
    if (!shape_read && !wanted_[c] && !(in_backward && frees_at_least_what_it_makes(c))) return;
    stack_.push_back(c);
    forwardish_[c] = shape_read && turn < first_backward_;
    ++hoisted_;
  }

  const ir::Graph& g_;
  const ir::Liveness live_;
  const ir::NodeId first_backward_;
  std::vector<std::uint32_t> pending_;  // inputs whose producer is not issued yet
  std::vector<bool> issued_, forwardish_;
  std::vector<bool> wanted_;  // hoisted as part of a group (see hoist_with_ready_producers)
  std::vector<ir::NodeId> order_, stack_, scratch_;
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
  // Not `hoisted == 0 ? g : reorder_nodes(...)`: that conditional is a const
  // prvalue, which copy-assigns the reordered graph (synth100k: 0.13 s).
  if (pg.hoisted == 0)
    pg.graph = g;
  else
    pg.graph = ir::reorder_nodes(g, order);
  pg.original = order;
  // A shape read hoisted into the forward ends its tensor's forward life
  // there, and opens its backward window.
  for (ir::NodeId i = 0; i < n; ++i)
    if (issuer.forwardish(order[i])) pg.graph.set_forward(i, true);
  pg.costs = costs;
  for (ir::NodeId i = 0; i < n; ++i) pg.costs.seconds[i] = costs.seconds[order[i]];
  return pg;
}

std::optional<PlanningGraph> with_state_on_host(const PlanningGraph& order) {
  const std::vector<ir::TensorId> host =
      solvers::host_state_tensors(order.graph, solvers::ProblemOptions{});
  if (host.empty()) return std::nullopt;
  PlanningGraph out = order;
  for (ir::TensorId t : host) out.graph.mutable_tensors()[t].starts_on_host = true;
  return out;
}

}  // namespace memplan::planner
