#pragma once
// The dropouts memplan remakes from their masks (ONNX's Dropout and ONNX
// Runtime's fused BitmaskDropout, BiasDropout, BitmaskBiasDropout), each in
// a tiny training graph, with and without the optional inputs.
#include <ostream>
#include <string>
#include <vector>

#include "support/model_builder.h"

namespace memplan::test {

struct DropoutForm {
  std::string op;
  bool residual = false;  // the bias forms: a residual input
  bool ratio = false;     // ratio and training_mode inputs
  bool mask = true;       // the mask output

  bool bias() const { return op == "BiasDropout" || op == "BitmaskBiasDropout"; }
  bool bitmask() const { return op == "BitmaskDropout" || op == "BitmaskBiasDropout"; }
  // "BiasDropout_residual_ratio": a test name.
  std::string label() const;
};

// How gtest prints a form: its label.
void PrintTo(const DropoutForm& form, std::ostream* out);

// Every form, all with the mask output or all without.
std::vector<DropoutForm> dropout_forms(bool mask);

// float32 [batch, 8]; bias [8], res [batch, 8], ratio (float) and training
// (bool) scalars as the form has them, all graph inputs:
//   f0:   a = Relu(x)
//   drop: dr, mask = <op>(a, bias, res, ratio, training)  (absent slots empty)
//   f2:   c = Tanh(dr)             f3: loss = ReduceSum(c)
//   bw0:  g1 = Neg(x)              bw1: g2 = Mul(g1, dr)
//   bw2:  g3 = (Bitmask)DropoutGrad(g2, mask, ratio, training)  (with the mask)
ModelBuilder dropout_form_model(const DropoutForm& form);

}  // namespace memplan::test
