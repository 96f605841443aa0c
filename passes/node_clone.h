#pragma once
// A copy of a NodeProto that reads other names: its inputs and the outer
// tensors its subgraphs (If/Loop/Scan bodies) capture.
#include <functional>
#include <string>

#include "onnx/onnx_pb.h"

namespace memplan::passes {

// `rename` maps a name the node reads from the enclosing graph to the name
// it should read now; it is not called for empty optional inputs nor for the
// names a subgraph defines itself.
onnx::NodeProto clone_reading(const onnx::NodeProto& node,
                              const std::function<std::string(const std::string&)>& rename);

}  // namespace memplan::passes
