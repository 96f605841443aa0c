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

namespace memplan::planner {

enum class Decision : std::uint8_t { kKeep, kSwap, kRecompute };
std::string_view to_string(Decision d);

enum class StepOp : std::uint8_t { kCompute, kRecompute, kSwapOut, kSwapIn, kFree };
std::string_view to_string(StepOp op);

struct Step {
  StepOp op = StepOp::kCompute;
  std::uint32_t id = 0;  // NodeId for compute/recompute, TensorId otherwise

  bool on_node() const { return op == StepOp::kCompute || op == StepOp::kRecompute; }
  friend bool operator==(const Step&, const Step&) = default;
};

struct SolverInfo {
  std::string name;
  std::string status;  // optimal, feasible, time_limit, heuristic
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
  std::vector<double> node_seconds;      // by NodeId
  std::vector<std::uint64_t> tensor_bytes;  // by TensorId, as the plan states them
  std::vector<Decision> decisions;       // by TensorId
  std::vector<Step> schedule;
  Predicted predicted;
};

}  // namespace memplan::planner
