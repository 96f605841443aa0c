#include "ir/adamw_steps.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ir/baseline_memory.h"
#include "ir/liveness.h"
#include "ir/onnx_loader.h"
#include "ir/ort_artifacts.h"
#include "ir/roofline.h"
#include "support/model_builder.h"
#include "util/errors.h"

namespace memplan::ir {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = MEMPLAN_FIXTURES;
const std::string kMlp = kFixtures + "/mlp.training.onnx";
const std::string kMlpOptimizer = kFixtures + "/mlp.optimizer.onnx";

LoadOptions batch(std::int64_t b) {
  LoadOptions o;
  o.dims["batch"] = b;
  return o;
}

// Parameters with a gradient buffer, as ONNX Runtime's training API pairs
// them with the optimizer's sequences.
std::vector<TensorId> trainable(const Graph& g) {
  std::vector<TensorId> out;
  for (TensorId t : g.graph_inputs())
    if (g.find_tensor(g.tensor(t).name + std::string(kGradBufferSuffix))) out.push_back(t);
  return out;
}

const Tensor& named(const Graph& g, const std::string& name) {
  auto id = g.find_tensor(name);
  EXPECT_TRUE(id.has_value()) << name;
  return g.tensor(id.value_or(0));
}

TEST(AdamWSteps, OneInPlaceStepPerTrainableParameter) {
  LoadedModel m = load_model(kMlp, kMlpOptimizer, batch(8));
  const Graph& g = m.graph;
  const std::vector<TensorId> params = trainable(g);
  ASSERT_EQ(params.size(), 6u);  // 3 Gemms: weight and bias each
  ASSERT_TRUE(m.optimizer.has_value());
  EXPECT_EQ(m.optimizer->steps, params.size());
  EXPECT_EQ(m.optimizer->path, kMlpOptimizer);
  EXPECT_EQ(m.optimizer->sha256.size(), 64u);
  for (TensorId p : params) {
    const std::string& name = g.tensor(p).name;
    auto step = g.find_node(std::string(kAdamWStepOp) + "/" + name);
    ASSERT_TRUE(step) << name;
    const Node& n = g.node(*step);
    EXPECT_TRUE(is_adamw_step(n));
    EXPECT_FALSE(n.is_forward) << name;
    ASSERT_GE(n.inputs.size(), 7u);
    EXPECT_EQ(n.inputs[0], p);
    EXPECT_EQ(g.tensor(n.inputs[1]).name, name + std::string(kGradBufferSuffix));
    // After the accumulator that fills the buffer: topological order.
    const Tensor& accumulated = named(g, name + "_grad.accumulation.out");
    EXPECT_EQ(n.inputs[6], *g.find_tensor(accumulated.name));
    EXPECT_LT(accumulated.producer, *step);
    ASSERT_EQ(n.outputs.size(), 1u);
    EXPECT_TRUE(g.tensor(n.outputs[0]).is_graph_output);
    EXPECT_EQ(g.tensor(n.outputs[0]).bytes, 1u);  // the flag: no copy of p, m or v
  }
}

TEST(AdamWSteps, ClassesAndTwoMomentsPerParameter) {
  LoadedModel m = load_model(kMlp, kMlpOptimizer, batch(8));
  const Graph& g = m.graph;
  std::uint64_t param_bytes = 0, moment_bytes = 0;
  for (TensorId p : trainable(g)) {
    const Tensor& t = g.tensor(p);
    EXPECT_EQ(t.cls, TensorClass::kParameter) << t.name;
    EXPECT_EQ(named(g, t.name + std::string(kGradBufferSuffix)).cls, TensorClass::kGradient);
    for (auto suffix : {kFirstMomentSuffix, kSecondMomentSuffix}) {
      const Tensor& moment = named(g, t.name + std::string(suffix));
      EXPECT_EQ(moment.cls, TensorClass::kOptimizerState) << moment.name;
      EXPECT_TRUE(moment.is_graph_input);
      EXPECT_EQ(moment.shape, t.shape);
      EXPECT_EQ(moment.elem_type, t.elem_type);
      moment_bytes += moment.bytes;
    }
    param_bytes += t.bytes;
  }
  EXPECT_EQ(param_bytes, 535'818u * 4);  // the fixture's README
  EXPECT_EQ(moment_bytes, 2 * param_bytes);
  // Besides the moments: learning rate (float), step (int64) and the
  // accumulators' reset flag (bool) are the optimizer's state.
  std::uint64_t state = 0;
  for (const Tensor& t : g.tensors())
    if (t.cls == TensorClass::kOptimizerState) state += t.bytes;
  EXPECT_EQ(state, moment_bytes + 4 + 8 + 1);
  EXPECT_EQ(named(g, "learning_rate").cls, TensorClass::kOptimizerState);
  EXPECT_EQ(named(g, "step").cls, TensorClass::kOptimizerState);
}

TEST(AdamWSteps, TrainingGraphAloneHasNoOptimizerState) {
  LoadedModel m = load_model(kMlp, batch(8));
  EXPECT_FALSE(m.optimizer.has_value());
  for (const Tensor& t : m.graph.tensors())
    if (t.cls == TensorClass::kOptimizerState) {
      EXPECT_LE(t.bytes, 1u) << t.name;
    }
}

TEST(AdamWSteps, RooflineReadsFourAndWritesThree) {
  LoadedModel m = load_model(kMlp, kMlpOptimizer, batch(8));
  const Graph& g = m.graph;
  const TensorId p = trainable(g).front();
  const Node& n = g.node(*g.find_node(std::string(kAdamWStepOp) + "/" + g.tensor(p).name));
  // p, g, m, v read and p, m, v written; learning rate 4, step 8, the
  // accumulator's flag 1 and its own flag 1.
  EXPECT_DOUBLE_EQ(node_bytes_moved(g, n), 7.0 * static_cast<double>(g.tensor(p).bytes) + 14);
  EXPECT_DOUBLE_EQ(node_flops(g, n), 0.0);
}

TEST(AdamWSteps, BaselineHoldsTheMomentsThroughout) {
  const Graph alone = load_model(kMlp, batch(8)).graph;
  const Graph merged = load_model(kMlp, kMlpOptimizer, batch(8)).graph;
  const auto before = baseline_memory(alone, Liveness(alone)).peak_bytes;
  const auto after = baseline_memory(merged, Liveness(merged)).peak_bytes;
  std::uint64_t moments = 0;
  for (const Tensor& t : merged.tensors())
    if (t.cls == TensorClass::kOptimizerState && t.bytes > 8) moments += t.bytes;
  // Moments, learning rate and step from the start, and at most the six
  // steps' flags on top.
  EXPECT_GE(after, before + moments + 12);
  EXPECT_LE(after, before + moments + 12 + 6);
}

TEST(AdamWSteps, RefusesAnotherOptimizer) {
  // The training graph itself is no AdamW optimizer model.
  try {
    load_model(kMlp, kMlp, batch(8));
    FAIL() << "accepted a training graph as the optimizer";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not ONNX Runtime's AdamW"), std::string::npos)
        << e.what();
  }
}

TEST(AdamWSteps, RefusesAGraphWithoutTrainableParameters) {
  test::ModelBuilder b;
  b.input("x", {std::int64_t{4}});
  test::set_int_attr(b.node("ReduceSum", {"x"}, {"loss"}, "sum"), "keepdims", 0);
  b.output("loss");
  const std::string path = b.write("untrainable");
  EXPECT_THROW(load_model(path, kMlpOptimizer, {}), InputError);
}

TEST(AdamWSteps, RefusesANameTheStepsNeed) {
  test::ModelBuilder b;
  b.input("w", {std::int64_t{4}}).input("w_grad.accumulation.buffer", {std::int64_t{4}});
  b.input("learning_rate", {std::int64_t{1}});
  test::set_int_attr(b.node("ReduceSum", {"w"}, {"loss"}, "sum"), "keepdims", 0);
  b.output("loss");
  try {
    load_model(b.write("clash"), kMlpOptimizer, {});
    FAIL() << "accepted a second 'learning_rate'";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'learning_rate'"), std::string::npos) << e.what();
  }
}

// An artifacts folder made of the committed files, as generate_artifacts
// names them.
std::string artifacts_folder(const std::string& stem, bool with_optimizer) {
  const std::string dir = test::temp_path(stem);
  fs::create_directories(dir);
  fs::copy_file(kMlp, dir + "/" + kTrainingModelFile);
  if (with_optimizer) fs::copy_file(kMlpOptimizer, dir + "/" + kOptimizerModelFile);
  return dir;
}

TEST(OrtArtifacts, FolderNamesBothModels) {
  const std::string dir = artifacts_folder("artifacts_both", true);
  std::vector<std::string> warnings;
  ModelSources s = model_sources(dir, "", warnings);
  EXPECT_TRUE(s.folder);
  EXPECT_EQ(s.training, dir + "/" + kTrainingModelFile);
  EXPECT_EQ(s.optimizer, dir + "/" + kOptimizerModelFile);
  EXPECT_TRUE(warnings.empty());
  LoadedModel m = load_sources(s, batch(8));
  EXPECT_EQ(m.path, s.training);
  ASSERT_TRUE(m.optimizer);
  EXPECT_EQ(m.optimizer->steps, 6u);
  EXPECT_THROW(model_sources(dir, kMlpOptimizer, warnings), UsageError);
}

TEST(OrtArtifacts, AFileIsTakenAsGiven) {
  std::vector<std::string> warnings;
  ModelSources s = model_sources(kMlp, "", warnings);
  EXPECT_FALSE(s.folder);
  EXPECT_EQ(s.training, kMlp);
  // No sibling is looked for: the optimizer is named or absent.
  EXPECT_TRUE(s.optimizer.empty());
  EXPECT_EQ(model_sources(kMlp, kMlpOptimizer, warnings).optimizer, kMlpOptimizer);
  EXPECT_TRUE(warnings.empty());
}

TEST(OrtArtifacts, FolderWithoutOptimizerWarns) {
  const std::string dir = artifacts_folder("artifacts_training_only", false);
  std::vector<std::string> warnings;
  ModelSources s = model_sources(dir, "", warnings);
  EXPECT_TRUE(s.optimizer.empty());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(kOptimizerModelFile), std::string::npos);
}

TEST(OrtArtifacts, FolderWithoutTrainingModelIsRefused) {
  const std::string dir = test::temp_path("artifacts_empty");
  fs::create_directories(dir);
  std::vector<std::string> warnings;
  try {
    model_sources(dir, "", warnings);
    FAIL() << "accepted an empty folder";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no training_model.onnx"), std::string::npos) << e.what();
  }
}

// Every PyTorch-exported zoo graph with the optimizer model that
// generate_artifacts wrote beside it (zoo.json names the pair, the dims and
// the count of trainable parameters).
TEST(AdamWSteps, EveryTorchZooPair) {
  const std::string dir = kFixtures + "/torch/";
  std::ifstream in(dir + "zoo.json");
  const auto zoo = nlohmann::json::parse(in);
  int pairs = 0;
  for (const auto& [file, entry] : zoo.at("fixtures").items()) {
    if (!entry.contains("optimizer") || !entry["optimizer"].is_string() ||
        file.find(".opset15.") == std::string::npos)
      continue;
    LoadOptions o;
    for (const auto& [dim, value] : entry["dims"].items()) o.dims[dim] = value.get<std::int64_t>();
    LoadedModel m = load_model(dir + file, dir + entry["optimizer"].get<std::string>(), o);
    ASSERT_TRUE(m.optimizer) << file;
    EXPECT_EQ(m.optimizer->steps, entry["trainable_params"].get<std::size_t>()) << file;
    std::uint64_t params = 0, moments = 0;
    for (TensorId p : trainable(m.graph)) {
      params += m.graph.tensor(p).bytes;
      for (auto suffix : {kFirstMomentSuffix, kSecondMomentSuffix})
        moments += named(m.graph, m.graph.tensor(p).name + std::string(suffix)).bytes;
    }
    EXPECT_EQ(moments, 2 * params) << file;
    ++pairs;
  }
  EXPECT_EQ(pairs, 14);
}

}  // namespace
}  // namespace memplan::ir
