#include "bench/synthetic_graph.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "ir/roofline.h"

namespace memplan::bench {
namespace {

constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr int kInt64 = onnx::TensorProto::INT64;
constexpr int kBool = onnx::TensorProto::BOOL;
const std::string kMs = "com.microsoft";

// Uniform in [0, 1) from the engine's bits: std::uniform_real_distribution
// is implementation-defined, and the graphs must be the same everywhere.
double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// Builds the proto the way generate_artifacts lays one out: parameters are
// graph inputs with a gradient accumulation buffer each, and every gradient
// ends in an InPlaceAccumulatorV2 whose bool output is a graph output.
class Builder {
 public:
  Builder() {
    model_.set_ir_version(8);
    model_.set_producer_name("memplan-synth");
    auto* onnx_op = model_.add_opset_import();
    onnx_op->set_domain("");
    onnx_op->set_version(17);
    auto* ms = model_.add_opset_import();
    ms->set_domain(kMs);
    ms->set_version(1);
    graph().set_name("synthetic");
    input("lazy_reset_grad", {1}, {}, kBool);
  }

  onnx::GraphProto& graph() { return *model_.mutable_graph(); }
  onnx::ModelProto take() { return std::move(model_); }

  // Dims: numbers, or symbolic names where `symbolic[i]` is non-empty.
  void input(const std::string& name, std::vector<std::int64_t> dims,
             std::vector<std::string> symbolic, int elem_type) {
    auto* t = graph().add_input();
    t->set_name(name);
    auto* tt = t->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    auto* shape = tt->mutable_shape();
    for (std::size_t i = 0; i < dims.size(); ++i) {
      auto* d = shape->add_dim();
      if (i < symbolic.size() && !symbolic[i].empty()) {
        d->set_dim_param(symbolic[i]);
      } else {
        d->set_dim_value(dims[i]);
      }
    }
  }

  void output(const std::string& name, int elem_type, std::vector<std::int64_t> dims) {
    auto* t = graph().add_output();
    t->set_name(name);
    auto* tt = t->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    auto* shape = tt->mutable_shape();
    for (auto d : dims) shape->add_dim()->set_dim_value(d);
  }

  // A trainable parameter: its input and its accumulation buffer.
  std::string param(const std::string& name, std::vector<std::int64_t> dims) {
    input(name, dims, {}, kFloat);
    input(name + "_grad.accumulation.buffer", dims, {}, kFloat);
    return name;
  }

  void ints(const std::string& name, std::vector<std::int64_t> values) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(kInt64);
    t->add_dims(static_cast<std::int64_t>(values.size()));
    for (auto v : values) t->add_int64_data(v);
  }

  void scalar(const std::string& name, int elem_type, double value) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(elem_type);
    if (elem_type == kBool) {
      t->add_int32_data(value != 0 ? 1 : 0);
    } else {
      t->add_float_data(static_cast<float>(value));
    }
  }

  onnx::NodeProto& node(const std::string& name, const std::string& op,
                        std::vector<std::string> inputs, std::vector<std::string> outputs,
                        const std::string& domain = "") {
    auto* n = graph().add_node();
    n->set_name(name);
    n->set_op_type(op);
    n->set_domain(domain);
    for (auto& i : inputs) n->add_input(std::move(i));
    for (auto& o : outputs) n->add_output(std::move(o));
    return *n;
  }

  // The gradient of parameter p, accumulated as ORT does it.
  void accumulate(const std::string& p, const std::string& grad) {
    std::string out = p + "_grad.accumulation.out";
    node(p + "/accumulate", "InPlaceAccumulatorV2",
         {p + "_grad.accumulation.buffer", grad, "lazy_reset_grad"}, {out}, kMs);
    output(out, kBool, {1});
  }

 private:
  onnx::ModelProto model_;
};

void set_int(onnx::NodeProto& n, const std::string& name, std::int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void set_ints(onnx::NodeProto& n, const std::string& name, std::vector<std::int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}

void set_string(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

// Tensors of one forward layer that its backward reads.
struct LayerSaved {
  std::string p;  // name prefix, "L<i>"
  std::string x, ln1, mean1, istd1, qT, kT, vT, probs, attn_probs, mask, ctx2;
  std::string x1, ln2, mean2, istd2, h, a;
  bool dropout = false;
};

struct Dims {
  std::int64_t hidden, heads, head_dim, vocab;
};

LayerSaved forward_layer(Builder& b, const Dims& d, std::size_t index, const std::string& x,
                         bool dropout, std::int64_t ffn) {
  LayerSaved s;
  // Built by append: GCC 12 warns falsely (-Wrestrict) on "L" + to_string()
  // and on assigning a literal to an empty string here.
  s.p.append(1, 'L').append(std::to_string(index));
  const std::string& p = s.p;
  s.x = x;
  s.dropout = dropout;
  const std::int64_t H = d.hidden;
  const auto ln1_g = b.param(p + ".ln1.weight", {H});
  const auto ln1_b = b.param(p + ".ln1.bias", {H});
  const auto wqkv = b.param(p + ".attn.qkv.weight", {H, 3 * H});
  const auto bqkv = b.param(p + ".attn.qkv.bias", {3 * H});
  const auto wo = b.param(p + ".attn.out.weight", {H, H});
  const auto bo = b.param(p + ".attn.out.bias", {H});
  const auto ln2_g = b.param(p + ".ln2.weight", {H});
  const auto ln2_b = b.param(p + ".ln2.bias", {H});
  const auto w1 = b.param(p + ".ffn.fc1.weight", {H, ffn});
  const auto b1 = b.param(p + ".ffn.fc1.bias", {ffn});
  const auto w2 = b.param(p + ".ffn.fc2.weight", {ffn, H});
  const auto b2 = b.param(p + ".ffn.fc2.bias", {H});

  s.ln1 = p + ".ln1", s.mean1 = p + ".ln1.mean", s.istd1 = p + ".ln1.istd";
  set_int(b.node(p + "/ln1", "LayerNormalization", {x, ln1_g, ln1_b}, {s.ln1, s.mean1, s.istd1}),
          "axis", -1);
  b.node(p + "/qkv", "Gemm", {s.ln1, wqkv, bqkv}, {p + ".qkv"});
  set_int(b.node(p + "/split", "Split", {p + ".qkv", "c.split3"}, {p + ".q", p + ".k", p + ".v"}),
          "axis", 1);
  for (const char* t : {"q", "k", "v"})
    b.node(p + "/" + t + "/reshape", "Reshape", {p + "." + t, "c.shape4"}, {p + "." + t + "4"});
  s.qT = p + ".qT", s.kT = p + ".kT", s.vT = p + ".vT";
  set_ints(b.node(p + "/q/transpose", "Transpose", {p + ".q4"}, {s.qT}), "perm", {0, 2, 1, 3});
  set_ints(b.node(p + "/k/transpose", "Transpose", {p + ".k4"}, {s.kT}), "perm", {0, 2, 3, 1});
  set_ints(b.node(p + "/v/transpose", "Transpose", {p + ".v4"}, {s.vT}), "perm", {0, 2, 1, 3});
  b.node(p + "/scores", "MatMul", {s.qT, s.kT}, {p + ".scores"});
  b.node(p + "/scale", "Mul", {p + ".scores", "c.scale"}, {p + ".scaled"});
  s.probs = p + ".probs";
  set_int(b.node(p + "/softmax", "Softmax", {p + ".scaled"}, {s.probs}), "axis", -1);
  s.attn_probs = s.probs;
  if (dropout) {
    s.attn_probs = p + ".probs.dropped", s.mask = p + ".probs.mask";
    b.node(p + "/dropout", "Dropout", {s.probs, "c.ratio", "c.training"}, {s.attn_probs, s.mask});
  }
  b.node(p + "/context", "MatMul", {s.attn_probs, s.vT}, {p + ".ctx"});
  set_ints(b.node(p + "/ctx/transpose", "Transpose", {p + ".ctx"}, {p + ".ctxT"}), "perm",
           {0, 2, 1, 3});
  s.ctx2 = p + ".ctx2";
  b.node(p + "/ctx/reshape", "Reshape", {p + ".ctxT", "c.shape_tok"}, {s.ctx2});
  b.node(p + "/attn_out", "Gemm", {s.ctx2, wo, bo}, {p + ".attn"});
  s.x1 = p + ".x1";
  b.node(p + "/residual1", "Add", {x, p + ".attn"}, {s.x1});
  s.ln2 = p + ".ln2", s.mean2 = p + ".ln2.mean", s.istd2 = p + ".ln2.istd";
  set_int(b.node(p + "/ln2", "LayerNormalization", {s.x1, ln2_g, ln2_b}, {s.ln2, s.mean2, s.istd2}),
          "axis", -1);
  s.h = p + ".h", s.a = p + ".a";
  b.node(p + "/fc1", "Gemm", {s.ln2, w1, b1}, {s.h});
  b.node(p + "/gelu", "Gelu", {s.h}, {s.a}, kMs);
  b.node(p + "/fc2", "Gemm", {s.a, w2, b2}, {p + ".o"});
  b.node(p + "/residual2", "Add", {s.x1, p + ".o"}, {p + ".x2"});
  return s;
}

// dY [N, out] of a Gemm(x, W, bias): dX, and dW/dBias accumulated.
std::string linear_backward(Builder& b, const std::string& name, const std::string& x,
                            const std::string& w, const std::string& bias, const std::string& dy) {
  std::string dx = name + ".input_grad";
  set_int(b.node(name + "/dx", "Gemm", {dy, w}, {dx}), "transB", 1);
  set_int(b.node(name + "/dw", "Gemm", {x, dy}, {w + "_grad"}), "transA", 1);
  set_int(b.node(name + "/db", "ReduceSum", {dy, "c.axes0"}, {bias + "_grad"}), "keepdims", 0);
  b.accumulate(w, w + "_grad");
  b.accumulate(bias, bias + "_grad");
  return dx;
}

std::string layer_norm_backward(Builder& b, const std::string& name, const std::string& dy,
                                const std::string& x, const std::string& gamma,
                                const std::string& beta, const std::string& mean,
                                const std::string& istd) {
  std::string dx = name + ".input_grad";
  b.node(name + "/grad", "LayerNormalizationGrad", {dy, x, gamma, mean, istd},
         {dx, gamma + "_grad", beta + "_grad"}, kMs);
  b.accumulate(gamma, gamma + "_grad");
  b.accumulate(beta, beta + "_grad");
  return dx;
}

// Mirrors forward_layer; returns the gradient of the layer's input.
std::string backward_layer(Builder& b, const LayerSaved& s, const std::string& dx2) {
  const std::string& p = s.p;
  // FFN: x2 = x1 + fc2(gelu(fc1(ln2(x1)))).
  std::string da =
      linear_backward(b, p + ".fc2", s.a, p + ".ffn.fc2.weight", p + ".ffn.fc2.bias", dx2);
  b.node(p + "/gelu/grad", "GeluGrad", {da, s.h}, {p + ".h_grad"}, kMs);
  std::string dln2 = linear_backward(b, p + ".fc1", s.ln2, p + ".ffn.fc1.weight",
                                     p + ".ffn.fc1.bias", p + ".h_grad");
  std::string dx1a = layer_norm_backward(b, p + ".ln2", dln2, s.x1, p + ".ln2.weight",
                                         p + ".ln2.bias", s.mean2, s.istd2);
  b.node(p + "/residual2/grad", "Sum", {dx2, dx1a}, {p + ".x1_grad"});
  // Attention: x1 = x + out(attention(qkv(ln1(x)))).
  std::string dctx2 = linear_backward(b, p + ".out", s.ctx2, p + ".attn.out.weight",
                                      p + ".attn.out.bias", p + ".x1_grad");
  b.node(p + "/ctx/reshape/grad", "Reshape", {dctx2, "c.shape4"}, {p + ".ctxT_grad"});
  set_ints(b.node(p + "/ctx/transpose/grad", "Transpose", {p + ".ctxT_grad"}, {p + ".ctx_grad"}),
           "perm", {0, 2, 1, 3});
  set_int(b.node(p + "/context/grad_probs", "FusedMatMul", {p + ".ctx_grad", s.vT},
                 {s.attn_probs + "_grad"}, kMs),
          "transB", 1);
  set_int(b.node(p + "/context/grad_v", "FusedMatMul", {s.attn_probs, p + ".ctx_grad"},
                 {s.vT + "_grad"}, kMs),
          "transA", 1);
  std::string dprobs = s.attn_probs + "_grad";
  if (s.dropout) {
    dprobs = s.probs + "_grad";
    b.node(p + "/dropout/grad", "DropoutGrad",
           {s.attn_probs + "_grad", s.mask, "c.ratio", "c.training"}, {dprobs}, kMs);
  }
  set_int(
      b.node(p + "/softmax/grad", "SoftmaxGrad_13", {dprobs, s.probs}, {p + ".scaled_grad"}, kMs),
      "axis", -1);
  b.node(p + "/scale/grad", "Mul", {p + ".scaled_grad", "c.scale"}, {p + ".scores_grad"});
  set_int(b.node(p + "/scores/grad_q", "FusedMatMul", {p + ".scores_grad", s.kT}, {s.qT + "_grad"},
                 kMs),
          "transB", 1);
  set_int(b.node(p + "/scores/grad_k", "FusedMatMul", {s.qT, p + ".scores_grad"}, {s.kT + "_grad"},
                 kMs),
          "transA", 1);
  set_ints(b.node(p + "/q/transpose/grad", "Transpose", {s.qT + "_grad"}, {p + ".q4_grad"}), "perm",
           {0, 2, 1, 3});
  set_ints(b.node(p + "/k/transpose/grad", "Transpose", {s.kT + "_grad"}, {p + ".k4_grad"}), "perm",
           {0, 3, 1, 2});
  set_ints(b.node(p + "/v/transpose/grad", "Transpose", {s.vT + "_grad"}, {p + ".v4_grad"}), "perm",
           {0, 2, 1, 3});
  // Concatenating on the heads axis lays q, k, v out as the Split took them.
  set_int(b.node(p + "/split/grad", "Concat", {p + ".q4_grad", p + ".k4_grad", p + ".v4_grad"},
                 {p + ".qkv4_grad"}),
          "axis", 2);
  b.node(p + "/split/grad/reshape", "Reshape", {p + ".qkv4_grad", "c.shape_tok3"},
         {p + ".qkv_grad"});
  std::string dln1 = linear_backward(b, p + ".qkv", s.ln1, p + ".attn.qkv.weight",
                                     p + ".attn.qkv.bias", p + ".qkv_grad");
  std::string dxa = layer_norm_backward(b, p + ".ln1", dln1, s.x, p + ".ln1.weight",
                                        p + ".ln1.bias", s.mean1, s.istd1);
  b.node(p + "/residual1/grad", "Sum", {p + ".x1_grad", dxa}, {p + ".x_grad"});
  return p + ".x_grad";
}

// Nodes outside the layers (input reshapes, shape tensor, head, loss and
// their backward) and per layer without dropout; for sizing only.
constexpr std::size_t kFixedNodes = 14;
constexpr std::size_t kLayerNodes = 64;

}  // namespace

SyntheticModel make_synthetic_model(const SyntheticOptions& o) {
  const Dims d{o.hidden, o.heads, o.hidden / std::max<std::int64_t>(1, o.heads), o.vocab};
  const std::int64_t H = d.hidden;
  std::mt19937_64 rng(o.seed);
  // Dropout adds one node forward and one backward.
  const double per_layer = static_cast<double>(kLayerNodes) + 2.0 * o.dropout_share;
  const double room = static_cast<double>(o.target_nodes) - static_cast<double>(kFixedNodes);
  const auto layers = static_cast<std::size_t>(std::max(1.0, std::round(room / per_layer)));

  Builder b;
  b.input("x", {0, 0, H}, {"batch", "seq", ""}, kFloat);
  b.input("labels", {0, 0}, {"batch", "seq"}, kInt64);
  b.ints("c.split3", {H, H, H});
  b.ints("c.heads", {d.heads, d.head_dim});
  b.ints("c.shape_tok", {-1, H});
  b.ints("c.shape_tok3", {-1, 3 * H});
  b.ints("c.shape_flat", {-1});
  b.ints("c.axes0", {0});
  b.scalar("c.scale", kFloat, 1.0 / std::sqrt(static_cast<double>(d.head_dim)));
  b.scalar("c.ratio", kFloat, 0.1);
  b.scalar("c.training", kBool, 1);
  b.scalar("c.dloss", kFloat, 1.0);

  // [batch, seq, heads, head_dim] from the data, as ORT's graphs build
  // their reshape targets (Shape + Concat, resolved by data propagation).
  b.node("shape/batch_seq", "Shape", {"labels"}, {"c.batch_seq"});
  set_int(b.node("shape/heads", "Concat", {"c.batch_seq", "c.heads"}, {"c.shape4"}), "axis", 0);
  b.node("input/reshape", "Reshape", {"x", "c.shape_tok"}, {"x.tokens"});
  b.node("labels/reshape", "Reshape", {"labels", "c.shape_flat"}, {"labels.flat"});

  std::vector<LayerSaved> saved;
  saved.reserve(layers);
  std::string x = "x.tokens";
  for (std::size_t i = 0; i < layers; ++i) {
    const bool dropout = unit(rng) < o.dropout_share;
    const std::int64_t ffn = (unit(rng) < 0.5 ? 2 : 4) * H;
    saved.push_back(forward_layer(b, d, i, x, dropout, ffn));
    x = saved.back().p + ".x2";
  }
  const auto lnf_g = b.param("lnf.weight", {H});
  const auto lnf_b = b.param("lnf.bias", {H});
  const auto head = b.param("head.weight", {H, d.vocab});
  set_int(b.node("lnf", "LayerNormalization", {x, lnf_g, lnf_b}, {"lnf", "lnf.mean", "lnf.istd"}),
          "axis", -1);
  b.node("head", "Gemm", {"lnf", head}, {"logits"});
  set_string(
      b.node("loss", "SoftmaxCrossEntropyLoss", {"logits", "labels.flat"}, {"loss", "log_prob"}),
      "reduction", "mean");
  b.output("loss", onnx::TensorProto::FLOAT, {});

  set_string(b.node("loss/grad", "SoftmaxCrossEntropyLossGrad",
                    {"c.dloss", "log_prob", "labels.flat"}, {"logits_grad"}, kMs),
             "reduction", "mean");
  set_int(b.node("head/dw", "Gemm", {"lnf", "logits_grad"}, {head + "_grad"}), "transA", 1);
  b.accumulate(head, head + "_grad");
  set_int(b.node("head/dx", "Gemm", {"logits_grad", head}, {"lnf_grad"}), "transB", 1);
  std::string dx =
      layer_norm_backward(b, "lnf", "lnf_grad", x, lnf_g, lnf_b, "lnf.mean", "lnf.istd");
  for (std::size_t i = layers; i-- > 0;) dx = backward_layer(b, saved[i], dx);

  SyntheticModel m;
  m.layers = layers;
  m.nodes = static_cast<std::size_t>(b.graph().node_size());
  m.proto = b.take();
  return m;
}

std::map<std::string, double> synthetic_node_seconds(const ir::Graph& graph,
                                                     const ir::DeviceSpec& device,
                                                     std::uint64_t seed) {
  // A stream of its own, so the times do not depend on the graph's layout draws.
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  std::map<std::string, double> out;
  for (const auto& n : graph.nodes())
    out[n.name] = ir::roofline_seconds(graph, n, device) * (0.8 + 0.4 * unit(rng));
  return out;
}

std::string synthetic_costs_json(const ir::DeviceSpec& device,
                                 const std::map<std::string, double>& node_seconds) {
  nlohmann::ordered_json doc;
  doc["format"] = "memplan.costs";
  doc["version"] = 1;
  doc["device"] = {{"name", device.name},
                   {"memory_bytes", device.memory_bytes},
                   {"h2d_bytes_per_s", device.h2d_bytes_per_s},
                   {"d2h_bytes_per_s", device.d2h_bytes_per_s}};
  auto& nodes = doc["nodes"] = nlohmann::ordered_json::object();
  for (const auto& [name, s] : node_seconds) nodes[name] = {{"seconds", s}};
  return doc.dump(1) + "\n";
}

}  // namespace memplan::bench
