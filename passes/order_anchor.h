#pragma once
// Orders a node after another inside ONNX Runtime, with a data dependency
// that its optimisers neither fold nor reorder at any level
// (docs/ort-anchoring.md). ORT runs nodes in its own topological order, so a
// recompute clone whose inputs are forward tensors would otherwise run in the
// forward, and a clone equal to its original would be merged into it.
//
// The anchored input x of the node is read through
//   Reshape(x, Concat(token(after), Shape(x)))
// where token(after) = Reshape(Cast(Slice(after, [0], [0], axes [0]), int64), [-1])
// is an empty int64 vector made from the data of the anchor tensor `after`:
// zero elements, so no value of it is read, and ORT's CPU Reshape aliases its
// input, so no copy is made. The result is x, bit for bit.
#include <string>
#include <unordered_map>

#include "ir/anchor_doc.h"
#include "onnx/onnx_pb.h"
#include "passes/fresh_names.h"

namespace memplan::passes {

using ir::kAnchorDoc;       // the anchored Reshape's doc_string prefix
using ir::kAnchorTokenDoc;  // the other anchor nodes'

class OrderAnchor {
 public:
  // `opset`: the model's default-domain version; anchors need Slice with
  // inputs (opset 10).
  OrderAnchor(FreshNames& values, FreshNames& node_names, int opset);

  bool usable() const { return usable_; }
  // Whether a tensor of this ONNX element type and rank can be an anchor: a
  // number or bool, rank 1 or more (Slice along axis 0).
  static bool can_anchor_on(std::int32_t elem_type, std::size_t rank);

  // Appends to `out` the nodes that make `input` wait for `after`, and
  // returns the name the anchored node reads in its place. `node` names the
  // anchored node (in names and doc strings).
  std::string anchor(const std::string& input, const std::string& after, const std::string& node,
                     google::protobuf::RepeatedPtrField<onnx::NodeProto>& out);

  // The constants the anchors read, once, if any anchor was made.
  void add_initializers(onnx::GraphProto& graph) const;

 private:
  const std::string& token(const std::string& after,
                           google::protobuf::RepeatedPtrField<onnx::NodeProto>& out);

  FreshNames& values_;
  FreshNames& node_names_;
  bool usable_;
  std::string zero_;                                     // int64 [0]: Slice's starts, ends and axes
  std::string minus_one_;                                // int64 [-1]: flattens the empty slice
  std::unordered_map<std::string, std::string> tokens_;  // anchor tensor -> its token
};

}  // namespace memplan::passes
