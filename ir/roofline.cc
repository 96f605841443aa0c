#include "ir/roofline.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ir/adamw_steps.h"
#include "util/errors.h"

namespace memplan::ir {
namespace {

bool is_onnx_domain(const Node& n) { return n.domain.empty() || n.domain == "ai.onnx"; }
bool is_ms_domain(const Node& n) { return n.domain == "com.microsoft"; }

// The shape of slot `i` of `ids`, or nullptr when the slot is absent or the
// shape is not known.
const std::vector<std::int64_t>* shape_of(const Graph& g, std::span<const TensorId> ids,
                                          std::size_t i) {
  if (i >= ids.size()) return nullptr;
  const Tensor& t = g.tensor(ids[i]);
  return t.shape_known ? &t.shape : nullptr;
}

double elements(std::span<const std::int64_t> shape) {
  double n = 1;
  for (std::int64_t d : shape) n *= static_cast<double>(std::max<std::int64_t>(d, 0));
  return n;
}

// Every output element of a matrix product is a K-long dot product, so the
// output size carries M, N and any broadcast batch dims at once.
double matmul_flops(const Graph& g, const Node& n, bool trans_a, bool trans_batch_a) {
  const auto* a = shape_of(g, n.inputs, 0);
  const auto* y = shape_of(g, n.outputs, 0);
  if (a == nullptr || y == nullptr || a->empty()) return 0;
  std::size_t r = a->size();
  std::int64_t k = (*a)[r - 1];
  if (trans_a && r >= 2) {
    // With transBatchA the row dim is moved to the front (FusedMatMul spec).
    k = trans_batch_a ? (*a)[0] : (*a)[r - 2];
  }
  return 2 * elements(*y) * static_cast<double>(std::max<std::int64_t>(k, 0));
}

// Conv: each output element sums Cin/group * kernel products; the weight
// [Cout, Cin/group, k...] holds exactly that count after its first dim.
double conv_flops(std::span<const std::int64_t> out, std::span<const std::int64_t> weight) {
  if (weight.empty()) return 0;
  return 2 * elements(out) * elements(weight.subspan(1));
}

// ConvTranspose scatters each input element into Cout/group * kernel outputs;
// the weight is [Cin, Cout/group, k...].
double conv_transpose_flops(std::span<const std::int64_t> in,
                            std::span<const std::int64_t> weight) {
  if (weight.empty()) return 0;
  return 2 * elements(in) * elements(weight.subspan(1));
}

// ConvGrad-style nodes make dX and/or dW (and dB); each of dX and dW costs
// one forward-sized convolution. Optional outputs leave no slot behind, so
// they are told apart by shape; with no output shapes known, both are assumed.
double gradient_factor(const Graph& g, const Node& n, const std::vector<std::int64_t>& x,
                       const std::vector<std::int64_t>& w) {
  int known = 0;
  int matched = 0;
  for (std::size_t i = 0; i < n.outputs.size(); ++i) {
    const auto* s = shape_of(g, n.outputs, i);
    if (s == nullptr) continue;
    ++known;
    if (*s == x || *s == w) ++matched;
  }
  return known == 0 ? 2.0 : static_cast<double>(matched);
}

bool moves_no_data(const Node& n) {
  if (!is_onnx_domain(n)) return false;
  // ORT aliases the output of these to the input (or reads only the shape).
  static constexpr std::array<std::string_view, 7> kViews = {
      "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Shape", "Size"};
  return std::ranges::find(kViews, n.op_type) != kViews.end();
}

}  // namespace

namespace {

// FLOPs of the convolution family (forward, transposed, and their fused
// gradient): 0 when a shape is unknown.
double conv_family_flops(const Graph& g, const Node& n, bool onnx, bool ms) {
  const std::string& op = n.op_type;
  if ((onnx && op == "Conv") || (ms && op == "FusedConv")) {
    const auto* w = shape_of(g, n.inputs, 1);
    const auto* y = shape_of(g, n.outputs, 0);
    return w == nullptr || y == nullptr ? 0 : conv_flops(*y, *w);
  }
  if (onnx && op == "ConvTranspose") {
    const auto* x = shape_of(g, n.inputs, 0);
    const auto* w = shape_of(g, n.inputs, 1);
    return x == nullptr || w == nullptr ? 0 : conv_transpose_flops(*x, *w);
  }
  if (ms && (op == "ConvGrad" || op == "ConvTransposeGrad")) {
    // Inputs: dY, X, W.
    const auto* dy = shape_of(g, n.inputs, 0);
    const auto* x = shape_of(g, n.inputs, 1);
    const auto* w = shape_of(g, n.inputs, 2);
    if (dy == nullptr || x == nullptr || w == nullptr) return 0;
    double one = op == "ConvGrad" ? conv_flops(*dy, *w) : conv_transpose_flops(*x, *w);
    return gradient_factor(g, n, *x, *w) * one;
  }
  return 0;
}

}  // namespace

double node_flops(const Graph& g, const Node& n) {
  const std::string& op = n.op_type;
  bool onnx = is_onnx_domain(n);
  bool ms = is_ms_domain(n);
  if (onnx && op == "MatMul") return matmul_flops(g, n, false, false);
  if ((onnx && op == "Gemm") || (ms && op == "FusedGemm"))
    return matmul_flops(g, n, n.attrs.int_or("transA", 0) != 0, false);
  if (ms && op == "FusedMatMul")
    return matmul_flops(g, n, n.attrs.int_or("transA", 0) != 0,
                        n.attrs.int_or("transBatchA", 0) != 0);
  return conv_family_flops(g, n, onnx, ms);
}

double node_bytes_moved(const Graph& g, const Node& n) {
  if (moves_no_data(n)) return 0;
  double bytes = 0;
  for (TensorId t : n.inputs) bytes += static_cast<double>(g.tensor(t).bytes);
  for (TensorId t : n.outputs) bytes += static_cast<double>(g.tensor(t).bytes);
  // Its outputs are a flag: what it writes are p, m and v, in place.
  if (is_adamw_step(n))
    for (std::size_t slot : std::array<std::size_t, 3>{0, 2, 3})
      if (slot < n.inputs.size()) bytes += static_cast<double>(g.tensor(n.inputs[slot]).bytes);
  return bytes;
}

double roofline_seconds(const Graph& g, const Node& n, const DeviceSpec& d) {
  if (!(d.peak_flops > 0) || !(d.memory_bytes_per_s > 0))
    throw UsageError("device '" + d.name +
                     "' has no peak_flops or memory bandwidth for the roofline model; use a "
                     "preset (memplan devices) or give measured times");
  double compute = node_flops(g, n) / d.peak_flops;
  double memory = node_bytes_moved(g, n) / d.memory_bytes_per_s;
  return std::max({compute, memory, d.launch_seconds});
}

}  // namespace memplan::ir
