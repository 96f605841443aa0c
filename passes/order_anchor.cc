#include "passes/order_anchor.h"

namespace memplan::passes {
namespace {

onnx::NodeProto make_node(const std::string& op, const std::string& name,
                          std::initializer_list<std::string> inputs, const std::string& output,
                          const std::string& doc) {
  onnx::NodeProto node;
  node.set_op_type(op);
  node.set_name(name);
  for (const auto& in : inputs) node.add_input(in);
  node.add_output(output);
  node.set_doc_string(doc);
  return node;
}

void set_int(onnx::NodeProto& node, const std::string& name, std::int64_t value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

onnx::TensorProto int64_vector(const std::string& name, std::int64_t value) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(1);
  t.add_int64_data(value);
  return t;
}

}  // namespace

OrderAnchor::OrderAnchor(FreshNames& values, FreshNames& node_names, int opset)
    : values_(values), node_names_(node_names), usable_(opset >= 10) {}

bool OrderAnchor::can_anchor_on(std::int32_t elem_type, std::size_t rank) {
  using T = onnx::TensorProto;
  if (rank == 0) return false;
  switch (elem_type) {
    case T::FLOAT:
    case T::UINT8:
    case T::INT8:
    case T::UINT16:
    case T::INT16:
    case T::INT32:
    case T::INT64:
    case T::BOOL:
    case T::FLOAT16:
    case T::DOUBLE:
    case T::UINT32:
    case T::UINT64:
    case T::BFLOAT16:
      return true;
    default:
      return false;
  }
}

const std::string& OrderAnchor::token(const std::string& after,
                                      google::protobuf::RepeatedPtrField<onnx::NodeProto>& out) {
  if (auto it = tokens_.find(after); it != tokens_.end()) return it->second;
  if (zero_.empty()) {
    zero_ = values_.take("memplan_anchor", "_zero");
    minus_one_ = values_.take("memplan_anchor", "_minus_one");
  }
  const std::string doc = std::string(kAnchorTokenDoc) + after;
  std::string empty = values_.take(after, "_anchor_empty");
  std::string as_int = values_.take(after, "_anchor_int");
  std::string flat = values_.take(after, "_anchor_token");
  *out.Add() = make_node("Slice", node_names_.take(after, "_anchor_slice"),
                         {after, zero_, zero_, zero_}, empty, doc);
  onnx::NodeProto cast =
      make_node("Cast", node_names_.take(after, "_anchor_cast"), {empty}, as_int, doc);
  set_int(cast, "to", onnx::TensorProto::INT64);
  *out.Add() = std::move(cast);
  *out.Add() = make_node("Reshape", node_names_.take(after, "_anchor_flat"), {as_int, minus_one_},
                         flat, doc);
  return tokens_.emplace(after, std::move(flat)).first->second;
}

std::string OrderAnchor::anchor(const std::string& input, const std::string& after,
                                const std::string& node,
                                google::protobuf::RepeatedPtrField<onnx::NodeProto>& out) {
  const std::string& tok = token(after, out);
  const std::string doc = std::string(kAnchorTokenDoc) + after;
  std::string shape = values_.take(input, "_anchor_shape");
  std::string target = values_.take(input, "_anchor_target");
  std::string anchored = values_.take(input, "_anchored");
  *out.Add() = make_node("Shape", node_names_.take(node, "_anchor_shape"), {input}, shape, doc);
  onnx::NodeProto concat =
      make_node("Concat", node_names_.take(node, "_anchor_concat"), {tok, shape}, target, doc);
  set_int(concat, "axis", 0);
  *out.Add() = std::move(concat);
  *out.Add() = make_node("Reshape", node_names_.take(node, "_anchor"), {input, target}, anchored,
                         std::string(kAnchorDoc) + after);
  return anchored;
}

void OrderAnchor::add_initializers(onnx::GraphProto& graph) const {
  if (zero_.empty()) return;
  *graph.add_initializer() = int64_vector(zero_, 0);
  *graph.add_initializer() = int64_vector(minus_one_, -1);
}

}  // namespace memplan::passes
