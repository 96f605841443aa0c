#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace memplan::ir {

// Finds the loss (the named one, else the scalar graph output — preferring a
// name with "loss" in it), marks the forward nodes (those the loss depends
// on) and gives every tensor its class from the graph's structure:
//   initializer: parameter (weights and constants);
//   graph input read by the forward: parameter, or input when it was
//     declared with symbolic dims or is integer/bool (data, labels);
//   graph input not read by the forward: optimizer_state (AdamW's moments,
//     learning rate and step), except ONNX Runtime's gradient accumulation
//     buffer "<p>_grad.accumulation.buffer" of a graph input p: gradient;
//   graph output: output;  made by the forward and read by the backward:
//   activation; made by the forward, read only there: temporary;
//   made by the backward: gradient.
// ONNX Runtime's names are only a hint: "<p>_grad" or
// "<p>_grad.accumulation.buffer" existing makes p a parameter.
// Without a scalar output the whole graph counts as forward.
void classify(Graph& graph, const std::optional<std::string>& loss,
              const std::set<std::string>& symbolic_inputs, std::vector<std::string>& warnings);

}  // namespace memplan::ir
