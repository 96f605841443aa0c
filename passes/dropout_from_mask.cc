#include "passes/dropout_from_mask.h"

namespace memplan::passes {
namespace {

constexpr std::string_view kMsDomain = "com.microsoft";

bool has_input(const onnx::NodeProto& node, int slot) {
  return slot < node.input_size() && !node.input(slot).empty();
}

// `op`(x, mask, ratio, training_mode) with the forward's ratio and
// training_mode from slot `ratio_slot` on; absent slots stay absent (empty
// names where a later one is present, none at the end).
onnx::NodeProto apply_mask(const std::string& op, const std::string& x, const std::string& mask,
                           const onnx::NodeProto& forward, int ratio_slot, const std::string& out) {
  onnx::NodeProto node;
  node.set_op_type(op);
  node.set_domain(std::string(kMsDomain));
  node.add_input(x);
  node.add_input(mask);
  int end = forward.input_size();
  while (end > ratio_slot && forward.input(end - 1).empty()) --end;
  for (int slot = ratio_slot; slot < end; ++slot) node.add_input(forward.input(slot));
  node.add_output(out);
  return node;
}

onnx::NodeProto add(const std::string& a, const std::string& b, const std::string& out) {
  onnx::NodeProto node;
  node.set_op_type("Add");
  node.add_input(a);
  node.add_input(b);
  node.add_output(out);
  return node;
}

}  // namespace

std::vector<RemakeNode> dropout_from_mask(const onnx::NodeProto& forward, const std::string& mask,
                                          FreshNames& values) {
  const std::string& op = forward.op_type();
  const bool bitmask = op == "BitmaskDropout" || op == "BitmaskBiasDropout";
  const bool bias = op == "BiasDropout" || op == "BitmaskBiasDropout";
  const std::string grad = bitmask ? "BitmaskDropoutGrad" : "DropoutGrad";
  const std::string& y = forward.output(0);
  // (Bitmask)Dropout(data, ratio, training_mode).
  if (!bias) return {{"_recompute", apply_mask(grad, forward.input(0), mask, forward, 1, y)}};

  // (Bitmask)BiasDropout(data, bias, residual, ratio, training_mode):
  // output = residual + dropout(data + bias).
  std::vector<RemakeNode> nodes;
  const std::string biased = values.take(y, "_recompute_biased");
  nodes.push_back({"_recompute_bias", add(forward.input(0), forward.input(1), biased)});
  const bool residual = has_input(forward, 2);
  const std::string dropped = residual ? values.take(y, "_recompute_dropped") : y;
  nodes.push_back({"_recompute", apply_mask(grad, biased, mask, forward, 3, dropped)});
  if (residual) nodes.push_back({"_recompute_residual", add(dropped, forward.input(2), y)});
  return nodes;
}

}  // namespace memplan::passes
