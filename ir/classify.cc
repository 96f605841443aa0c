#include "ir/classify.h"

#include <algorithm>
#include <cctype>

#include "ir/adamw_steps.h"
#include "ir/dtype.h"
#include "util/errors.h"

namespace memplan::ir {
namespace {

bool contains_loss(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return name.find("loss") != std::string::npos;
}

bool is_scalar(const Tensor& t) {
  if (!t.shape_known) return false;
  for (auto d : t.shape)
    if (d != 1) return false;
  return true;
}

TensorId find_loss(const Graph& g, const std::optional<std::string>& name) {
  if (name) {
    auto id = g.find_tensor(*name);
    if (!id) throw InputError("loss tensor '" + *name + "' (--loss) is not in the graph");
    return *id;
  }
  TensorId best = kNoTensor;
  for (TensorId id : g.graph_outputs()) {
    const Tensor& t = g.tensor(id);
    if (t.producer == kNoNode || !is_scalar(t) || !is_floating_point(t.elem_type)) continue;
    if (best == kNoTensor || (contains_loss(t.name) && !contains_loss(g.tensor(best).name)))
      best = id;
  }
  return best;
}

// ONNX Runtime's gradient accumulation buffer of a graph input: the
// gradient's storage (updated in place), not optimizer state.
bool is_gradient_buffer(const Graph& g, std::string_view name) {
  if (!name.ends_with(kGradBufferSuffix)) return false;
  auto param = g.find_tensor(name.substr(0, name.size() - kGradBufferSuffix.size()));
  return param && g.tensor(*param).is_graph_input;
}

}  // namespace

void classify(Graph& graph, const std::optional<std::string>& loss,
              const std::set<std::string>& symbolic_inputs, std::vector<std::string>& warnings) {
  const auto& nodes = graph.nodes();
  auto& tensors = graph.mutable_tensors();
  graph.loss = find_loss(graph, loss);

  // Forward = the loss's ancestors; a reverse walk in node order suffices
  // because producers precede consumers.
  if (graph.loss == kNoTensor) {
    warnings.push_back("no scalar graph output to treat as the loss: the whole graph is forward");
    for (NodeId i = 0; i < nodes.size(); ++i) graph.set_forward(i, true);
  } else {
    std::vector<bool> needed(tensors.size(), false);
    needed[graph.loss] = true;
    for (NodeId i = static_cast<NodeId>(nodes.size()); i-- > 0;) {
      const Node& n = nodes[i];
      const bool forward =
          std::any_of(n.outputs.begin(), n.outputs.end(), [&](TensorId t) { return needed[t]; });
      graph.set_forward(i, forward);
      if (forward)
        for (TensorId in : n.inputs) needed[in] = true;
    }
  }

  for (Tensor& t : tensors) {
    bool read_by_forward = false, read_by_backward = false;
    for (NodeId c : t.consumers) (nodes[c].is_forward ? read_by_forward : read_by_backward) = true;
    if (t.initially_resident()) {
      // Initializers are weights or constants, resident like parameters;
      // inputs only the backward or optimizer reads are its state.
      if (t.is_initializer) {
        t.cls = TensorClass::kParameter;
      } else if (!read_by_forward && is_gradient_buffer(graph, t.name)) {
        t.cls = TensorClass::kGradient;
      } else if (!read_by_forward) {
        t.cls = TensorClass::kOptimizerState;
      } else if (graph.find_tensor(t.name + "_grad") ||
                 graph.find_tensor(t.name + "_grad.accumulation.buffer")) {
        t.cls = TensorClass::kParameter;
      } else if (symbolic_inputs.count(t.name) != 0 || !is_floating_point(t.elem_type)) {
        t.cls = TensorClass::kInput;
      } else {
        t.cls = TensorClass::kParameter;
      }
    } else if (t.is_graph_output) {
      t.cls = TensorClass::kOutput;
    } else if (t.producer != kNoNode && nodes[t.producer].is_forward) {
      t.cls = read_by_backward ? TensorClass::kActivation : TensorClass::kTemporary;
    } else {
      t.cls = TensorClass::kGradient;
    }
  }
}

}  // namespace memplan::ir
