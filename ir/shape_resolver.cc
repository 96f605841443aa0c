#include "ir/shape_resolver.h"

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <string_view>
#include <system_error>
#include <unordered_set>

#include "ir/anchor_doc.h"
#include "ir/shape_folding.h"
#include "ir/training_op_schemas.h"
#include "onnx/shape_inference/implementation.h"
#include "util/errors.h"
#include "util/isolated_call.h"

namespace memplan::ir {
namespace {

bool complete(const onnx::TypeProto& t) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape() || t.tensor_type().elem_type() == 0)
    return false;
  return std::all_of(t.tensor_type().shape().dim().begin(), t.tensor_type().shape().dim().end(),
                     [](const auto& d) { return d.has_dim_value(); });
}

// Each value's type by name, pointing into the graph (and into `made` for
// initializers, whose types come from their dims): what the caller needs,
// without a copy of every TypeProto; the child serializes straight from it.
// Valid while the graph is not changed.
struct TypeIndex {
  std::deque<onnx::TypeProto> made;
  std::unordered_map<std::string_view, const onnx::TypeProto*> by_name;

  const onnx::TypeProto* find(std::string_view name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
  }
};

// An initializer's type is its dims; after that, a declared type is taken
// where nothing complete is known yet (inputs, then value_info, then outputs).
TypeIndex collect(const onnx::GraphProto& g) {
  TypeIndex index;
  index.by_name.reserve(static_cast<std::size_t>(g.initializer_size() + g.input_size() +
                                                 g.value_info_size() + g.output_size()));
  auto put = [&](const onnx::ValueInfoProto& v) {
    if (!v.has_type()) return;
    auto [it, added] = index.by_name.try_emplace(v.name(), &v.type());
    if (!added && !complete(*it->second) && complete(v.type())) it->second = &v.type();
  };
  for (const auto& t : g.initializer()) {
    onnx::TypeProto& type = index.made.emplace_back();
    type.mutable_tensor_type()->set_elem_type(t.data_type());
    auto* shape = type.mutable_tensor_type()->mutable_shape();
    for (auto d : t.dims()) shape->add_dim()->set_dim_value(d);
    index.by_name[t.name()] = &type;
  }
  for (const auto& v : g.input()) put(v);
  for (const auto& v : g.value_info()) put(v);
  for (const auto& v : g.output()) put(v);
  return index;
}

// Runs ONNX inference; returns false (with a warning) when it gave up.
bool infer(onnx::ModelProto& model, const TrainingSchemaRegistry& registry,
           std::vector<std::string>& warnings) {
  try {
    // check_type off, node errors non-fatal, data propagation on so shape
    // computations (Shape -> Gather -> Concat -> Reshape) fold to values.
    onnx::ShapeInferenceOptions options(false, 0, true);
    std::unordered_map<std::string, onnx::TensorShapeProto> shape_data;
    onnx::shape_inference::InferShapes(model, &registry, options, &shape_data);
    return true;
  } catch (const std::exception& e) {
    warnings.push_back(std::string("shape inference stopped: ") + e.what());
    return false;
  }
}

using Types = std::unordered_map<std::string, onnx::TypeProto>;

using ValueInfos = google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>;

// The forward tensor a gradient is named after: ONNX Runtime's gradient
// builder calls X's gradient "X_grad", and the partial gradients it sums
// into it "X_grad_0", "X_grad_1", ...
std::optional<std::string_view> gradient_of(std::string_view name) {
  constexpr std::string_view kSuffix = "_grad";
  const std::size_t digits =
      name.size() - std::min(name.size(), name.find_last_not_of("0123456789") + 1);
  if (digits > 0 && name.size() > digits + 1 && name[name.size() - digits - 1] == '_')
    name.remove_suffix(digits + 1);
  if (name.size() <= kSuffix.size() || !name.ends_with(kSuffix)) return std::nullopt;
  return name.substr(0, name.size() - kSuffix.size());
}

// Gradients without a rule: X_grad is shaped like X. Adds their types to
// `facts` (and `types`); returns whether it typed any output.
bool add_gradient_types(const onnx::ModelProto& model, TypeIndex& types, ValueInfos& facts) {
  bool added = false;
  for (const auto& node : model.graph().node()) {
    for (const std::string& out : node.output()) {
      if (out.empty()) continue;
      const onnx::TypeProto* known = types.find(out);
      if (known != nullptr && complete(*known)) continue;
      const auto forward = gradient_of(out);
      if (!forward) continue;
      const onnx::TypeProto* base = types.find(*forward);
      if (base == nullptr || !complete(*base)) continue;
      auto* v = facts.Add();
      v->set_name(out);
      *v->mutable_type() = *base;
      types.by_name[out] = &v->type();
      added = true;
    }
  }
  return added;
}

// Whether inference typed every output of every node completely.
bool every_output_typed(const onnx::GraphProto& g, const TypeIndex& types) {
  for (const auto& node : g.node())
    for (const std::string& out : node.output()) {
      if (out.empty()) continue;
      const onnx::TypeProto* t = types.find(out);
      if (t == nullptr || !complete(*t)) return false;
    }
  return true;
}

// Drops the declarations of values that folding turned into initializers.
void drop_folded(const onnx::GraphProto& g, ValueInfos& facts) {
  std::unordered_set<std::string_view> folded;
  for (const auto& t : g.initializer()) folded.insert(t.name());
  facts.erase(
      std::remove_if(facts.begin(), facts.end(),
                     [&](const onnx::ValueInfoProto& v) { return folded.count(v.name()) != 0; }),
      facts.end());
}

// An anchored Reshape's output is its input, bit for bit, but ONNX cannot
// see its shape operand (made from a tensor's data). On the working copy it
// becomes Identity, so a rewritten model infers in one pass however long its
// chains of anchored recomputes are.
void see_through_anchors(onnx::GraphProto& g) {
  for (auto& n : *g.mutable_node()) {
    if (n.op_type() != "Reshape" || !n.domain().empty() || n.input_size() != 2 ||
        n.doc_string().rfind(kAnchorDoc, 0) != 0)
      continue;
    n.set_op_type("Identity");
    n.mutable_input()->RemoveLast();
    n.clear_attribute();
  }
}

// Inference, then rounds of constant folding (computed shapes become
// initializers) and gradient naming; the result points into `model`.
TypeIndex infer_types(onnx::ModelProto& model, const TrainingSchemaRegistry& registry,
                      std::vector<std::string>& warnings) {
  // What each round starts from: the declared value_info and the gradient
  // types we add, never what an earlier round inferred. With a computed
  // shape still unknown, ONNX infers partial shapes downstream (a ReduceSum
  // whose axes it cannot see keeps the input's rank) that would contradict
  // the exact ones once folding knows the values.
  see_through_anchors(*model.mutable_graph());
  ValueInfos facts = model.graph().value_info();
  ValueInfos outputs = model.graph().output();  // inference writes into these too
  // Declared value_info can disagree with what inference derives (stale
  // shapes in hand-edited graphs): keep it, but fall back to inference alone.
  if (!infer(model, registry, warnings)) {
    model.mutable_graph()->clear_value_info();
    facts.Clear();
    if (!infer(model, registry, warnings)) {
      for (auto& out : *model.mutable_graph()->mutable_output()) out.clear_type();
      outputs = model.graph().output();
      infer(model, registry, warnings);
    }
  }
  TypeIndex types = collect(model.graph());
  auto reinfer = [&] {
    *model.mutable_graph()->mutable_value_info() = facts;
    *model.mutable_graph()->mutable_output() = outputs;
    infer(model, registry, warnings);
    types = collect(model.graph());
  };
  // Each round may let inference reach further, so repeat while it helps.
  // A chain of blocks whose shapes are each computed from the last block's
  // output (ShuffleNet's channel shuffles) resolves one block a round.
  constexpr int kMaxRounds = 1000;
  for (int round = 0; round < kMaxRounds; ++round) {
    const TypeLookup type_of = [&types](std::string_view name) { return types.find(name); };
    const bool folded = fold_small_constants(*model.mutable_graph(), type_of) > 0;
    if (folded) {
      drop_folded(model.graph(), facts);
      // Folding erased value_info entries `types` points into: index anew.
      types = collect(model.graph());
    }
    const bool named = add_gradient_types(model, types, facts);
    if (!folded && !named) break;
    // Folding gives inference constants it had no need of once every value
    // is typed: another pass would only repeat this one (synth100k: 0.21 s).
    if (!named && every_output_typed(model.graph(), types)) break;
    reinfer();
  }
  return types;
}

Types resolve_in_process(onnx::ModelProto& model, const TrainingSchemaRegistry& registry,
                         std::vector<std::string>& warnings) {
  const TypeIndex index = infer_types(model, registry, warnings);
  Types types;
  types.reserve(index.by_name.size());
  for (const auto& [name, type] : index.by_name) types.emplace(name, *type);
  return types;
}

// What the child sends back: the warnings, then per type its name and its
// TypeProto's bytes, each after a 4-byte length (host byte order: the reader
// is our parent); 0.7 MiB for gpt2_xl. The child serializes straight from
// the TypeIndex, and the parent parses each TypeProto in place in its map:
// value_info of one ModelProto cost both sides a message and a copy of every
// name on top (~25 ms against ~4 ms on gpt2_xl).
void put_length(std::string& out, std::size_t n) {
  const auto n32 = static_cast<std::uint32_t>(n);
  out.append(reinterpret_cast<const char*>(&n32), sizeof n32);
}

std::string encode(const TypeIndex& types, const std::vector<std::string>& warnings) {
  std::string out;
  put_length(out, warnings.size());
  for (const auto& w : warnings) {
    put_length(out, w.size());
    out += w;
  }
  put_length(out, types.by_name.size());
  for (const auto& [name, type] : types.by_name) {
    put_length(out, name.size());
    out += name;
    const std::size_t size = type->ByteSizeLong();
    put_length(out, size);
    const std::size_t at = out.size();
    out.resize(at + size);
    type->SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(out.data() + at));
  }
  return out;
}

// Reads what encode wrote; InputError if it is cut short or garbled, which
// only a bug on our side could cause.
class Decoder {
 public:
  Decoder(const std::string& bytes, const std::string& where) : bytes_(bytes), where_(where) {}

  std::uint32_t length() {
    std::uint32_t n = 0;
    need(sizeof n);
    std::memcpy(&n, bytes_.data() + at_, sizeof n);
    at_ += sizeof n;
    return n;
  }
  std::string_view take(std::size_t n) {
    need(n);
    std::string_view s(bytes_.data() + at_, n);
    at_ += n;
    return s;
  }
  bool done() const { return at_ == bytes_.size(); }
  [[noreturn]] void fail() const {
    throw InputError(where_ + ": ONNX shape inference sent back an unreadable result (" +
                     std::to_string(bytes_.size()) + " bytes)");
  }

 private:
  void need(std::size_t n) const {
    if (bytes_.size() - at_ < n) fail();
  }
  const std::string& bytes_;
  const std::string& where_;
  std::size_t at_ = 0;
};

Types decode(const std::string& bytes, const std::string& where,
             std::vector<std::string>& warnings) {
  Decoder in(bytes, where);
  for (std::uint32_t i = 0, n = in.length(); i < n; ++i)
    warnings.emplace_back(in.take(in.length()));
  Types types;
  const std::uint32_t n = in.length();
  types.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    std::string name(in.take(in.length()));
    std::string_view type = in.take(in.length());
    if (!types[std::move(name)].ParseFromArray(type.data(), static_cast<int>(type.size())))
      in.fail();
  }
  if (!in.done()) in.fail();
  return types;
}

std::string seconds_text(std::chrono::milliseconds t) {
  if (t.count() % 1000 == 0) return std::to_string(t.count() / 1000) + " s";
  return std::to_string(t.count()) + " ms";
}

// One line per way the child can fail; the message names the model first,
// as every InputError does.
[[noreturn]] void throw_for(const util::IsolatedOutcome& outcome, const std::string& where,
                            std::chrono::milliseconds timeout) {
  constexpr const char* kWhy =
      " on this model; it is malformed or uses an operator ONNX 1.12 cannot infer";
  switch (outcome.kind) {
    case util::IsolatedOutcome::Kind::kSignaled:
      if (outcome.signal == SIGKILL)  // what the kernel's OOM killer sends
        throw InputError(where + ": ONNX shape inference was killed (signal " +
                         std::to_string(SIGKILL) + ", SIGKILL), most likely for want of memory");
      throw InputError(where + ": ONNX shape inference crashed (signal " +
                       std::to_string(outcome.signal) + ", " + util::signal_name(outcome.signal) +
                       ")" + kWhy);
    case util::IsolatedOutcome::Kind::kExited:
      // A sanitizer build reports a crash and exits with a status instead.
      throw InputError(where + ": ONNX shape inference ended abnormally (exit status " +
                       std::to_string(outcome.exit_status) + ")" + kWhy);
    case util::IsolatedOutcome::Kind::kTimedOut:
      throw InputError(where + ": ONNX shape inference did not finish within " +
                       seconds_text(timeout) +
                       " and was stopped; the model is too large or makes ONNX 1.12 loop");
    case util::IsolatedOutcome::Kind::kThrew:
      throw InputError(where + ": ONNX shape inference failed: " + outcome.payload);
    case util::IsolatedOutcome::Kind::kOk:
      break;
  }
  throw InputError(where + ": ONNX shape inference: unexpected outcome");
}

}  // namespace

Types resolve_types(onnx::ModelProto& model, const std::string& where,
                    const ShapeInferenceIsolation& isolation, std::vector<std::string>& warnings,
                    const std::function<void()>& meanwhile) {
  bool ran = false;  // a failed isolation falls back in-process: once, all the same
  auto once = [&] {
    if (meanwhile && !ran) meanwhile();
    ran = true;
  };
  // Built here, before any fork, so that children inherit it (and ONNX's own
  // schema registry, which it fills) instead of each building its own.
  static const TrainingSchemaRegistry registry;
  if (!isolation.isolated || util::run_in_process_requested("MEMPLAN_INPROCESS_SHAPES")) {
    Types types = resolve_in_process(model, registry, warnings);
    once();
    return types;
  }

  util::IsolatedOutcome outcome;
  try {
    outcome = util::run_isolated(
        [&] {
          if (isolation.in_child_before_inference) isolation.in_child_before_inference();
          std::vector<std::string> child_warnings;
          return encode(infer_types(model, registry, child_warnings), child_warnings);
        },
        isolation.timeout, once);
  } catch (const std::system_error& e) {
    // No child to be had (process limit, memory) or no way to hear from it:
    // inference still works here, only without the protection.
    warnings.push_back("shape inference ran in-process: the isolated run failed (" +
                       std::string(e.what()) + ")");
    Types types = resolve_in_process(model, registry, warnings);
    once();
    return types;
  }
  if (outcome.kind != util::IsolatedOutcome::Kind::kOk)
    throw_for(outcome, where, isolation.timeout);
  return decode(outcome.payload, where, warnings);
}

}  // namespace memplan::ir
