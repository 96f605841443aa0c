#include "support/dropout_forms.h"

namespace memplan::test {

void PrintTo(const DropoutForm& form, std::ostream* out) { *out << form.label(); }

std::string DropoutForm::label() const {
  return op + (residual ? "_residual" : "") + (ratio ? "_ratio" : "") + (mask ? "" : "_nomask");
}

std::vector<DropoutForm> dropout_forms(bool mask) {
  return {{"Dropout", false, true, mask},           {"BitmaskDropout", false, false, mask},
          {"BitmaskDropout", false, true, mask},    {"BiasDropout", true, true, mask},
          {"BiasDropout", false, true, mask},       {"BiasDropout", true, false, mask},
          {"BitmaskBiasDropout", true, true, mask}, {"BitmaskBiasDropout", false, false, mask}};
}

ModelBuilder dropout_form_model(const DropoutForm& form) {
  ModelBuilder b;
  b.input("x", {std::string("batch"), std::int64_t{8}});
  std::vector<std::string> in{"a"};
  if (form.bias()) {
    b.input("bias", {std::int64_t{8}});
    if (form.residual) b.input("res", {std::string("batch"), std::int64_t{8}});
    in.push_back("bias");
    in.push_back(form.residual ? "res" : "");
  }
  if (form.ratio) {
    b.input("ratio", {});
    b.input("training", {}, onnx::TensorProto::BOOL);
    in.push_back("ratio");
    in.push_back("training");
  }
  while (in.back().empty()) in.pop_back();
  std::vector<std::string> out{"dr"};
  if (form.mask) out.push_back("mask");

  b.node("Relu", {"x"}, {"a"}, "f0");
  b.node(form.op, in, out, "drop", form.op == "Dropout" ? "" : "com.microsoft");
  b.node("Tanh", {"dr"}, {"c"}, "f2");
  set_int_attr(b.node("ReduceSum", {"c"}, {"loss"}, "f3"), "keepdims", 0);
  b.node("Neg", {"x"}, {"g1"}, "bw0");
  b.node("Mul", {"g1", "dr"}, {"g2"}, "bw1");
  b.output("loss", {}, onnx::TensorProto::FLOAT, /*with_shape=*/true);
  const std::vector<Dim> batch_8{std::string("batch"), std::int64_t{8}};
  if (!form.mask) {
    b.output("g2", batch_8, onnx::TensorProto::FLOAT, true);
    return b;
  }
  std::vector<std::string> grad_in{"g2", "mask"};
  if (form.ratio) grad_in.insert(grad_in.end(), {"ratio", "training"});
  b.node(form.bitmask() ? "BitmaskDropoutGrad" : "DropoutGrad", grad_in, {"g3"}, "bw2",
         "com.microsoft");
  b.output("g3", batch_8, onnx::TensorProto::FLOAT, true);
  return b;
}

}  // namespace memplan::test
