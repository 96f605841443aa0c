#include "ir/onnx_loader.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <boost/graph/topological_sort.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "ir/adamw_steps.h"
#include "ir/classify.h"
#include "ir/dim_binding.h"
#include "ir/dtype.h"
#include "ir/shape_resolver.h"
#include "util/errors.h"
#include "util/sha256.h"

namespace memplan::ir {
namespace {

// Newest default-domain opset that Debian's ONNX 1.12 has schemas for.
constexpr int64_t kKnownOpset = 17;

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path + ": no such file");
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path + ": is a directory, not a model file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot be read");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty()) throw InputError(path + ": empty file");
  return bytes;
}

// Names a subgraph reads from enclosing scopes (If/Loop/Scan bodies).
void outer_names(const onnx::GraphProto& g, std::set<std::string>& used) {
  std::set<std::string> defined;
  for (const auto& v : g.input()) defined.insert(v.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) defined.insert(o);
  std::set<std::string> reads;
  for (const auto& n : g.node()) {
    for (const auto& i : n.input())
      if (!i.empty()) reads.insert(i);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) outer_names(a.g(), reads);
      for (const auto& sub : a.graphs()) outer_names(sub, reads);
    }
  }
  for (const auto& r : reads)
    if (defined.count(r) == 0) used.insert(r);
}

Attributes read_attributes(const onnx::NodeProto& n) {
  Attributes attrs;
  for (const auto& a : n.attribute()) {
    switch (a.type()) {
      case onnx::AttributeProto::INT:
        attrs.ints[a.name()] = {a.i()};
        break;
      case onnx::AttributeProto::INTS:
        attrs.ints[a.name()] = {a.ints().begin(), a.ints().end()};
        break;
      case onnx::AttributeProto::FLOAT:
        attrs.floats[a.name()] = {a.f()};
        break;
      case onnx::AttributeProto::FLOATS:
        attrs.floats[a.name()] = {a.floats().begin(), a.floats().end()};
        break;
      case onnx::AttributeProto::STRING:
        attrs.strings[a.name()] = a.s();
        break;
      default:
        break;
    }
  }
  return attrs;
}

// Node order: the model's when it is topological (ONNX requires it), else a
// topological order, and a clear error on a cycle.
std::vector<int> node_order(const onnx::GraphProto& g, const std::vector<std::vector<int>>& preds,
                            const std::vector<std::string>& names, const std::string& where,
                            std::vector<std::string>& warnings) {
  const int n = g.node_size();
  bool in_order = true;
  for (int v = 0; v < n && in_order; ++v)
    for (int p : preds[v]) in_order = in_order && p < v;
  std::vector<int> order(n);
  for (int v = 0; v < n; ++v) order[v] = v;
  if (in_order) return order;

  using BGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  BGraph bg(n);
  for (int v = 0; v < n; ++v)
    for (int p : preds[v]) boost::add_edge(p, v, bg);

  struct CycleFinder : boost::default_dfs_visitor {
    int* at;
    explicit CycleFinder(int* a) : at(a) {}
    void back_edge(boost::graph_traits<BGraph>::edge_descriptor e, const BGraph& gr) {
      if (*at < 0) *at = static_cast<int>(boost::target(e, gr));
    }
  };
  int cycle_at = -1;
  boost::depth_first_search(bg, boost::visitor(CycleFinder(&cycle_at)));
  if (cycle_at >= 0)
    throw InputError(where + ": the graph has a cycle through node '" + names[cycle_at] + "'");
  std::vector<int> reversed;
  boost::topological_sort(bg, std::back_inserter(reversed));
  order.assign(reversed.rbegin(), reversed.rend());
  warnings.push_back("nodes were not in topological order; memplan reordered them");
  return order;
}

bool had_symbolic_dims(const onnx::ValueInfoProto& v) {
  if (!v.type().has_tensor_type()) return false;
  for (const auto& d : v.type().tensor_type().shape().dim())
    if (d.has_dim_param()) return true;
  return false;
}

void size_tensor(Tensor& t, const onnx::TypeProto* type,
                 const std::map<std::string, std::uint64_t>& overrides, const std::string& where,
                 std::vector<std::string>& unknown) {
  if (type != nullptr && type->has_tensor_type()) t.elem_type = type->tensor_type().elem_type();
  if (auto it = overrides.find(t.name); it != overrides.end()) {
    t.bytes = it->second;
    t.shape_known = false;
    return;
  }
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape() ||
      t.elem_type == 0) {
    if (type != nullptr &&
        (type->has_sequence_type() || type->has_map_type() || type->has_optional_type()))
      throw InputError(where + ": tensor '" + t.name +
                       "' is a sequence, map or optional value; memplan sizes tensors only");
    unknown.push_back(t.name);
    return;
  }
  auto elem = element_size(t.elem_type);
  if (!elem)
    throw InputError(where + ": tensor '" + t.name + "' has element type " +
                     std::string(dtype_name(t.elem_type)) +
                     " without a fixed size; give its bytes in the costs file's \"tensors\"");
  std::uint64_t bytes = *elem;
  for (const auto& d : type->tensor_type().shape().dim()) {
    if (!d.has_dim_value()) {
      unknown.push_back(t.name);
      t.shape.clear();
      return;
    }
    if (d.dim_value() < 0)
      throw InputError(where + ": tensor '" + t.name + "' has negative dim " +
                       std::to_string(d.dim_value()));
    t.shape.push_back(d.dim_value());
    if (__builtin_mul_overflow(bytes, static_cast<std::uint64_t>(d.dim_value()), &bytes))
      throw InputError(where + ": tensor '" + t.name + "': byte size overflows 64 bits");
  }
  t.bytes = bytes;
  t.shape_known = true;
}

// Values a tensor's dims call for; nullopt when a dim is negative or the
// count overflows.
std::optional<std::uint64_t> dims_count(const onnx::TensorProto& t) {
  std::uint64_t n = 1;
  for (auto d : t.dims())
    if (d < 0 || __builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n)) return std::nullopt;
  return n;
}

// Values a tensor holds in the model file; nullopt when that cannot be told
// (raw bytes of a type without a fixed size, or not a whole number of them).
std::optional<std::uint64_t> held_count(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return 0;  // not read by memplan
  if (!t.raw_data().empty()) {
    auto elem = element_size(t.data_type());
    if (!elem || t.raw_data().size() % *elem != 0) return std::nullopt;
    return t.raw_data().size() / *elem;
  }
  // Only the field the data type names counts: an int64 scalar whose value
  // sits in string_data has no int64 for shape inference to read.
  using T = onnx::TensorProto;
  switch (t.data_type()) {
    case T::FLOAT:
      return t.float_data_size();
    case T::COMPLEX64:
      return t.float_data_size() / 2;
    case T::DOUBLE:
      return t.double_data_size();
    case T::COMPLEX128:
      return t.double_data_size() / 2;
    case T::INT64:
      return t.int64_data_size();
    case T::UINT32:
    case T::UINT64:
      return t.uint64_data_size();
    case T::STRING:
      return t.string_data_size();
    default:  // the 8- and 16-bit types and INT32 are stored in int32_data
      return t.int32_data_size();
  }
}

std::string tensor_data_problem(const onnx::TensorProto& t) {
  auto want = dims_count(t);
  if (!want) return "has a negative dim or too many elements";
  auto held = held_count(t);
  if (!held)
    return "holds " + std::to_string(t.raw_data().size()) + " raw bytes, not a whole number of " +
           std::string(dtype_name(t.data_type())) + " values";
  if (*held != *want)
    return "holds " + std::to_string(*held) + " values but its dims call for " +
           std::to_string(*want);
  return "";
}

// ONNX 1.12's shape inference reads initializer and Constant data sized by
// the dims without checking how much is there (Range of a data-less scalar,
// ReduceSum axes of 1 raw byte crashed it). Tensors whose data does not match
// their dims are an input error — except top-level initializers with no data
// at all, as stripped models have (COSTS_FORMAT: weights are not needed): on
// the inference copy these become typed graph inputs, which carry the same
// shape and no data to misread.
void check_tensor_data(onnx::GraphProto& g, bool top_level, const std::string& where) {
  std::set<std::string> inputs;
  for (const auto& v : g.input()) inputs.insert(v.name());
  google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
  for (auto& t : *g.mutable_initializer()) {
    std::string problem = tensor_data_problem(t);
    if (problem.empty()) {
      *kept.Add() = std::move(t);
      continue;
    }
    bool dataless = held_count(t) == std::optional<std::uint64_t>(0) && dims_count(t).has_value();
    if (!top_level || !dataless)
      throw InputError(where + ": initializer '" + t.name() + "' " + problem);
    onnx::TypeProto type;
    type.mutable_tensor_type()->set_elem_type(t.data_type());
    auto* shape = type.mutable_tensor_type()->mutable_shape();
    for (auto d : t.dims()) shape->add_dim()->set_dim_value(d);
    if (inputs.count(t.name()) == 0) {
      auto* v = g.add_input();
      v->set_name(t.name());
      *v->mutable_type() = type;
    } else {
      for (auto& v : *g.mutable_input())
        if (v.name() == t.name() && !v.has_type()) *v.mutable_type() = type;
    }
  }
  g.mutable_initializer()->Swap(&kept);
  for (auto& n : *g.mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_t() && n.op_type() == "Constant") {
        std::string problem = tensor_data_problem(a.t());
        if (!problem.empty())
          throw InputError(where + ": Constant node '" + n.name() + "': value " + problem);
      }
      if (a.has_g()) check_tensor_data(*a.mutable_g(), false, where);
      for (auto& sub : *a.mutable_graphs()) check_tensor_data(sub, false, where);
    }
  }
}

// "cannot size": which ops the unsized tensors come from, with counts and
// the first node of each, earliest first (later ones usually follow from it).
std::string unsized_message(const Graph& graph, const std::vector<std::string>& unknown,
                            const std::string& where) {
  struct Origin {
    std::size_t count = 0;
    std::int64_t first_step = 0;
    std::string first_node, first_tensor;
  };
  std::map<std::string, Origin> by_op;
  for (const auto& name : unknown) {
    const Tensor& t = graph.tensor(*graph.find_tensor(name));
    const bool made = t.producer != kNoNode;
    const std::string op = made ? graph.node(t.producer).op_type : "(graph input)";
    const std::int64_t step = made ? static_cast<std::int64_t>(t.producer) : -1;
    auto [it, fresh] = by_op.try_emplace(op);
    Origin& o = it->second;
    if (fresh || step < o.first_step) {
      o.first_step = step;
      o.first_node = made ? graph.node(t.producer).name : "";
      o.first_tensor = t.name;
    }
    ++o.count;
  }
  std::vector<std::pair<std::string, Origin>> origins(by_op.begin(), by_op.end());
  std::stable_sort(origins.begin(), origins.end(), [](const auto& a, const auto& b) {
    return a.second.first_step < b.second.first_step;
  });
  std::ostringstream msg;
  msg << where << ": cannot size " << unknown.size()
      << " tensor(s) (shape unknown after inference), from:";
  for (std::size_t i = 0; i < origins.size(); ++i) {
    const auto& [op, o] = origins[i];
    msg << (i == 0 ? " " : "; ") << op << " x" << o.count << " (first '" << o.first_tensor << "'";
    if (!o.first_node.empty()) msg << " of node '" << o.first_node << "'";
    msg << ")";
  }
  msg << "; give their bytes in a costs file (\"tensors\") or bind more dims";
  return msg.str();
}

}  // namespace

// The model's own preconditions: a graph with nodes, opsets this build
// knows (a warning otherwise), dims that are not negative.
void check_model(const onnx::ModelProto& model, const LoadOptions& options,
                 const std::string& where, std::vector<std::string>& warnings) {
  if (!model.has_graph() || model.graph().node_size() == 0)
    throw InputError(where + ": the model has no graph nodes");
  for (const auto& op : model.opset_import()) {
    if ((op.domain().empty() || op.domain() == "ai.onnx") && op.version() > kKnownOpset) {
      warnings.push_back("model uses opset " + std::to_string(op.version()) +
                         "; this build's ONNX knows opsets up to " + std::to_string(kKnownOpset) +
                         ", so shapes of ops changed since come from the model's value_info");
    }
  }
  for (const auto& [name, value] : options.dims)
    if (value < 0)
      throw UsageError("--dim " + name + "=" + std::to_string(value) + ": a dim must be >= 0");
}

// Graph inputs and initializers first: they are resident from the start.
// Returns the inputs declared with symbolic dims.
std::set<std::string> declare_inputs(const onnx::GraphProto& g, Graph& graph,
                                     const std::string& where) {
  std::set<std::string> data_inputs;  // inputs declared with symbolic dims
  for (const auto& v : g.input()) {
    if (v.name().empty()) throw InputError(where + ": a graph input has no name");
    if (graph.find_tensor(v.name()))
      throw InputError(where + ": graph input '" + v.name() + "' declared twice");
    graph.mutable_tensors()[graph.add_tensor(v.name())].is_graph_input = true;
    if (had_symbolic_dims(v)) data_inputs.insert(v.name());
  }
  for (const auto& t : g.initializer()) {
    TensorId id = graph.tensor_id(t.name());
    graph.mutable_tensors()[id].is_initializer = true;
  }

  return data_inputs;
}

// Who makes what, with names for unnamed and duplicate-named nodes.
struct Producers {
  std::vector<std::string> names;  // per node
  // Tensor -> node, by views of the graph's output names (build_graph's
  // model outlives it).
  std::unordered_map<std::string_view, int> producer;
};

Producers name_producers(const onnx::GraphProto& g, const Graph& graph, const std::string& where) {
  Producers p;
  const int n = g.node_size();
  std::vector<std::string>& names = p.names;
  names.resize(static_cast<std::size_t>(n));
  // Membership only, so hashed, and views of names that stay put (the
  // proto's, and `names`, sized once): two trees of copied names were a
  // tenth of build_graph on synth100k.
  std::unordered_set<std::string_view> taken;
  taken.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) taken.insert(g.node(i).name());
  std::unordered_set<std::string_view> used_names;
  used_names.reserve(static_cast<std::size_t>(n));
  auto& producer = p.producer;
  producer.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto& node = g.node(i);
    std::string name = node.name();
    if (name.empty() || used_names.count(name) != 0) {
      std::string base = (name.empty() ? node.op_type() : name) + "_" + std::to_string(i);
      name = base;
      for (int k = 2; taken.count(name) != 0 || used_names.count(name) != 0; ++k)
        name = base + "_" + std::to_string(k);
    }
    names[i] = std::move(name);
    used_names.insert(names[i]);
    for (const auto& out : node.output()) {
      if (out.empty()) continue;
      if (auto [it, fresh] = producer.emplace(out, i); !fresh)
        throw InputError(where + ": tensor '" + out + "' is made by two nodes: '" +
                         names[it->second] + "' and '" + names[i] + "'");
      if (graph.find_tensor(out))
        throw InputError(where + ": node '" + names[i] + "' writes graph input or initializer '" +
                         out + "'");
    }
  }

  return p;
}

// Reads, including outer-scope reads of subgraphs, checked to exist; and
// the producer nodes each node waits for.
struct Reads {
  std::vector<std::vector<std::string>> reads;
  std::vector<std::vector<int>> preds;
};

Reads node_reads(const onnx::GraphProto& g, const Graph& graph, const Producers& p,
                 const std::string& where) {
  const int n = g.node_size();
  const std::vector<std::string>& names = p.names;
  const auto& producer = p.producer;
  Reads out;
  auto& reads = out.reads;
  auto& preds = out.preds;
  reads.resize(static_cast<std::size_t>(n));
  preds.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto& node = g.node(i);
    for (const auto& in : node.input())
      if (!in.empty()) reads[i].push_back(in);
    std::set<std::string> captured;
    for (const auto& a : node.attribute()) {
      if (a.has_g()) outer_names(a.g(), captured);
      for (const auto& sub : a.graphs()) outer_names(sub, captured);
    }
    for (const auto& c : captured)
      if (producer.count(c) != 0 || graph.find_tensor(c)) reads[i].push_back(c);
    for (const auto& r : reads[i]) {
      if (auto it = producer.find(r); it != producer.end()) {
        preds[i].push_back(it->second);
      } else if (!graph.find_tensor(r)) {
        throw InputError(where + ": node '" + names[i] + "' (" + node.op_type() +
                         ") reads tensor '" + r +
                         "' that no node makes and that is not a graph input or initializer");
      }
    }
  }

  return out;
}

Graph build_graph(const onnx::ModelProto& model, const LoadOptions& options,
                  const std::string& where, std::vector<std::string>& warnings) {
  check_model(model, options, where, warnings);
  const onnx::GraphProto& g = model.graph();

  Graph graph;
  graph.name = g.name();
  graph.dims = options.dims;
  std::size_t values = static_cast<std::size_t>(g.input_size() + g.initializer_size());
  for (const auto& n : g.node()) values += static_cast<std::size_t>(n.output_size());
  graph.reserve(values, static_cast<std::size_t>(g.node_size()));
  const std::set<std::string> data_inputs = declare_inputs(g, graph, where);
  const Producers producers = name_producers(g, graph, where);
  const std::vector<std::string>& names = producers.names;
  const Reads r = node_reads(g, graph, producers, where);
  const auto& reads = r.reads;

  // Shapes are inferred on a copy with dims bound, in the final node order
  // (inference walks nodes in the order given).
  const std::vector<int> order = node_order(g, r.preds, names, where, warnings);
  onnx::ModelProto work = model;
  for (const std::string& name : bind_dims(work, options.dims, where))
    warnings.push_back("--dim " + name + ": " + where +
                       " has no symbolic dim of that name (ignored)");
  check_tensor_data(*work.mutable_graph(), true, where);
  if (!std::is_sorted(order.begin(), order.end())) {
    auto* nodes = work.mutable_graph()->mutable_node();
    google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
    for (int i : order) *sorted.Add() = g.node(i);
    nodes->Swap(&sorted);
  }
  // The nodes need no types: they are built while the inference runs.
  auto add_nodes = [&] {
    for (int i : order) {
      const auto& pn = g.node(i);
      Node node;
      node.name = names[i];
      node.op_type = pn.op_type();
      node.domain = pn.domain();
      if (node.domain == "ai.onnx") node.domain.clear();
      for (const auto& r : reads[i]) node.inputs.push_back(graph.tensor_id(r));
      for (const auto& o : pn.output())
        if (!o.empty()) node.outputs.push_back(graph.tensor_id(o));
      node.attrs = read_attributes(pn);
      graph.add_node(std::move(node));
    }
  };
  const auto overrides =
      options.tensor_bytes_later ? options.tensor_bytes_later() : options.tensor_bytes;
  auto types = resolve_types(work, where, options.shape_inference, warnings, add_nodes);
  for (const auto& v : g.output()) {
    auto id = graph.find_tensor(v.name());
    if (!id) throw InputError(where + ": graph output '" + v.name() + "' is made by no node");
    graph.mutable_tensors()[*id].is_graph_output = true;
  }

  std::vector<std::string> unknown;
  for (auto& t : graph.mutable_tensors()) {
    auto it = types.find(t.name);
    size_tensor(t, it == types.end() ? nullptr : &it->second, overrides, where, unknown);
  }
  if (!unknown.empty()) throw InputError(unsized_message(graph, unknown, where));

  classify(graph, options.loss, data_inputs, warnings);
  return graph;
}

namespace {

// The file's proto; `sha256` gets the hash of its bytes.
onnx::ModelProto read_model_file(const std::string& path, std::string& sha256) {
  onnx::ModelProto proto;
  std::string bytes = read_file(path);
  sha256 = util::sha256_hex(bytes);
  if (!proto.ParseFromString(bytes))
    throw InputError(path +
                     ": not an ONNX model (protobuf parse failed: truncated or another format)");
  return proto;
}

}  // namespace

LoadedModel load_model(const std::string& path, const LoadOptions& options) {
  LoadedModel loaded;
  loaded.path = path;
  loaded.proto = read_model_file(path, loaded.sha256);
  loaded.graph = build_graph(loaded.proto, options, path, loaded.warnings);
  return loaded;
}

LoadedModel load_model(const std::string& path, const std::string& optimizer_path,
                       const LoadOptions& options) {
  LoadedModel loaded;
  loaded.path = path;
  loaded.proto = read_model_file(path, loaded.sha256);
  OptimizerModel opt;
  opt.path = optimizer_path;
  const onnx::ModelProto optimizer = read_model_file(optimizer_path, opt.sha256);
  onnx::ModelProto merged = loaded.proto;
  opt.steps = append_adamw_steps(merged, optimizer, optimizer_path);
  loaded.graph = build_graph(merged, options, path, loaded.warnings);
  loaded.optimizer = std::move(opt);
  return loaded;
}

}  // namespace memplan::ir
