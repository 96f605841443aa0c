#include "ir/adamw_steps.h"

#include <array>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "util/errors.h"

namespace memplan::ir {
namespace {

// The inputs ORT's training API feeds its AdamW optimizer session, in order
// (training_api/optimizer.cc checks the same list).
constexpr std::array<std::string_view, 6> kAdamWInputs = {
    "learning_rate", "step", "params", "gradients", "first_order_moments", "second_order_moments"};

const onnx::NodeProto& adamw_node(const onnx::ModelProto& optimizer, const std::string& where) {
  const onnx::GraphProto& g = optimizer.graph();
  bool ok = optimizer.has_graph() && g.node_size() == 1 &&
            g.node(0).op_type() == "AdamWOptimizer" && g.node(0).domain() == "com.microsoft" &&
            g.input_size() == static_cast<int>(kAdamWInputs.size());
  for (int i = 0; ok && i < g.input_size(); ++i) ok = g.input(i).name() == kAdamWInputs[i];
  if (!ok)
    throw InputError(where +
                     ": not ONNX Runtime's AdamW optimizer model (one com.microsoft "
                     "AdamWOptimizer node over learning_rate, step, params, gradients, "
                     "first_order_moments, second_order_moments); memplan models only that "
                     "optimizer");
  return g.node(0);
}

struct Trainable {
  const onnx::ValueInfoProto* param = nullptr;
  std::string buffer;
  std::vector<std::string> after;  // outputs of the buffer's readers
};

// Parameters with a gradient buffer, in graph-input order.
std::vector<Trainable> trainables(const onnx::GraphProto& g) {
  std::map<std::string, const onnx::ValueInfoProto*, std::less<>> inputs;
  for (const auto& v : g.input()) inputs.emplace(v.name(), &v);
  std::vector<Trainable> out;
  std::map<std::string, std::size_t, std::less<>> by_buffer;
  for (const auto& v : g.input()) {
    std::string buffer = v.name() + std::string(kGradBufferSuffix);
    if (inputs.count(buffer) == 0 || !v.type().has_tensor_type()) continue;
    by_buffer.emplace(buffer, out.size());
    out.push_back({&v, std::move(buffer), {}});
  }
  for (const auto& n : g.node()) {
    if (n.output_size() == 0 || n.output(0).empty()) continue;
    for (const auto& in : n.input())
      if (auto it = by_buffer.find(in); it != by_buffer.end())
        out[it->second].after.push_back(n.output(0));
  }
  return out;
}

// Every name the training graph holds: the new ones must not clash.
std::set<std::string> taken_names(const onnx::GraphProto& g) {
  std::set<std::string> names;
  for (const auto& v : g.input()) names.insert(v.name());
  for (const auto& t : g.initializer()) names.insert(t.name());
  for (const auto& n : g.node()) {
    names.insert(n.name());
    for (const auto& o : n.output()) names.insert(o);
  }
  return names;
}

class StepWriter {
 public:
  StepWriter(onnx::GraphProto& g, std::string where)
      : g_(g), taken_(taken_names(g)), where_(std::move(where)) {}

  void add_input(const std::string& name, const onnx::TypeProto& type) {
    claim(name);
    auto* v = g_.add_input();
    v->set_name(name);
    *v->mutable_type() = type;
  }

  void add_step(const Trainable& t, const onnx::NodeProto& adamw) {
    const std::string& p = t.param->name();
    const std::string m = p + std::string(kFirstMomentSuffix);
    const std::string v = p + std::string(kSecondMomentSuffix);
    add_input(m, t.param->type());
    add_input(v, t.param->type());
    const std::string flag = p + ".adamw_step.updated";
    const std::string name = std::string(kAdamWStepOp) + "/" + p;
    claim(flag);
    claim(name);
    auto* n = g_.add_node();
    n->set_name(name);
    n->set_op_type(std::string(kAdamWStepOp));
    n->set_domain(std::string(kAdamWStepDomain));
    for (const std::string& in :
         {p, t.buffer, m, v, std::string("learning_rate"), std::string("step")})
      n->add_input(in);
    for (const auto& a : t.after) n->add_input(a);
    n->add_output(flag);
    *n->mutable_attribute() = adamw.attribute();
    auto* out = g_.add_output();
    out->set_name(flag);
    auto* type = out->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx::TensorProto::BOOL);
    type->mutable_shape()->add_dim()->set_dim_value(1);
  }

 private:
  void claim(const std::string& name) {
    if (!taken_.insert(name).second)
      throw InputError(where_ + ": the training graph already has a '" + name +
                       "', a name the optimizer step needs");
  }

  onnx::GraphProto& g_;
  std::set<std::string> taken_;
  std::string where_;
};

}  // namespace

std::size_t append_adamw_steps(onnx::ModelProto& training, const onnx::ModelProto& optimizer,
                               const std::string& where) {
  const onnx::NodeProto& adamw = adamw_node(optimizer, where);
  onnx::GraphProto& g = *training.mutable_graph();
  const std::vector<Trainable> params = trainables(g);
  if (params.empty())
    throw InputError(where + ": the training graph has no trainable parameter (no graph input " +
                     "'<p>" + std::string(kGradBufferSuffix) + "') for the optimizer to update");
  StepWriter w(g, where);
  w.add_input("learning_rate", optimizer.graph().input(0).type());
  w.add_input("step", optimizer.graph().input(1).type());
  for (const Trainable& t : params) w.add_step(t, adamw);
  bool has_domain = false;
  for (const auto& op : training.opset_import()) has_domain |= op.domain() == kAdamWStepDomain;
  if (!has_domain) {
    auto* op = training.add_opset_import();
    op->set_domain(std::string(kAdamWStepDomain));
    op->set_version(1);
  }
  return params.size();
}

bool is_adamw_step(const Node& n) {
  return n.domain == kAdamWStepDomain && n.op_type == kAdamWStepOp;
}

}  // namespace memplan::ir
