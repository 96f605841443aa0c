#include "planner/plan_json.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "planner/plan_json_checks.h"
#include "util/errors.h"
#include "util/json_reader.h"
#include "util/sha256.h"
#include "util/text_file.h"

namespace memplan::planner {

namespace plan_json_checks {

double finite(double v, const std::string& key) {
  // JSON has no NaN or infinity (nlohmann would write null), and a file the
  // reader rejects must not be written in the first place.
  if (!std::isfinite(v)) throw InvalidPlanError("plan: " + key + " is not a finite number");
  return v;
}

void check_fits(const ir::Graph& graph, const Plan& plan) {
  const std::size_t nodes = graph.nodes().size(), tensors = graph.tensors().size();
  bool ok = plan.node_seconds.size() == nodes && plan.tensor_bytes.size() == tensors &&
            plan.decisions.size() == tensors &&
            (plan.alias_of.empty() || plan.alias_of.size() == tensors);
  if (!ok)
    throw InvalidPlanError("plan: per-node or per-tensor data does not match the graph (" +
                           std::to_string(nodes) + " nodes, " + std::to_string(tensors) +
                           " tensors)");
  for (const Step& s : plan.schedule)
    if (s.id >= (s.on_node() ? nodes : tensors))
      throw InvalidPlanError("plan: a " + std::string(to_string(s.op)) + " step names id " +
                             std::to_string(s.id) + ", not in the graph");
  for (ir::TensorId t : plan.initial_host)
    if (t >= tensors)
      throw InvalidPlanError("plan: initial_host names tensor id " + std::to_string(t) +
                             ", not in the graph");
}

std::string quote_name(std::string_view name) { return nlohmann::json(std::string(name)).dump(); }

}  // namespace plan_json_checks

namespace {

using namespace plan_json_checks;
using nlohmann::json;
using nlohmann::ordered_json;

constexpr std::string_view kStatuses[] = {
    to_string(solvers::SolveStatus::kOptimal), to_string(solvers::SolveStatus::kFeasible),
    to_string(solvers::SolveStatus::kTimeLimit), to_string(solvers::SolveStatus::kHeuristic)};

// ---------------------------------------------------------------- writing

// ---------------------------------------------------------------- reading

// A short rendering of an offending value; big values are cut.
std::string describe(const json& v) {
  std::string text = v.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return v.is_number() ? text : std::string(v.type_name()) + " " + text;
}

// Reads values out of the document, each failure one line naming the file
// and the key path (`tensors[3].bytes`, `node_seconds."MatMul_3"`).
class Reader {
 public:
  explicit Reader(std::string_view where) : where_(where) {}

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw InputError(where_ + ": " + key + ": " + problem);
  }

  const json& member(const json& object, const std::string& key, std::string_view name) const {
    auto it = object.find(name);
    if (it == object.end()) fail(join(key, name), "missing");
    return *it;
  }
  static std::string join(const std::string& key, std::string_view name) {
    return key.empty() ? std::string(name) : key + "." + std::string(name);
  }

  const json& object(const json& v, const std::string& key) const {
    if (!v.is_object()) fail(key, "expected an object, got " + describe(v));
    return v;
  }
  const json& array(const json& v, const std::string& key) const {
    if (!v.is_array()) fail(key, "expected an array, got " + describe(v));
    return v;
  }
  std::string string(const json& v, const std::string& key) const {
    if (!v.is_string()) fail(key, "expected a string, got " + describe(v));
    return v.get<std::string>();
  }
  std::uint64_t count(const json& v, const std::string& key) const {
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    if (v.is_number_integer()) fail(key, "must be >= 0, got " + describe(v));
    fail(key, "expected an integer, got " + describe(v));
  }
  double seconds(const json& v, const std::string& key) const {
    if (!v.is_number()) fail(key, "expected a number, got " + describe(v));
    double s = v.get<double>();
    if (s < 0) fail(key, "must be >= 0, got " + describe(v));
    return s;
  }

  // The member `name` of `object` (at `key`) read with one of the above.
  std::string string_at(const json& o, const std::string& key, std::string_view name) const {
    return string(member(o, key, name), join(key, name));
  }
  std::uint64_t count_at(const json& o, const std::string& key, std::string_view name) const {
    return count(member(o, key, name), join(key, name));
  }
  double seconds_at(const json& o, const std::string& key, std::string_view name) const {
    return seconds(member(o, key, name), join(key, name));
  }
  const json& object_at(const json& o, const std::string& key, std::string_view name) const {
    return object(member(o, key, name), join(key, name));
  }
  const json& array_at(const json& o, const std::string& key, std::string_view name) const {
    return array(member(o, key, name), join(key, name));
  }

 private:
  std::string where_;
};

void read_header(const Reader& r, const json& doc, Plan& plan) {
  std::string format = r.string_at(doc, "", "format");
  if (format != kPlanFormat)
    r.fail("format", "expected " + quote_name(kPlanFormat) + ", got " + quote_name(format));
  const json& version = r.member(doc, "", "version");
  if (!version.is_number_integer() || version.get<std::int64_t>() != kPlanVersion)
    r.fail("version", "this reader knows version " + std::to_string(kPlanVersion) + ", got " +
                          describe(version));

  const json& model = r.object_at(doc, "", "model");
  plan.model_path = r.string_at(model, "model", "path");
  plan.model_sha256 = r.string_at(model, "model", "sha256");
  for (const auto& [name, value] : r.object_at(model, "model", "dims").items()) {
    std::uint64_t v = r.count(value, "model.dims." + quote_name(name));
    if (v > static_cast<std::uint64_t>(INT64_MAX))
      r.fail("model.dims." + quote_name(name), "too large");
    plan.dims[name] = static_cast<std::int64_t>(v);
  }

  const json& device = r.object_at(doc, "", "device");
  plan.device.name = r.string_at(device, "device", "name");
  plan.device.memory_bytes = r.count_at(device, "device", "memory_bytes");
  plan.device.h2d_bytes_per_s = r.seconds_at(device, "device", "h2d_bytes_per_s");
  plan.device.d2h_bytes_per_s = r.seconds_at(device, "device", "d2h_bytes_per_s");
  plan.budget_bytes = r.count_at(doc, "", "budget_bytes");

  const json& solver = r.object_at(doc, "", "solver");
  plan.solver.name = r.string_at(solver, "solver", "name");
  plan.solver.status = r.string_at(solver, "solver", "status");
  if (std::find(std::begin(kStatuses), std::end(kStatuses), plan.solver.status) ==
      std::end(kStatuses))
    r.fail("solver.status", "unknown status " + quote_name(plan.solver.status) +
                                " (optimal, feasible, time_limit or heuristic)");
  plan.solver.objective_seconds = r.seconds_at(solver, "solver", "objective_seconds");
  const json& bound = r.member(solver, "solver", "bound_seconds");
  if (!bound.is_null()) plan.solver.bound_seconds = r.seconds(bound, "solver.bound_seconds");
  plan.solver.solve_seconds = r.seconds_at(solver, "solver", "solve_seconds");
}

void read_node_seconds(const Reader& r, const ir::Graph& graph, const json& doc, Plan& plan) {
  const json& times = r.object_at(doc, "", "node_seconds");
  constexpr double kUnset = -1;
  plan.node_seconds.assign(graph.nodes().size(), kUnset);
  for (const auto& [name, value] : times.items()) {
    std::string key = "node_seconds." + quote_name(name);
    auto id = graph.find_node(name);
    if (!id) r.fail(key, "unknown node " + quote_name(name));
    plan.node_seconds[*id] = r.seconds(value, key);
  }
  for (ir::NodeId n = 0; n < graph.nodes().size(); ++n)
    if (plan.node_seconds[n] == kUnset)
      r.fail("node_seconds", "no time for node " + quote_name(graph.node(n).name));
}

std::optional<ir::TensorClass> parse_class(std::string_view text) {
  for (int c = 0; c < ir::kTensorClassCount; ++c)
    if (ir::to_string(static_cast<ir::TensorClass>(c)) == text)
      return static_cast<ir::TensorClass>(c);
  return std::nullopt;
}

ir::TensorId tensor_named(const Reader& r, const ir::Graph& graph, const std::string& name,
                          const std::string& key) {
  auto id = graph.find_tensor(name);
  if (!id) r.fail(key, "unknown tensor " + quote_name(name));
  return *id;
}

void read_tensors(const Reader& r, const ir::Graph& graph, const json& doc, Plan& plan) {
  const json& tensors = r.array_at(doc, "", "tensors");
  const std::size_t n = graph.tensors().size();
  plan.tensor_bytes.assign(n, 0);
  plan.decisions.assign(n, Decision::kKeep);
  std::vector<ir::TensorId> alias_of(n, ir::kNoTensor);
  bool any_alias = false;
  std::vector<bool> seen(n, false);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::string key = "tensors[" + std::to_string(i) + "]";
    const json& entry = r.object(tensors[i], key);
    ir::TensorId t = tensor_named(r, graph, r.string_at(entry, key, "name"), key + ".name");
    if (seen[t])
      r.fail(key + ".name", "tensor " + quote_name(graph.tensor(t).name) + " is listed twice");
    seen[t] = true;
    plan.tensor_bytes[t] = r.count_at(entry, key, "bytes");
    std::string cls = r.string_at(entry, key, "class");
    if (!parse_class(cls)) r.fail(key + ".class", "unknown class " + quote_name(cls));
    std::string decision = r.string_at(entry, key, "decision");
    auto d = parse_decision(decision);
    if (!d)
      r.fail(key + ".decision",
             "unknown decision " + quote_name(decision) + " (keep, swap or recompute)");
    plan.decisions[t] = *d;
    if (entry.contains("alias_of")) {
      alias_of[t] = tensor_named(r, graph, r.string_at(entry, key, "alias_of"), key + ".alias_of");
      any_alias = true;
    }
  }
  for (ir::TensorId t = 0; t < n; ++t)
    if (!seen[t])
      r.fail("tensors", "tensor " + quote_name(graph.tensor(t).name) + " is not listed");
  if (any_alias) plan.alias_of = std::move(alias_of);
}

// `initial_host` (PLAN_FORMAT's optional keys): names of graph inputs or
// initializers. What cannot start on the host is refused here, where the
// file's own key can be named; the end rule is validate()'s.
void read_initial_host(const Reader& r, const ir::Graph& graph, const json& doc, Plan& plan) {
  auto it = doc.find("initial_host");
  if (it == doc.end()) return;
  const json& list = r.array(*it, "initial_host");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string key = "initial_host[" + std::to_string(i) + "]";
    const ir::TensorId t = tensor_named(r, graph, r.string(list[i], key), key);
    const ir::Tensor& tensor = graph.tensor(t);
    if (!tensor.initially_resident())
      r.fail(key, "tensor " + quote_name(tensor.name) +
                      " is not a graph input or initializer: only those can start on the host");
    if (tensor.is_graph_output)
      r.fail(key, "tensor " + quote_name(tensor.name) +
                      " is a graph output, which must be resident at the end");
    plan.initial_host.push_back(t);
  }
  std::sort(plan.initial_host.begin(), plan.initial_host.end());
  auto repeat = std::adjacent_find(plan.initial_host.begin(), plan.initial_host.end());
  if (repeat != plan.initial_host.end())
    r.fail("initial_host", "tensor " + quote_name(graph.tensor(*repeat).name) + " is listed twice");
}

void read_schedule(const Reader& r, const ir::Graph& graph, const json& doc, Plan& plan) {
  const json& schedule = r.array_at(doc, "", "schedule");
  plan.schedule.reserve(schedule.size());
  for (std::size_t i = 0; i < schedule.size(); ++i) {
    const std::string key = "schedule[" + std::to_string(i) + "]";
    const json& entry = r.object(schedule[i], key);
    std::string op_text = r.string_at(entry, key, "op");
    auto op = parse_step_op(op_text);
    if (!op)
      r.fail(key + ".op", "unknown op " + quote_name(op_text) +
                              " (compute, recompute, swap_out, swap_in or free)");
    Step step{*op, 0};
    const char* want = step.on_node() ? "node" : "tensor";
    const char* other = step.on_node() ? "tensor" : "node";
    if (entry.contains(other))
      r.fail(key + "." + other, "a " + op_text + " step names a " + want + ", not a " + other);
    std::string name = r.string_at(entry, key, want);
    if (step.on_node()) {
      auto id = graph.find_node(name);
      if (!id) r.fail(key + ".node", "unknown node " + quote_name(name));
      step.id = *id;
    } else {
      step.id = tensor_named(r, graph, name, key + ".tensor");
    }
    plan.schedule.push_back(step);
  }
}

void read_predicted(const Reader& r, const json& doc, Plan& plan) {
  const json& p = r.object_at(doc, "", "predicted");
  plan.predicted.peak_bytes = r.count_at(p, "predicted", "peak_bytes");
  plan.predicted.iteration_seconds = r.seconds_at(p, "predicted", "iteration_seconds");
  plan.predicted.compute_seconds = r.seconds_at(p, "predicted", "compute_seconds");
  plan.predicted.baseline_peak_bytes = r.count_at(p, "predicted", "baseline_peak_bytes");
  plan.predicted.baseline_iteration_seconds =
      r.seconds_at(p, "predicted", "baseline_iteration_seconds");
}

// `memory_layout` (runtime-stub/README.md): optional; its agreement with the
// schedule is memory_layout_problem()'s to judge, like validate() for the rest.
void read_memory_layout(const Reader& r, const ir::Graph& graph, const json& doc, Plan& plan) {
  auto it = doc.find("memory_layout");
  if (it == doc.end()) return;
  const json& m = r.object(*it, "memory_layout");
  MemoryLayout layout;
  layout.alignment = r.count_at(m, "memory_layout", "alignment");
  if (layout.alignment == 0) r.fail("memory_layout.alignment", "must be >= 1");
  layout.arena_bytes = r.count_at(m, "memory_layout", "arena_bytes");
  layout.peak_bytes = r.count_at(m, "memory_layout", "peak_bytes");
  const json& list = r.array_at(m, "memory_layout", "allocations");
  layout.allocations.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string key = "memory_layout.allocations[" + std::to_string(i) + "]";
    const json& entry = r.object(list[i], key);
    const json& step = r.member(entry, key, "step");
    if (!step.is_number_integer() || step.get<std::int64_t>() < -1)
      r.fail(key + ".step", "expected a step index or -1, got " + describe(step));
    Allocation a;
    a.step = step.get<std::int64_t>();
    a.tensor = tensor_named(r, graph, r.string_at(entry, key, "tensor"), key + ".tensor");
    a.offset = r.count_at(entry, key, "offset");
    a.bytes = r.count_at(entry, key, "bytes");
    layout.allocations.push_back(a);
  }
  plan.memory_layout = std::move(layout);
}

}  // namespace

namespace {

// The device, budget and solver sections.
void put_device_and_solver(const Plan& plan, ordered_json& doc) {
  ordered_json device;
  device["name"] = plan.device.name;
  device["memory_bytes"] = plan.device.memory_bytes;
  device["h2d_bytes_per_s"] = finite(plan.device.h2d_bytes_per_s, "device.h2d_bytes_per_s");
  device["d2h_bytes_per_s"] = finite(plan.device.d2h_bytes_per_s, "device.d2h_bytes_per_s");
  doc["device"] = std::move(device);
  doc["budget_bytes"] = plan.budget_bytes;

  ordered_json solver;
  solver["name"] = plan.solver.name;
  solver["status"] = plan.solver.status;
  solver["objective_seconds"] = finite(plan.solver.objective_seconds, "solver.objective_seconds");
  solver["bound_seconds"] =
      plan.solver.bound_seconds
          ? ordered_json(finite(*plan.solver.bound_seconds, "solver.bound_seconds"))
          : ordered_json(nullptr);
  solver["solve_seconds"] = finite(plan.solver.solve_seconds, "solver.solve_seconds");
  doc["solver"] = std::move(solver);
}

void put_node_seconds(const ir::Graph& graph, const Plan& plan, ordered_json& doc) {
  // ordered_json's operator[] searches its keys linearly, which made this
  // loop quadratic (seconds at 100k nodes). The loader makes node names
  // unique, so the entries are appended without a search.
  ordered_json times = ordered_json::object();
  auto& entries =
      static_cast<ordered_json::object_t::Container&>(*times.get_ptr<ordered_json::object_t*>());
  entries.reserve(graph.nodes().size());
  for (ir::NodeId n = 0; n < graph.nodes().size(); ++n)
    entries.emplace_back(
        graph.node(n).name,
        finite(plan.node_seconds[n], "node_seconds." + quote_name(graph.node(n).name)));
  doc["node_seconds"] = std::move(times);
}

// The tensors and the schedule, by name.
void put_tensors_and_schedule(const ir::Graph& graph, const Plan& plan, ordered_json& doc) {
  ordered_json tensors = ordered_json::array();
  for (ir::TensorId t = 0; t < graph.tensors().size(); ++t) {
    const ir::Tensor& tensor = graph.tensor(t);
    ordered_json entry;
    entry["name"] = tensor.name;
    entry["bytes"] = plan.tensor_bytes[t];
    entry["class"] = ir::to_string(tensor.cls);
    entry["decision"] = to_string(plan.decisions[t]);
    if (!plan.alias_of.empty() && plan.alias_of[t] != ir::kNoTensor)
      entry["alias_of"] = graph.tensor(plan.alias_of.at(t)).name;
    tensors.push_back(std::move(entry));
  }
  doc["tensors"] = std::move(tensors);
  // Only when there is one: plans without it keep their bytes.
  if (!plan.initial_host.empty()) {
    ordered_json names = ordered_json::array();
    for (ir::TensorId t : plan.initial_host) names.push_back(graph.tensor(t).name);
    doc["initial_host"] = std::move(names);
  }

  ordered_json schedule = ordered_json::array();
  for (const Step& s : plan.schedule) {
    ordered_json entry;
    entry["op"] = to_string(s.op);
    if (s.on_node()) {
      entry["node"] = graph.node(s.id).name;
    } else {
      entry["tensor"] = graph.tensor(s.id).name;
    }
    schedule.push_back(std::move(entry));
  }
  doc["schedule"] = std::move(schedule);
}

void put_memory_layout(const ir::Graph& graph, const Plan& plan, ordered_json& doc) {
  if (plan.memory_layout) {
    const MemoryLayout& m = *plan.memory_layout;
    ordered_json layout;
    layout["alignment"] = m.alignment;
    layout["arena_bytes"] = m.arena_bytes;
    layout["peak_bytes"] = m.peak_bytes;
    layout["fragmentation"] = finite(m.fragmentation(), "memory_layout.fragmentation");
    // Added keys (PLAN_FORMAT allows them): what the packing lost, and
    // whether the arena fits the budget, said outright for a reader that
    // does not compare the two.
    layout["fragmentation_bytes"] = m.arena_bytes > m.peak_bytes ? m.arena_bytes - m.peak_bytes : 0;
    layout["fits_budget"] = m.arena_bytes <= plan.budget_bytes;
    if (m.arena_bytes > plan.budget_bytes)
      layout["over_budget_bytes"] = m.arena_bytes - plan.budget_bytes;
    ordered_json list = ordered_json::array();
    for (const Allocation& a : m.allocations) {
      if (a.tensor >= graph.tensors().size())
        throw InvalidPlanError("plan: memory_layout names tensor id " + std::to_string(a.tensor) +
                               ", not in the graph");
      list.push_back(ordered_json{{"step", a.step},
                                  {"tensor", graph.tensor(a.tensor).name},
                                  {"offset", a.offset},
                                  {"bytes", a.bytes}});
    }
    layout["allocations"] = std::move(list);
    doc["memory_layout"] = std::move(layout);
  }
}

}  // namespace

nlohmann::ordered_json plan_to_json(const ir::Graph& graph, const Plan& plan) {
  check_fits(graph, plan);
  ordered_json doc;
  doc["format"] = kPlanFormat;
  doc["version"] = kPlanVersion;

  ordered_json model;
  model["path"] = plan.model_path;
  model["sha256"] = plan.model_sha256;
  model["dims"] = ordered_json::object();
  for (const auto& [name, value] : plan.dims) model["dims"][name] = value;  // std::map: sorted
  doc["model"] = std::move(model);

  put_device_and_solver(plan, doc);

  put_node_seconds(graph, plan, doc);
  put_tensors_and_schedule(graph, plan, doc);

  const Predicted& p = plan.predicted;
  ordered_json predicted;
  predicted["peak_bytes"] = p.peak_bytes;
  predicted["iteration_seconds"] = finite(p.iteration_seconds, "predicted.iteration_seconds");
  predicted["compute_seconds"] = finite(p.compute_seconds, "predicted.compute_seconds");
  predicted["baseline_peak_bytes"] = p.baseline_peak_bytes;
  predicted["baseline_iteration_seconds"] =
      finite(p.baseline_iteration_seconds, "predicted.baseline_iteration_seconds");
  doc["predicted"] = std::move(predicted);

  put_memory_layout(graph, plan, doc);
  return doc;
}

Plan plan_from_json(const ir::Graph& graph, const nlohmann::json& doc, std::string_view where) {
  Reader r(where);
  if (!doc.is_object()) r.fail("(top level)", "expected an object, got " + describe(doc));
  Plan plan;
  read_header(r, doc, plan);
  read_node_seconds(r, graph, doc, plan);
  read_tensors(r, graph, doc, plan);
  read_initial_host(r, graph, doc, plan);
  read_schedule(r, graph, doc, plan);
  read_predicted(r, doc, plan);
  read_memory_layout(r, graph, doc, plan);
  return plan;
}

nlohmann::json read_plan_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the plan file");
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path + ": cannot read the plan file");
  return util::parse_json_text(path, text.str());
}

Plan read_plan_file(const ir::Graph& graph, const std::string& path) {
  return plan_from_json(graph, read_plan_json(path), path);
}

std::string write_plan_file(const ir::Graph& graph, const Plan& plan, const std::string& path) {
  // Serialize first: a plan that cannot be written leaves no file at all.
  const std::string text = plan_file_text(graph, plan);
  util::write_file_atomically(path, text);
  return util::sha256_hex(text);
}

}  // namespace memplan::planner
