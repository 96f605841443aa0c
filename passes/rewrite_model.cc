#include "passes/rewrite_model.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/errors.h"
#include "onnx/defs/schema.h"
#include "passes/dropout_from_mask.h"
#include "passes/fresh_names.h"
#include "passes/node_clone.h"
#include "passes/node_matching.h"
#include "passes/plan_summary.h"
#include "passes/swap_functions.h"
#include "planner/residency.h"

namespace memplan::passes {
namespace {

using planner::StepOp;

std::string quote(const std::string& s) { return "'" + s + "'"; }

// A plan made for another model is told apart before any step is read: its
// sizes or its sha256 differ (node names were checked when it was parsed).
void check_plan_matches(const ir::Graph& graph, const planner::Plan& plan,
                        const RewriteOptions& options) {
  const std::size_t nodes = graph.nodes().size();
  const std::size_t tensors = graph.tensors().size();
  if (plan.node_seconds.size() != nodes || plan.tensor_bytes.size() != tensors ||
      plan.decisions.size() != tensors)
    throw InvalidPlanError("the plan has " + std::to_string(plan.node_seconds.size()) +
                           " nodes and " + std::to_string(plan.tensor_bytes.size()) +
                           " tensors, the model " + std::to_string(nodes) + " and " +
                           std::to_string(tensors) + ": the plan was made for another model");
  if (!options.model_sha256.empty() && plan.model_sha256 != options.model_sha256)
    throw InvalidPlanError("the plan's model.sha256 " + plan.model_sha256 +
                           " is not the model's (" + options.model_sha256 +
                           "): the plan was made for another model file");
  if (std::string why = planner::alias_problem(graph, plan); !why.empty())
    throw InvalidPlanError("the plan's alias_of is broken: " + why);
}

constexpr std::string_view kMsDomain = "com.microsoft";

void import_domain(onnx::ModelProto& model, std::string_view domain, std::int64_t version) {
  for (const auto& o : model.opset_import())
    if (o.domain() == domain) return;
  auto* o = model.add_opset_import();
  o->set_domain(std::string(domain));
  o->set_version(version);
}

// The version of the default ONNX domain, for schema look-ups.
int default_opset_version(const onnx::ModelProto& model) {
  for (const auto& op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") return static_cast<int>(op.version());
  return 0;
}

class Rewriter {
 public:
  Rewriter(const onnx::ModelProto& original, const ir::Graph& graph, const planner::Plan& plan)
      : original_(original),
        graph_(graph),
        plan_(plan),
        proto_index_(match_nodes(original.graph(), graph)),
        values_(FreshNames::values_of(original.graph())),
        node_names_(FreshNames::nodes_of(original.graph())),
        residency_(graph, plan),
        current_(graph.tensors().size()),
        host_(graph.tensors().size()) {
    for (ir::TensorId t = 0; t < graph.tensors().size(); ++t) current_[t] = graph.tensor(t).name;
    // Loader-made names of unnamed nodes are taken too, so that a clone's
    // name never equals another node's name as memplan reports it.
    for (const auto& n : graph.nodes()) node_names_.reserve(n.name);
  }

  void run() {
    for (std::size_t i = 0; i < plan_.schedule.size(); ++i) {
      const planner::Step& step = plan_.schedule[i];
      if (std::string why = residency_.check(step); !why.empty())
        throw InvalidPlanError("plan step " + std::to_string(i) + " (" +
                               std::string(planner::to_string(step.op)) + "): " + why);
      switch (step.op) {
        case StepOp::kCompute:
          compute(step.id);
          break;
        case StepOp::kRecompute:
          recompute(step.id);
          break;
        case StepOp::kSwapOut:
          swap_out(step.id);
          break;
        case StepOp::kSwapIn:
          swap_in(step.id);
          break;
        case StepOp::kFree:
          break;  // a value's life ends at its last reader
      }
      residency_.apply(step);
    }
    for (ir::NodeId n = 0; n < graph_.nodes().size(); ++n)
      if (!residency_.computed(n))
        throw InvalidPlanError("node " + quote(graph_.node(n).name) + " has no compute step");
    drop_unread_optional_outputs();
  }

  onnx::ModelProto finish(const RewriteOptions& options, const std::string& plan_sha256) {
    onnx::ModelProto out = original_;
    auto* g = out.mutable_graph();
    g->mutable_node()->Swap(&nodes_);
    if (options.copy_value_info) add_value_info(*g);
    if (summary_.swap_outs > 0) define_swap_function(out, kSwapOutOp);
    if (summary_.swap_ins > 0) define_swap_function(out, kSwapInOp);
    if (uses_ms_domain_) import_domain(out, kMsDomain, 1);
    PlanSummary summary = summarize_plan(plan_, plan_sha256);
    summary.swap_outs = summary_.swap_outs;
    summary.swap_ins = summary_.swap_ins;
    summary.recomputes = summary_.recomputes;
    write_summary(out, summary);
    return out;
  }

 private:
  const onnx::NodeProto& proto_of(ir::NodeId n) const {
    return original_.graph().node(proto_index_[n]);
  }

  onnx::NodeProto clone(ir::NodeId n) const {
    return clone_reading(proto_of(n), [this](const std::string& name) {
      auto id = graph_.find_tensor(name);
      return id ? current_[*id] : name;
    });
  }

  void compute(ir::NodeId n) { *nodes_.Add() = clone(n); }

  // The nodes that remake node n: a copy of it, or for a dropout the ONNX
  // Runtime ops that give its output back from the kept mask.
  std::vector<RemakeNode> remake(ir::NodeId n) {
    const ir::TensorId mask = graph_.node(n).dropout_mask();
    if (mask == ir::kNoTensor) return {{"_recompute", clone(n)}};
    uses_ms_domain_ = true;
    return dropout_from_mask(clone(n), current_[mask], values_);
  }

  void recompute(ir::NodeId n) {
    const std::string& name = graph_.node(n).name;
    for (RemakeNode& made : remake(n)) {
      onnx::NodeProto& node = made.node;
      node.set_name(node_names_.take(name, made.name_suffix));
      node.set_doc_string(std::string(kRecomputeDoc) + name);
      for (auto& out : *node.mutable_output()) {
        const auto t = out.empty() ? std::nullopt : graph_.find_tensor(out);
        if (!t) continue;  // absent, or a value between the nodes of a remake (fresh already)
        std::string fresh = values_.take(out, "_recompute");
        renamed_from_.emplace(fresh, out);
        // An output still resident keeps its readers: the plan says that
        // copy lives on. The clone's duplicate of it is unread (dropped
        // below where the op allows).
        if (!residency_.resident(*t)) current_[*t] = fresh;
        out = std::move(fresh);
      }
      clones_.push_back(nodes_.size());
      *nodes_.Add() = std::move(node);
    }
    ++summary_.recomputes;
  }

  void swap_out(ir::TensorId t) {
    const std::string& name = graph_.tensor(t).name;
    host_[t] = values_.take(name, "_host");
    renamed_from_.emplace(host_[t], name);
    *nodes_.Add() =
        make_swap_node(kSwapOutOp, node_names_.take(name, "_SwapOut"), current_[t], host_[t]);
    ++summary_.swap_outs;
  }

  void swap_in(ir::TensorId t) {
    const std::string& name = graph_.tensor(t).name;
    std::string fresh = values_.take(name, "_swapin");
    renamed_from_.emplace(fresh, name);
    *nodes_.Add() = make_swap_node(kSwapInOp, node_names_.take(name, "_SwapIn"), host_[t], fresh);
    current_[t] = std::move(fresh);
    ++summary_.swap_ins;
  }

  // Names read anywhere: node inputs (subgraphs included: a superset of
  // their outer reads is enough here).
  static void collect_reads(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                            std::unordered_set<std::string>& reads) {
    for (const auto& n : nodes) {
      for (const auto& in : n.input()) reads.insert(in);
      for (const auto& a : n.attribute()) {
        std::vector<const onnx::GraphProto*> subs;
        if (a.has_g()) subs.push_back(&a.g());
        for (const auto& sub : a.graphs()) subs.push_back(&sub);
        for (const auto* sub : subs) {
          collect_reads(sub->node(), reads);
          for (const auto& v : sub->output()) reads.insert(v.name());
        }
      }
    }
  }

  // A clone must make every output its op requires, read or not; an output
  // the op's ONNX schema calls optional and nothing reads is left out, so it
  // costs no memory (LayerNormalization's Mean and InvStdDev, say). Ops of
  // other domains keep all outputs: their schemas are not ONNX's to tell.
  void drop_unread_optional_outputs() {
    const int version = default_opset_version(original_);
    if (clones_.empty() || version == 0) return;
    std::unordered_set<std::string> reads;
    collect_reads(nodes_, reads);
    for (const auto& v : original_.graph().output()) reads.insert(v.name());
    for (std::size_t at : clones_) {
      onnx::NodeProto& node = *nodes_.Mutable(static_cast<int>(at));
      if (!node.domain().empty() && node.domain() != "ai.onnx") continue;
      const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), version, "");
      if (schema == nullptr) continue;
      const auto& formal = schema->outputs();
      for (int i = 0; i < node.output_size(); ++i) {
        if (static_cast<std::size_t>(i) >= formal.size()) break;
        if (formal[i].GetOption() != onnx::OpSchema::FormalParameterOption::Optional) continue;
        if (!node.output(i).empty() && reads.count(node.output(i)) == 0) {
          renamed_from_.erase(node.output(i));
          node.set_output(i, "");
        }
      }
    }
  }

  // value_info for every new name whose original has a declared type, in
  // node order so the bytes do not depend on hashing.
  void add_value_info(onnx::GraphProto& g) const {
    std::unordered_map<std::string, const onnx::TypeProto*> types;
    const auto& og = original_.graph();
    for (const auto* list : {&og.input(), &og.value_info(), &og.output()})
      for (const auto& v : *list)
        if (v.has_type()) types.emplace(v.name(), &v.type());
    for (const auto& n : nodes_)
      for (const auto& out : n.output()) {
        auto from = renamed_from_.find(out);
        if (from == renamed_from_.end()) continue;
        auto type = types.find(from->second);
        if (type == types.end()) continue;
        auto* v = g.add_value_info();
        v->set_name(out);
        *v->mutable_type() = *type->second;
      }
  }

  const onnx::ModelProto& original_;
  const ir::Graph& graph_;
  const planner::Plan& plan_;
  std::vector<int> proto_index_;
  FreshNames values_;
  FreshNames node_names_;
  planner::Residency residency_;
  std::vector<std::string> current_;  // by TensorId: the name its readers read now
  std::vector<std::string> host_;     // by TensorId: its host copy's name
  std::unordered_map<std::string, std::string> renamed_from_;  // new name -> original tensor
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes_;
  std::vector<std::size_t> clones_;  // indices of recompute clones in nodes_
  bool uses_ms_domain_ = false;      // a dropout was remade from its mask
  PlanSummary summary_;              // step counts only
};

}  // namespace

onnx::ModelProto rewrite_model(const onnx::ModelProto& original, const ir::Graph& graph,
                               const planner::Plan& plan, const RewriteOptions& options) {
  check_plan_matches(graph, plan, options);
  Rewriter rewriter(original, graph, plan);
  rewriter.run();
  return rewriter.finish(
      options, options.plan_sha256.empty() ? plan_file_sha256(graph, plan) : options.plan_sha256);
}

}  // namespace memplan::passes
