#pragma once
// What the rewrite's tests share: a model loaded as memplan loads it, a
// schedule written step by step, a plan around it, a node by name.
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ir/onnx_loader.h"
#include "onnx/onnx_pb.h"
#include "planner/baseline_plan.h"
#include "planner/plan.h"
#include "support/model_builder.h"

namespace memplan::passes::test_support {

using planner::Step;

struct Loaded {
  onnx::ModelProto proto;
  ir::Graph graph;
};

inline Loaded load(const onnx::ModelProto& model) {
  test::ModelBuilder copy;
  copy.proto() = model;
  ir::LoadedModel m = ir::load_model(copy.write("rewrite_hand"), {});
  return {m.proto, std::move(m.graph)};
}

inline std::vector<Step> steps(const ir::Graph& g,
                               std::initializer_list<std::pair<const char*, const char*>> list) {
  std::vector<Step> out;
  for (const auto& [op_text, name] : list) {
    Step s{*planner::parse_step_op(op_text), 0};
    auto id = s.on_node() ? g.find_node(name) : g.find_tensor(name);
    if (!id) throw std::invalid_argument(name);
    s.id = *id;
    out.push_back(s);
  }
  return out;
}

inline planner::Plan plan_for(const ir::Graph& g, std::vector<Step> schedule) {
  planner::Plan plan;
  plan.model_path = "hand.onnx";
  plan.model_sha256 = std::string(64, 'a');
  plan.node_seconds.assign(g.nodes().size(), 1.0);
  plan.device.name = "test-gpu";
  plan.device.memory_bytes = 1 << 20;
  plan.device.d2h_bytes_per_s = 16;
  plan.device.h2d_bytes_per_s = 32;
  plan.budget_bytes = 1 << 20;
  for (const ir::Tensor& t : g.tensors()) plan.tensor_bytes.push_back(t.bytes);
  plan.decisions.assign(g.tensors().size(), planner::Decision::kKeep);
  plan.solver = {"test", "heuristic", 0, std::nullopt, 0};
  plan.schedule = std::move(schedule);
  planner::fill_predicted(g, plan);
  return plan;
}

inline const onnx::NodeProto& node_named(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& n : m.graph().node())
    if (n.name() == name) return n;
  throw std::invalid_argument("no node " + name);
}

}  // namespace memplan::passes::test_support
