#include "passes/ort_fusions.h"

namespace memplan::passes {

bool fusion_head(std::string_view op) {
  for (std::string_view f : {"MatMul", "Gemm", "FusedMatMul", "Add", "Mul", "Div", "Sub",
                             "Transpose", "Cast", "Conv", "Identity"})
    if (op == f) return true;
  return false;
}

bool folded_into_reader(std::string_view op) {
  for (std::string_view f :
       {"Mul", "Div", "Transpose", "Cast", "Identity", "Reshape", "Sum", "Add"})
    if (op == f) return true;
  return false;
}

int fusion_kept(const ir::Graph& graph, ir::NodeId producer) {
  if (producer == ir::kNoNode) return 2;
  const std::string& op = graph.node(producer).op_type;
  if (op == "Mul" || op == "Div") return 0;
  return fusion_head(op) ? 1 : 2;
}

std::vector<bool> gemm_sum_nodes(const ir::Graph& graph) {
  std::vector<bool> marked(graph.nodes().size(), false);
  for (ir::NodeId n = 0; n < graph.nodes().size(); ++n) {
    const ir::Node& gemm = graph.node(n);
    if (gemm.op_type != "Gemm" || gemm.inputs.size() != 2) continue;
    std::vector<ir::NodeId> chain{n};
    while (true) {
      const ir::Node& at = graph.node(chain.back());
      if (at.outputs.size() != 1) break;
      const ir::Tensor& out = graph.tensor(at.outputs[0]);
      if (out.is_graph_output || out.consumers.size() != 1) break;
      const ir::Node& reader = graph.node(out.consumers[0]);
      if (reader.op_type == "Sum" && reader.inputs.size() == 2) {
        for (ir::NodeId c : chain) marked[c] = true;
        break;
      }
      if (reader.op_type != "Transpose") break;
      chain.push_back(out.consumers[0]);
    }
  }
  return marked;
}

}  // namespace memplan::passes
