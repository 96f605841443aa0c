#include "ir/shape_folding.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/small_tensor.h"
#include "ir/small_tensor_ops.h"

namespace memplan::ir {
namespace {

std::optional<std::vector<int64_t>> complete_dims(const onnx::TypeProto* t) {
  if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : t->tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return dims;
}

bool has_subgraph(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.has_g() || a.graphs_size() > 0) return true;
  return false;
}

class Folder {
 public:
  Folder(const onnx::GraphProto& graph, const TypeLookup& type_of) : type_of_(type_of) {
    for (const auto& t : graph.initializer())
      if (auto v = small_tensor_from_proto(t)) values_.emplace(t.name(), std::move(*v));
  }

  // The node's outputs as constants, stored for later nodes; false if it
  // cannot be folded.
  bool fold(const onnx::NodeProto& n) {
    if (!small_op_known(n) || has_subgraph(n)) return false;
    SmallOpInputs in;
    for (const std::string& name : n.input()) {
      auto it = name.empty() ? values_.end() : values_.find(name);
      in.values.push_back(it == values_.end() ? nullptr : &it->second);
      in.dims.push_back(name.empty() ? std::nullopt : complete_dims(type_of_(name)));
    }
    auto out = evaluate_small_op(n, in);
    if (!out || static_cast<int>(out->size()) < n.output_size()) return false;
    for (int i = 0; i < n.output_size(); ++i) {
      if (n.output(i).empty()) continue;
      const SmallTensor& v = (*out)[static_cast<std::size_t>(i)];
      made_.emplace_back(n.output(i), v);
      values_.insert_or_assign(n.output(i), v);
    }
    return true;
  }

  // The folded values become initializers. Their value_info goes: a stale
  // declaration (ONNX Runtime writes symbolic dims, which binding may have
  // cleared) would otherwise shadow the initializer's exact type.
  void add_initializers(onnx::GraphProto& graph) {
    std::unordered_set<std::string_view> names;
    for (const auto& [name, value] : made_) {
      *graph.add_initializer() = small_tensor_to_proto(value, name);
      names.insert(name);
    }
    auto* infos = graph.mutable_value_info();
    infos->erase(
        std::remove_if(infos->begin(), infos->end(),
                       [&](const onnx::ValueInfoProto& v) { return names.count(v.name()) != 0; }),
        infos->end());
  }

 private:
  const TypeLookup& type_of_;
  std::unordered_map<std::string, SmallTensor> values_;
  std::vector<std::pair<std::string, SmallTensor>> made_;
};

}  // namespace

int fold_small_constants(onnx::GraphProto& graph, const TypeLookup& type_of) {
  Folder folder(graph, type_of);
  std::vector<bool> folded_at(static_cast<std::size_t>(graph.node_size()), false);
  int folded = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    if (!folder.fold(graph.node(i))) continue;
    folded_at[static_cast<std::size_t>(i)] = true;
    ++folded;
  }
  if (folded == 0) return 0;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (int i = 0; i < graph.node_size(); ++i)
    if (!folded_at[static_cast<std::size_t>(i)]) kept.Add()->Swap(graph.mutable_node(i));
  graph.mutable_node()->Swap(&kept);
  folder.add_initializers(graph);
  return folded;
}

}  // namespace memplan::ir
