#pragma once
// How memplan's rewrite marks the nodes it adds to order a recompute or a
// reload inside ONNX Runtime (passes/order_anchor.h), so that loading a
// rewritten model can see through them.
#include <string_view>

namespace memplan::ir {

// doc_string prefix of the Reshape that passes the anchored tensor on
// unchanged ("memplan:anchor:<anchor tensor>"): its output is its input.
inline constexpr std::string_view kAnchorDoc = "memplan:anchor:";
// doc_string prefix of the nodes that build the anchor's empty token.
inline constexpr std::string_view kAnchorTokenDoc = "memplan:anchor-token:";

}  // namespace memplan::ir
