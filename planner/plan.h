#pragma once
// A plan as data (PLAN_FORMAT.md, format 1), by ids of one ir::Graph.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/device.h"
#include "ir/graph.h"
#include "planner/memory_layout.h"
#include "solvers/decision.h"
#include "solvers/solve_status.h"

namespace memplan::planner {

// Solvers decide, the planner schedules: the type lives with the solvers.
using Decision = solvers::Decision;
std::string_view to_string(Decision d);
// The inverse of to_string; nullopt for a string the format does not know.
std::optional<Decision> parse_decision(std::string_view text);

enum class StepOp : std::uint8_t { kCompute, kRecompute, kSwapOut, kSwapIn, kFree };
std::string_view to_string(StepOp op);
std::optional<StepOp> parse_step_op(std::string_view text);

struct Step {
  StepOp op = StepOp::kCompute;
  std::uint32_t id = 0;  // NodeId for compute/recompute, TensorId otherwise

  bool on_node() const { return op == StepOp::kCompute || op == StepOp::kRecompute; }
  friend bool operator==(const Step&, const Step&) = default;
};

struct SolverInfo {
  std::string name;
  // to_string(SolveStatus), any but infeasible. A string: a plan read back
  // holds what its file says.
  std::string status;
  double objective_seconds = 0;
  std::optional<double> bound_seconds;  // a proven lower bound
  double solve_seconds = 0;
};

struct Predicted {
  std::uint64_t peak_bytes = 0;
  double iteration_seconds = 0;
  double compute_seconds = 0;
  std::uint64_t baseline_peak_bytes = 0;
  double baseline_iteration_seconds = 0;
};

struct Plan {
  // model
  std::string model_path;
  std::string model_sha256;
  std::map<std::string, std::int64_t> dims;
  // device: name, memory_bytes, h2d_bytes_per_s, d2h_bytes_per_s are written
  ir::DeviceSpec device;
  std::uint64_t budget_bytes = 0;
  SolverInfo solver;
  std::vector<double> node_seconds;         // by NodeId
  std::vector<std::uint64_t> tensor_bytes;  // by TensorId, as the plan states them
  std::vector<Decision> decisions;          // by TensorId
  // By TensorId: the tensor whose storage this one shares (`alias_of` in
  // tensors[]), or ir::kNoTensor. Empty when the plan declares no aliases.
  std::vector<ir::TensorId> alias_of;
  // Graph inputs and initializers that start the iteration on the host only
  // (`initial_host`, PLAN_FORMAT's optional key): offloaded training state
  // such as parameters, accumulation buffers and optimizer moments, which
  // take no device bytes until a swap_in and must end on the host again
  // with a copy made after their last in-place write. Empty: every graph
  // input and initializer starts resident.
  std::vector<ir::TensorId> initial_host;  // sorted ascending, no repeats
  std::vector<Step> schedule;
  Predicted predicted;
  // Where each allocation lives in one device arena (`memory_layout`, not
  // part of format 1's required keys): set for every plan `memplan plan`
  // writes; absent in plans that predate it.
  std::optional<MemoryLayout> memory_layout;
};

}  // namespace memplan::planner
