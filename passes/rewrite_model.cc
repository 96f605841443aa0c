#include "passes/rewrite_model.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "google/protobuf/field_mask.pb.h"
#include "google/protobuf/util/field_mask_util.h"
#include "onnx/defs/schema.h"
#include "passes/dropout_from_mask.h"
#include "passes/fresh_names.h"
#include "passes/node_clone.h"
#include "passes/node_matching.h"
#include "passes/order_anchor.h"
#include "passes/ort_fusions.h"
#include "passes/plan_summary.h"
#include "passes/swap_fold.h"
#include "passes/swap_functions.h"
#include "planner/residency.h"
#include "util/errors.h"

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
  // Refused, not ignored: without the key the rewritten model would keep the
  // state on the device, over the budget the plan was made for. ONNX has no
  // value that starts on the host (a SwapIn reads what a SwapOut node made),
  // and a final SwapOut would be one more output, not the state the next
  // iteration's session reads.
  if (!plan.initial_host.empty()) {
    const ir::TensorId first = plan.initial_host.front();
    throw InvalidPlanError(
        "the plan starts " + std::to_string(plan.initial_host.size()) +
        " tensor(s) on the host (initial_host, first " +
        quote(first < tensors ? graph.tensor(first).name : "#" + std::to_string(first)) +
        "): the rewrite cannot express that in ONNX, whose inputs and initializers start the "
        "run on the device; rewrite a plan without initial_host");
  }
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

// The model with every field but its graph's nodes, which the rewrite
// replaces: copying them only to drop them cost synth100k a tenth of its
// rewrite. The fields are read off the descriptors, so one a newer ONNX adds
// is copied too.
onnx::ModelProto copy_without_nodes(const onnx::ModelProto& model) {
  google::protobuf::FieldMask mask;
  for (int i = 0; i < onnx::ModelProto::descriptor()->field_count(); ++i) {
    const auto* f = onnx::ModelProto::descriptor()->field(i);
    if (f->number() != onnx::ModelProto::kGraphFieldNumber) mask.add_paths(f->name());
  }
  for (int i = 0; i < onnx::GraphProto::descriptor()->field_count(); ++i) {
    const auto* f = onnx::GraphProto::descriptor()->field(i);
    if (f->number() != onnx::GraphProto::kNodeFieldNumber) mask.add_paths("graph." + f->name());
  }
  onnx::ModelProto out;
  google::protobuf::util::FieldMaskUtil::MergeMessageTo(model, mask, {}, &out);
  // Fields newer than this ONNX's schema (a 1.17 model read by 1.12) are
  // unknown to the descriptors: kept as they came.
  out.mutable_unknown_fields()->MergeFrom(model.unknown_fields());
  if (model.has_graph())
    out.mutable_graph()->mutable_unknown_fields()->MergeFrom(model.graph().unknown_fields());
  return out;
}

class Rewriter {
 public:
  Rewriter(const onnx::ModelProto& original, const ir::Graph& graph, const planner::Plan& plan,
           const RewriteOptions& options)
      : original_(original),
        graph_(graph),
        plan_(plan),
        proto_index_(match_nodes(original.graph(), graph)),
        values_(FreshNames::values_of(original.graph())),
        node_names_(FreshNames::nodes_of(original.graph())),
        residency_(graph, plan),
        current_(graph.tensors().size()),
        host_(graph.tensors().size()),
        folded_(graph.tensors().size()),
        anchors_(values_, node_names_, default_opset_version(original)),
        anchor_order_(anchors_.usable() ? options.anchor_order : AnchorOrder::kNone),
        min_anchored_bytes_(options.min_anchored_bytes) {
    for (ir::TensorId t = 0; t < graph.tensors().size(); ++t) current_[t] = graph.tensor(t).name;
    mark_constants();
    in_gemm_sum_ = gemm_sum_nodes(graph_);
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

  onnx::ModelProto finish(const std::function<std::string()>& plan_sha256) {
    onnx::ModelProto out = copy_without_nodes(original_);
    auto* g = out.mutable_graph();
    g->mutable_node()->Swap(&nodes_);
    add_value_info(*g);
    if (summary_.swap_outs > 0) define_swap_function(out, kSwapOutOp);
    if (summary_.swap_ins > 0) define_swap_function(out, kSwapInOp);
    if (uses_ms_domain_) import_domain(out, kMsDomain, 1);
    anchors_.add_initializers(*g);
    PlanSummary summary = summarize_plan(plan_, plan_sha256());
    summary.swap_outs = summary_.swap_outs;
    summary.swap_ins = summary_.swap_ins;
    summary.recomputes = summary_.recomputes;
    summary.anchors = ordered_;
    write_summary(out, summary);
    return out;
  }

 private:
  const onnx::NodeProto& proto_of(ir::NodeId n) const {
    return original_.graph().node(proto_index_[n]);
  }

  // A copy of node n reading the current name of each input; `reloaded`,
  // where given, in place of tensor `instead_of`.
  onnx::NodeProto clone(ir::NodeId n, ir::TensorId instead_of = ir::kNoTensor,
                        const std::string& reloaded = {}) const {
    return clone_reading(proto_of(n), [&](const std::string& name) {
      auto id = graph_.find_tensor(name);
      if (!id) return name;
      return *id == instead_of ? reloaded : current_[*id];
    });
  }

  // With the whole order anchored, a node that does not read the previous
  // one's output waits for it too: ORT would otherwise defer weight-gradient
  // products and shape reads, which the plan issues early.
  void compute(ir::NodeId n) {
    onnx::NodeProto node = clone(n);
    guard_against_skip_layer_norm_fusion(n, node);
    if (anchor_order_ == AnchorOrder::kAll && !ordered_after_safe_anchor(node) &&
        !folded_into_reader(node.op_type()) && !in_gemm_sum_[n])
      anchor(node, false);
    *nodes_.Add() = std::move(node);
    note_anchor(nodes_[nodes_.size() - 1]);
  }

  // ORT (1.19, EXTENDED and ALL) fuses Add -> LayerNormalization into
  // SkipLayerNormalization when the Add's output has no other reader, and the
  // fused CPU kernel does not make the mean and inverse deviation. In the
  // training graph the LayerNormalizationGrad reads that Add output too, so
  // ORT never fuses; once the plan remakes it for the backward, the original
  // has one reader, ORT fuses, and the gradient's read of the mean fails at
  // run time. An anchor of the input on itself (a Reshape between the Add and
  // the normalisation, bit for bit the same) keeps ORT from matching.
  void guard_against_skip_layer_norm_fusion(ir::NodeId n, onnx::NodeProto& node) {
    const ir::Node& ir_node = graph_.node(n);
    const bool layer_norm = ir_node.op_type == "LayerNormalization" ||
                            ir_node.op_type == "SimplifiedLayerNormalization";
    if (!layer_norm || ir_node.inputs.empty() || ir_node.outputs.size() < 2 ||
        node.input_size() == 0 || !anchors_.usable())
      return;
    const ir::TensorId x = ir_node.inputs[0];
    const ir::Tensor& tensor = graph_.tensor(x);
    const bool from_add =
        tensor.producer != ir::kNoNode && graph_.node(tensor.producer).op_type == "Add";
    if (!from_add || plan_.decisions[x] == planner::Decision::kKeep ||
        !OrderAnchor::can_anchor_on(tensor.elem_type, tensor.shape.size()))
      return;
    read_through_anchor(node, 0, node.input(0));
  }

  // Input `slot` of `node` is read through an anchor on `after`.
  void read_through_anchor(onnx::NodeProto& node, int slot, const std::string& after) {
    const std::string& input = node.input(slot);
    std::string anchored = anchors_.anchor(input, after, node.name(), nodes_);
    rename(anchored, *original_of(input));
    node.set_input(slot, anchored);
  }

  // A node that reads the latest node's output already runs after it, and
  // keeps the edge that ORT's fusions match (MatMul then its scale, in a
  // recomputed chain): no anchor.
  static bool reads(const onnx::NodeProto& node, const std::string& value) {
    return std::find(node.input().begin(), node.input().end(), value) != node.input().end();
  }

  // The latest node's first output becomes what the next clone or reload
  // waits for, when a tensor of its type can be an anchor.
  // Not an Identity: ORT removes those at BASIC, and a Slice of the removed
  // node's output went with it in a measured case (resnet_tiny). Not a
  // Shape or Size either: ORT folds them to constants where shapes are
  // static, and the anchor with them (a SwapIn of an accumulation buffer
  // anchored on a bias gradient's Shape ran early on gpt_tiny).
  void note_anchor(const onnx::NodeProto& node) {
    // Only a node that runs after the latest safe anchor (it reads what
    // did, or was anchored on it) orders its readers after it too. A node
    // that merely comes later in the list does not: ORT ran bert_base's
    // weight-gradient products at the end of the backward while the next
    // node of the gradient chain, reading a Sum made after the last
    // accumulator, counted as ordered after that accumulator.
    const bool ordered = last_safe_anchor_.empty() || ordered_after_safe_anchor(node);
    if (ordered)
      for (const auto& o : node.output())
        if (!o.empty()) since_safe_anchor_.insert(o);
    const std::string& op = node.op_type();
    if (node.output_size() == 0 || node.output(0).empty() || op == "Identity" || op == "Shape" ||
        op == "Size")
      return;
    auto t = original_of(node.output(0));
    if (!t) return;
    const ir::Tensor& tensor = graph_.tensor(*t);
    if (tensor.producer != ir::kNoNode && in_gemm_sum_[tensor.producer]) return;
    if (tensor.shape_known && !constant_[*t] &&
        OrderAnchor::can_anchor_on(tensor.elem_type, tensor.shape.size())) {
      last_anchor_ = node.output(0);
      // A node ORT may run before the safe anchor cannot take its place:
      // the nodes anchored on it would no longer wait for the one before.
      if (!fusion_head(node.op_type()) && ordered) {
        last_safe_anchor_ = node.output(0);
        // Anew, not clear(): clear() walks every bucket the largest run
        // since an anchor left behind, once per anchor.
        since_safe_anchor_ =
            std::unordered_set<std::string>(node.output().begin(), node.output().end());
      }
    }
  }

  // A tensor made from initializers alone is folded to a constant by ORT
  // from BASIC on, and an anchor on it with it: swin_tiny's relative
  // position index, issued first, became the anchor every forward node
  // waited for, and ORT ran them before it. The graph's nodes are in
  // topological order.
  void mark_constants() {
    constant_.assign(graph_.tensors().size(), false);
    for (ir::TensorId t = 0; t < graph_.tensors().size(); ++t)
      constant_[t] = graph_.tensor(t).is_initializer;
    for (const ir::Node& n : graph_.nodes()) {
      const bool folded = std::all_of(n.inputs.begin(), n.inputs.end(),
                                      [this](ir::TensorId t) { return constant_[t]; });
      for (ir::TensorId t : n.outputs) constant_[t] = folded;
    }
  }

  bool ordered_after_safe_anchor(const onnx::NodeProto& node) const {
    return std::any_of(node.input().begin(), node.input().end(),
                       [this](const std::string& in) { return since_safe_anchor_.count(in) != 0; });
  }

  // The graph tensor a value of the rewritten model stands for.
  std::optional<ir::TensorId> original_of(const std::string& value) const {
    auto from = renamed_from_.find(value);
    return graph_.find_tensor(from == renamed_from_.end() ? value : from->second);
  }

  std::uint64_t bytes_of(const std::string& value) const {
    auto t = original_of(value);
    return t ? graph_.tensor(*t).bytes : 0;
  }

  // The input an anchor goes on: a computed one, the one whose producer's
  // fusions it breaks least, then the largest. A graph input may be a
  // buffer the node updates in place (a gradient accumulator), and ORT and
  // ONNX would no longer see an initializer as a constant (a Range's
  // bounds, a shape). A remake whose inputs are all such still needs an
  // anchor, or ORT would run or fold it at the start: it takes a graph input
  // first, then an initializer. A plain node is anchored on no input made by
  // a fusion head. -1 when none will do.
  int anchor_slot(const onnx::NodeProto& node, bool remake) const {
    int best = -1;
    std::tuple<int, int, std::uint64_t> best_key{0, 0, 0};
    for (int i = 0; i < node.input_size(); ++i) {
      if (node.input(i).empty()) continue;
      auto t = original_of(node.input(i));
      if (!t) continue;
      const ir::Tensor& tensor = graph_.tensor(*t);
      const int kind = tensor.is_initializer ? 0 : tensor.is_graph_input ? 1 : 2;
      const int kept = kind == 2 ? fusion_kept(graph_, tensor.producer) : 2;
      if (!remake && (kind < 2 || kept < 2)) continue;
      const std::tuple<int, int, std::uint64_t> key{kind, kept, tensor.bytes};
      if (best < 0 || key > best_key) {
        best = i;
        best_key = key;
      }
    }
    return best;
  }

  // Makes `node` wait, inside ONNX Runtime, for the node the plan issues it
  // after: one computed input is read through an anchor.
  void anchor(onnx::NodeProto& node, bool remake) {
    const std::string& after = remake ? last_anchor_ : last_safe_anchor_;
    if (anchor_order_ == AnchorOrder::kNone || after.empty()) return;
    const int i = anchor_slot(node, remake);
    if (i < 0 || (!remake && bytes_of(node.input(i)) < min_anchored_bytes_)) return;
    read_through_anchor(node, i, after);
    if (after == last_safe_anchor_) since_safe_anchor_.insert(node.input(i));
    ++ordered_;
  }

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
    std::vector<RemakeNode> remade = remake(n);
    for (RemakeNode& made : remade) {
      onnx::NodeProto& node = made.node;
      node.set_name(node_names_.take(name, made.name_suffix));
      node.set_doc_string(std::string(kRecomputeDoc) + name);
      for (auto& out : *node.mutable_output()) {
        const auto t = out.empty() ? std::nullopt : graph_.find_tensor(out);
        if (!t) continue;  // absent, or a value between the nodes of a remake (fresh already)
        std::string fresh = values_.take(out, "_recompute");
        rename(fresh, *t);
        // An output still resident keeps its readers: the plan says that
        // copy lives on. The clone's duplicate of it is unread (dropped
        // below where the op allows).
        if (!residency_.resident(*t)) current_[*t] = fresh;
        out = std::move(fresh);
      }
      if (&made == &remade.front() && !reads(node, last_anchor_)) anchor(node, true);
      clones_.emplace_back(nodes_.size(), n);
      *nodes_.Add() = std::move(node);
    }
    note_anchor(nodes_[nodes_.size() - 1]);
    ++summary_.recomputes;
  }

  // A value ORT never makes is swapped as the input it is made from, where
  // that is still resident, and made again after the reload (swap_fold.h).
  void swap_out(ir::TensorId t) {
    const std::string& name = graph_.tensor(t).name;
    folded_[t] = swap_fold(graph_, t, constant_);
    if (folded_[t] && !residency_.resident(folded_[t]->input)) folded_[t].reset();
    const ir::TensorId copied = folded_[t] ? folded_[t]->input : t;
    host_[t] = values_.take(name, "_host");
    rename(host_[t], copied);
    *nodes_.Add() =
        make_swap_node(kSwapOutOp, node_names_.take(name, "_SwapOut"), current_[copied], host_[t]);
    ++summary_.swap_outs;
  }

  void swap_in(ir::TensorId t) {
    const std::string& name = graph_.tensor(t).name;
    const std::optional<SwapFold>& fold = folded_[t];
    std::string fresh = values_.take(name, fold ? "_swapin_unfolded" : "_swapin");
    rename(fresh, fold ? fold->input : t);
    onnx::NodeProto node =
        make_swap_node(kSwapInOp, node_names_.take(name, "_SwapIn"), host_[t], fresh);
    anchor(node, true);
    if (fold) {
      // What the redone op reads once ORT has inlined the SwapIn: its
      // anchored input. Both get a declared rank (add_value_info).
      ranked_.emplace_back(node.input(0), fold->input);
      ranked_.emplace_back(fresh, fold->input);
    }
    *nodes_.Add() = std::move(node);
    if (fold) fresh = refold(*fold, fresh, t);
    current_[t] = std::move(fresh);
    ++summary_.swap_ins;
  }

  // The op of `fold` again, on the reloaded input; returns its output's
  // name. Not an anchor for what follows: a token's Slice would be one more
  // reader of the scale, which ORT then no longer folds.
  std::string refold(const SwapFold& fold, const std::string& reloaded, ir::TensorId t) {
    onnx::NodeProto node = clone(fold.op, fold.input, reloaded);
    node.set_name(node_names_.take(graph_.node(fold.op).name, "_refold"));
    node.set_doc_string(std::string(kRefoldDoc) + graph_.node(fold.op).name);
    std::string out = values_.take(graph_.tensor(t).name, "_swapin");
    rename(out, t);
    node.set_output(0, out);
    *nodes_.Add() = std::move(node);
    return out;
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
  // So does a clone that reads just what its original reads (no anchor, no
  // remade input): ORT's common-subexpression elimination (BASIC on) merges
  // the two, and with fewer outputs on one side it refused the model
  // ("Argument type mismatch when adding edge": bert_base, recompute-greedy
  // at 75 %, --anchors none).
  void drop_unread_optional_outputs() {
    const int version = default_opset_version(original_);
    if (clones_.empty() || version == 0) return;
    std::unordered_set<std::string> reads;
    collect_reads(nodes_, reads);
    for (const auto& v : original_.graph().output()) reads.insert(v.name());
    for (const auto& [at, original] : clones_) {
      onnx::NodeProto& node = *nodes_.Mutable(static_cast<int>(at));
      if (!node.domain().empty() && node.domain() != "ai.onnx") continue;
      if (std::equal(node.input().begin(), node.input().end(), proto_of(original).input().begin(),
                     proto_of(original).input().end()))
        continue;
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

  // value_info with the element type and rank (dims left open) of each
  // reloaded value an op is made again on (swap_fold.h), in the order made.
  // ORT infers no shape through an anchor's computed Reshape, and folds no
  // scale into a MatMul whose unscaled input has no known rank
  // (MatMulScaleFusion: swin_tiny). Not on every added value: there a
  // declared rank changed how ORT fused and planned the step (convnext_tiny
  // at its floor: 26 against 22 MiB). Not the original's static shape:
  // with it ORT drops an anchor's Reshape as a no-op, and the reload with it
  // (gpt_tiny's embedding, never run from BASIC on).
  void add_value_info(onnx::GraphProto& g) const {
    for (const auto& [name, t] : ranked_) {
      const ir::Tensor& tensor = graph_.tensor(t);
      if (!tensor.shape_known || tensor.elem_type == 0) continue;
      auto* type = g.add_value_info();
      type->set_name(name);
      auto* tensor_type = type->mutable_type()->mutable_tensor_type();
      tensor_type->set_elem_type(tensor.elem_type);
      auto* shape = tensor_type->mutable_shape();
      for (std::size_t d = 0; d < tensor.shape.size(); ++d) shape->add_dim();
    }
  }

  // `fresh`, a value the rewrite adds, stands for graph tensor `t`.
  void rename(const std::string& fresh, ir::TensorId t) {
    renamed_from_.emplace(fresh, graph_.tensor(t).name);
  }

  const onnx::ModelProto& original_;
  const ir::Graph& graph_;
  const planner::Plan& plan_;
  std::vector<int> proto_index_;
  FreshNames values_;
  FreshNames node_names_;
  planner::Residency residency_;
  std::vector<std::string> current_;             // by TensorId: the name its readers read now
  std::vector<std::string> host_;                // by TensorId: its host copy's name
  std::vector<std::optional<SwapFold>> folded_;  // by TensorId: swapped as its input
  std::unordered_map<std::string, std::string> renamed_from_;  // new name -> original tensor
  // Values given a declared rank, and the graph tensor each stands for.
  std::vector<std::pair<std::string, ir::TensorId>> ranked_;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes_;
  // Recompute clones: their index in nodes_, and the node each remakes.
  std::vector<std::pair<std::size_t, ir::NodeId>> clones_;
  OrderAnchor anchors_;
  AnchorOrder anchor_order_;
  std::uint64_t min_anchored_bytes_;
  std::string last_anchor_;  // the output the next clone or reload is ordered after
  // With the whole order anchored, what the next plain node is ordered after:
  // the latest output of an op no fusion starts from, and what was made since.
  std::string last_safe_anchor_;
  std::unordered_set<std::string> since_safe_anchor_;
  std::vector<bool> constant_;     // by TensorId: made from initializers alone
  std::vector<bool> in_gemm_sum_;  // by NodeId: a Gemm ORT folds a Sum into, or between
  std::size_t ordered_ = 0;        // nodes anchored for order (the fusion guards aside)
  bool uses_ms_domain_ = false;    // a dropout was remade from its mask
  PlanSummary summary_;            // step counts only
};

}  // namespace

onnx::ModelProto rewrite_model(const onnx::ModelProto& original, const ir::Graph& graph,
                               const planner::Plan& plan, const RewriteOptions& options) {
  check_plan_matches(graph, plan, options);
  Rewriter rewriter(original, graph, plan, options);
  rewriter.run();
  const auto plan_sha256 = [&] {
    if (!options.plan_sha256.empty()) return options.plan_sha256;
    return options.plan_sha256_later ? options.plan_sha256_later() : plan_file_sha256(graph, plan);
  };
  return rewriter.finish(plan_sha256);
}

}  // namespace memplan::passes
