// Shape rules for the forward ops ONNX Runtime substitutes when it builds a
// training graph, their gradients, and its own default-domain schemas.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/inference_helpers.h"
#include "ir/training_op_rules.h"
#include "onnx/defs/shape_inference.h"

namespace memplan::ir {
namespace {

using onnx::InferenceContext;

int32_t elem_of(InferenceContext& ctx, size_t i) {
  return has_input(ctx, i) ? ctx.getInputType(i)->tensor_type().elem_type() : 0;
}

std::optional<int64_t> axis_in(int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return std::nullopt;
  return axis;
}

// ConcatTraining: Concat, plus per_input_length, each input's extent along
// the axis (what its gradient, SplitTraining, splits by).
void concat_training(InferenceContext& ctx) {
  std::vector<std::vector<int64_t>> parts;
  for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
    auto d = known_dims(ctx, i);
    if (!d) return;
    parts.push_back(*d);
  }
  set_output(ctx, 1, onnx::TensorProto::INT64, {static_cast<int64_t>(parts.size())});
  if (parts.empty()) return;
  auto axis = axis_in(int_attr(ctx, "axis", 0), parts[0].size());
  if (!axis) return;
  std::vector<int64_t> out = parts[0];
  out[*axis] = 0;
  for (const auto& p : parts) {
    if (p.size() != out.size()) return;
    out[*axis] += p[*axis];
  }
  set_output(ctx, 0, elem_of(ctx, 0), out);
}

void concat_training_data(onnx::DataPropagationContext& ctx) {
  onnx::TensorShapeProto lengths;
  const auto* a = ctx.getAttribute("axis");
  for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
    const auto* t = ctx.getInputType(i);
    if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) return;
    const auto& shape = t->tensor_type().shape();
    auto axis = axis_in(a != nullptr ? a->i() : 0, static_cast<size_t>(shape.dim_size()));
    if (!axis || !shape.dim(static_cast<int>(*axis)).has_dim_value()) return;
    lengths.add_dim()->set_dim_value(shape.dim(static_cast<int>(*axis)).dim_value());
  }
  if (ctx.getNumOutputs() > 1) ctx.addOutputData(1, std::move(lengths));
}

// SplitTraining(input, split): Split with the sizes given as an input, or
// equal parts.
void split_training(InferenceContext& ctx) {
  auto in = known_dims(ctx, 0);
  if (!in) return;
  auto axis = axis_in(int_attr(ctx, "axis", 0), in->size());
  if (!axis) return;
  const auto n = static_cast<int64_t>(ctx.getNumOutputs());
  std::vector<int64_t> sizes;
  if (auto s = shape_values(ctx, 1)) {
    sizes = *s;
  } else if (n > 0 && (*in)[*axis] % n == 0) {
    sizes.assign(static_cast<size_t>(n), (*in)[*axis] / n);
  }
  if (static_cast<int64_t>(sizes.size()) != n) return;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<int64_t> out = *in;
    out[*axis] = sizes[i];
    set_output(ctx, i, elem_of(ctx, 0), out);
  }
}

// LayerNormalization (ONNX Runtime's, opset 1 in the default domain) and
// SimplifiedLayerNormalization: Y like X; the statistics keep X's dims
// before `axis` and are 1 from there on, in float unless stash_type says.
void layer_norm(InferenceContext& ctx) {
  like_input(ctx, 0, 0);
  auto x = known_dims(ctx, 0);
  if (!x) return;
  auto axis = axis_in(int_attr(ctx, "axis", -1), x->size());
  if (!axis) return;
  std::vector<int64_t> stats = *x;
  std::fill(stats.begin() + *axis, stats.end(), 1);
  const int32_t stash =
      int_attr(ctx, "stash_type", 1) == 1 ? onnx::TensorProto::FLOAT : elem_of(ctx, 0);
  for (size_t out = 1; out < ctx.getNumOutputs(); ++out) set_output(ctx, out, stash, stats);
}

// The recurrent ops, layout 0: X [seq, batch, input], W [dirs, gates*hidden,
// input]. What each output is made of.
struct RecurrentDims {
  int64_t seq, batch, dirs, hidden;
};

std::optional<RecurrentDims> recurrent_dims(InferenceContext& ctx) {
  auto x = known_dims(ctx, 0), w = known_dims(ctx, 1);
  if (!x || !w || x->size() != 3 || w->size() != 3) return std::nullopt;
  int64_t hidden = int_attr(ctx, "hidden_size", 0);
  if (hidden <= 0) {
    auto r = known_dims(ctx, 2);
    if (!r || r->size() != 3) return std::nullopt;
    hidden = (*r)[2];
  }
  return RecurrentDims{(*x)[0], (*x)[1], (*w)[0], hidden};
}

// LSTMTraining: every step's hidden state (like LSTM's Y), the final hidden
// and cell states, every step's cell state, and the i, o, f, c gate
// activations that LSTMGrad reads.
void lstm_training(InferenceContext& ctx) {
  auto d = recurrent_dims(ctx);
  if (!d) return;
  const int32_t e = elem_of(ctx, 0);
  set_output(ctx, 0, e, {d->seq, d->dirs, d->batch, d->hidden});
  set_output(ctx, 1, e, {d->dirs, d->batch, d->hidden});
  set_output(ctx, 2, e, {d->dirs, d->batch, d->hidden});
  set_output(ctx, 3, e, {d->seq, d->dirs, d->batch, d->hidden});
  set_output(ctx, 4, e, {d->seq, d->dirs, d->batch, 4 * d->hidden});
}

// GRUTraining: every step's hidden state, the final one, and the z, r, h
// gates.
void gru_training(InferenceContext& ctx) {
  auto d = recurrent_dims(ctx);
  if (!d) return;
  const int32_t e = elem_of(ctx, 0);
  set_output(ctx, 0, e, {d->seq, d->dirs, d->batch, d->hidden});
  set_output(ctx, 1, e, {d->dirs, d->batch, d->hidden});
  set_output(ctx, 2, e, {d->seq, d->dirs, d->batch, 3 * d->hidden});
}

// LSTMGrad / GRUGrad: dX, dW, dR, dB, dH0 (and dC0, dP for the LSTM), each
// like its forward input; dB is [dirs, 2*gates*hidden] even when B is absent.
void recurrent_grad(InferenceContext& ctx, int64_t gates) {
  auto d = recurrent_dims(ctx);
  if (!d) return;
  const int32_t e = elem_of(ctx, 0);
  like_input(ctx, 0, 0);
  like_input(ctx, 1, 1);
  like_input(ctx, 2, 2);
  set_output(ctx, 3, e, {d->dirs, 2 * gates * d->hidden});
  set_output(ctx, 4, e, {d->dirs, d->batch, d->hidden});
  if (gates == 4) {
    set_output(ctx, 5, e, {d->dirs, d->batch, d->hidden});
    set_output(ctx, 6, e, {d->dirs, 3 * d->hidden});
  }
}

}  // namespace

std::vector<TrainingOpRule> substituted_op_rules() {
  return {
      {"ConcatTraining", concat_training, concat_training_data},
      {"SplitTraining", split_training},
      {"LayerNormalization", layer_norm},
      {"SimplifiedLayerNormalization", layer_norm},
      {"LSTMTraining", lstm_training},
      {"GRUTraining", gru_training},
      {"LSTMGrad", [](InferenceContext& ctx) { recurrent_grad(ctx, 4); }},
      {"GRUGrad", [](InferenceContext& ctx) { recurrent_grad(ctx, 3); }},
  };
}

}  // namespace memplan::ir
