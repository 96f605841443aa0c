// Every committed training graph loads, classifies and has the baseline
// peak that PLAN_FORMAT.md defines — recomputed here by a naive residency
// scan that shares no code with ir::Liveness / ir::baseline_memory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ir/baseline_memory.h"
#include "ir/liveness.h"
#include "ir/onnx_loader.h"

namespace memplan::ir {
namespace {

struct Fixture {
  const char* name;
  std::size_t nodes;
};

// Node counts from tests/fixtures/README.md.
constexpr Fixture kFixtures[] = {
    {"mlp", 26},           {"mlp_dropout", 28},  {"resnet50", 551},
    {"bert_base", 1533},   {"bert_large", 3009}, {"gpt2_small", 1642},
    {"gpt2_medium", 3298}, {"gpt2_large", 4954}, {"gpt2_xl", 6610},
};

LoadOptions dims() {
  LoadOptions o;
  o.dims = {{"batch", 4}, {"seq", 128}};
  return o;
}

// A tensor is resident after step i when it was there from the start, or was
// made at or before i and is still needed (a graph output, or read at or
// after i; one nothing reads dies at its own step).
std::uint64_t naive_peak(const Graph& g) {
  std::uint64_t peak = 0;
  for (const Tensor& t : g.tensors())
    if (t.initially_resident()) peak += t.bytes;
  for (NodeId i = 0; i < g.nodes().size(); ++i) {
    std::uint64_t in_use = 0;
    for (const Tensor& t : g.tensors()) {
      if (t.initially_resident()) {
        in_use += t.bytes;
        continue;
      }
      NodeId last = t.consumers.empty() ? t.producer : std::max(t.producer, t.consumers.back());
      if (t.producer <= i && (t.is_graph_output || last >= i)) in_use += t.bytes;
    }
    peak = std::max(peak, in_use);
  }
  return peak;
}

class FixtureTest : public ::testing::TestWithParam<Fixture> {};

TEST_P(FixtureTest, LoadsWithEveryTensorSized) {
  const Fixture& f = GetParam();
  LoadedModel m =
      load_model(std::string(MEMPLAN_FIXTURES) + "/" + f.name + ".training.onnx", dims());
  const Graph& g = m.graph;
  EXPECT_EQ(g.nodes().size(), f.nodes);
  ASSERT_NE(g.loss, kNoTensor);
  std::size_t forward = 0, activations = 0;
  for (const Node& n : g.nodes()) forward += n.is_forward ? 1 : 0;
  for (const Tensor& t : g.tensors()) {
    activations += t.cls == TensorClass::kActivation ? 1 : 0;
    if (!t.initially_resident()) {
      EXPECT_NE(t.producer, kNoNode) << t.name;
    }
  }
  EXPECT_GT(forward, 0u);
  EXPECT_LT(forward, g.nodes().size());  // there is a backward part
  EXPECT_GT(activations, 0u);
}

TEST_P(FixtureTest, BaselinePeakMatchesNaiveScan) {
  const Fixture& f = GetParam();
  Graph g =
      load_model(std::string(MEMPLAN_FIXTURES) + "/" + f.name + ".training.onnx", dims()).graph;
  BaselineMemory m = baseline_memory(g, Liveness(g));
  EXPECT_EQ(m.peak_bytes, naive_peak(g));
  std::uint64_t by_class = 0;
  for (auto b : m.peak_by_class) by_class += b;
  EXPECT_EQ(by_class, m.peak_bytes);
}

// Where the model declares a shape in value_info in terms of batch/seq, our
// inferred shape (after binding) must agree with it.
TEST_P(FixtureTest, InferredShapesAgreeWithDeclaredOnes) {
  const Fixture& f = GetParam();
  LoadedModel m =
      load_model(std::string(MEMPLAN_FIXTURES) + "/" + f.name + ".training.onnx", dims());
  std::size_t compared = 0;
  for (const auto& v : m.proto.graph().value_info()) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) continue;
    std::vector<std::int64_t> declared;
    bool usable = true;
    for (const auto& d : v.type().tensor_type().shape().dim()) {
      if (d.has_dim_value()) {
        declared.push_back(d.dim_value());
      } else if (d.has_dim_param() && m.graph.dims.count(d.dim_param()) != 0) {
        declared.push_back(m.graph.dims.at(d.dim_param()));
      } else {
        usable = false;
      }
    }
    auto id = m.graph.find_tensor(v.name());
    if (!usable || !id) continue;
    EXPECT_EQ(m.graph.tensor(*id).shape, declared) << v.name();
    ++compared;
  }
  EXPECT_GT(compared, 0u);
}

INSTANTIATE_TEST_SUITE_P(Zoo, FixtureTest, ::testing::ValuesIn(kFixtures),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace memplan::ir
