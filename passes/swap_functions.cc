#include "passes/swap_functions.h"

#include <string>

namespace memplan::passes {
namespace {

// The version of the default ONNX domain the model imports (and its
// spelling, "" or "ai.onnx"), so the function body resolves Identity against
// the same opset as the rest of the model; the ONNX checker requires that.
const onnx::OperatorSetIdProto* default_opset(const onnx::ModelProto& model) {
  for (const auto& op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") return &op;
  return nullptr;
}

}  // namespace

onnx::NodeProto make_swap_node(std::string_view op, const std::string& name,
                               const std::string& input, const std::string& output) {
  onnx::NodeProto node;
  node.set_name(name);
  node.set_op_type(std::string(op));
  node.set_domain(std::string(kMemplanDomain));
  node.add_input(input);
  node.add_output(output);
  return node;
}

void define_swap_function(onnx::ModelProto& model, std::string_view op) {
  bool imported = false;
  for (const auto& o : model.opset_import()) imported |= o.domain() == kMemplanDomain;
  if (!imported) {
    auto* o = model.add_opset_import();
    o->set_domain(std::string(kMemplanDomain));
    o->set_version(kMemplanDomainVersion);
  }
  if (model.ir_version() < 8) model.set_ir_version(8);

  onnx::FunctionProto f;
  f.set_name(std::string(op));
  f.set_domain(std::string(kMemplanDomain));
  f.set_doc_string(op == kSwapOutOp
                       ? "memplan: copy X from device to host memory; Y is the host copy"
                       : "memplan: copy X from host to device memory; Y is the device copy");
  f.add_input("X");
  f.add_output("Y");
  auto* body = f.add_node();
  body->set_op_type("Identity");
  body->add_input("X");
  body->add_output("Y");
  auto* import = f.add_opset_import();
  const auto* def = default_opset(model);
  import->set_domain(def ? def->domain() : "");
  import->set_version(def ? def->version() : 13);  // Identity's opset without one

  auto* functions = model.mutable_functions();
  for (auto& existing : *functions)
    if (existing.domain() == kMemplanDomain && existing.name() == op) {
      existing = std::move(f);
      return;
    }
  *functions->Add() = std::move(f);
}

bool is_swap_node(const onnx::NodeProto& node, std::string_view op) {
  return node.domain() == kMemplanDomain && node.op_type() == op;
}

}  // namespace memplan::passes
