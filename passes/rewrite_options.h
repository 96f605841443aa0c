#pragma once
// What rewrite_model() may be told besides the model, the graph and the plan.
#include <cstdint>
#include <functional>
#include <string>

namespace memplan::passes {

enum class AnchorOrder {
  kNone,     // ORT runs the nodes in its own order
  kRemakes,  // recompute clones and reloads only
  kAll,      // also plain nodes that read nothing made since the latest
             // anchor and read a tensor of min_anchored_bytes or more, so ORT
             // follows the plan's whole order; edges ORT fuses are left alone
};

struct RewriteOptions {
  // sha256 of the plan file's bytes, recorded in metadata_props. Empty: the
  // sha256 of the plan as write_plan_file() writes it, which is the same
  // thing for a plan memplan wrote.
  std::string plan_sha256;
  // Where plan_sha256 is empty and the plan file is being written beside
  // the rewrite (memplan plan): asked for its sha256 only when the summary
  // is written, at the end, so that the two overlap.
  std::function<std::string()> plan_sha256_later;
  // sha256 of the model file's bytes. When set, a plan whose model.sha256
  // differs is rejected: it was made for another model.
  std::string model_sha256;
  // Which nodes wait, inside ONNX Runtime, for the node the plan issues them
  // after, through a data dependency it keeps (passes/order_anchor.h).
  AnchorOrder anchor_order = AnchorOrder::kAll;
  // With kAll, a node that reads only smaller tensors is not anchored: where
  // ORT runs it moves little memory, and anchoring the small integer tensors
  // shapes are computed from would stop ORT's and ONNX's constant folding.
  std::uint64_t min_anchored_bytes = 64 * 1024;
};

}  // namespace memplan::passes
