#include "ir/in_place_writes.h"

#include <algorithm>

#include "ir/adamw_steps.h"

namespace memplan::ir {

std::vector<TensorId> in_place_writes(const Node& n) {
  if (is_adamw_step(n) && n.inputs.size() >= 4) return {n.inputs[0], n.inputs[2], n.inputs[3]};
  if (n.op_type == "InPlaceAccumulatorV2" && n.domain == "com.microsoft" && !n.inputs.empty())
    return {n.inputs[0]};
  return {};
}

bool writes_in_place(const Node& n, TensorId t) {
  const std::vector<TensorId> written = in_place_writes(n);
  return std::find(written.begin(), written.end(), t) != written.end();
}

}  // namespace memplan::ir
