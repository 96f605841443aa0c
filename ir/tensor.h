#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace memplan::ir {

using TensorId = std::uint32_t;
using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();
inline constexpr TensorId kNoTensor = std::numeric_limits<TensorId>::max();

// The classes of PLAN_FORMAT.md.
enum class TensorClass : std::uint8_t {
  kParameter,
  kInput,
  kActivation,
  kGradient,
  kOptimizerState,
  kTemporary,
  kOutput,
};
inline constexpr int kTensorClassCount = 7;

std::string_view to_string(TensorClass c);

struct Tensor {
  std::string name;
  std::int32_t elem_type = 0;       // ONNX TensorProto::DataType
  std::vector<std::int64_t> shape;  // every dim bound once the graph is loaded
  bool shape_known = false;
  std::uint64_t bytes = 0;  // element count x element size
  NodeId producer = kNoNode;
  std::vector<NodeId> consumers;  // each reading node once, ascending
  bool is_graph_input = false;
  bool is_initializer = false;
  bool is_graph_output = false;
  TensorClass cls = TensorClass::kTemporary;
  // Training state that a plan keeps on the host between iterations
  // (PLAN_FORMAT's `initial_host`): set only on the planner's own copy of a
  // graph, so that the problem, the scheduler and the plans made from that
  // copy all see it. Still a graph input or initializer: the baseline, which
  // has no plan, starts with it resident.
  bool starts_on_host = false;

  // Resident before the first step: graph inputs and initializers.
  bool initially_resident() const { return is_graph_input || is_initializer; }
};

}  // namespace memplan::ir
