#pragma once
// What ONNX Runtime's optimisers fuse, as far as the rewrite's order anchors
// must leave it alone (docs/ort-anchoring.md): an anchor is one more reader
// of a value, and its Reshape hides the value's shape, and either can stop a
// fusion of the original, which changes the gradients' last bits.
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace memplan::passes {

// Ops whose output ORT fuses into its reader, or whose reader it fuses in
// (MatMul and its scale, Add and a normalisation or activation): with the
// whole order anchored, neither their outputs nor the edges out of them get
// an anchor, so the fusions of the original are kept.
bool fusion_head(std::string_view op);

// With the whole order anchored, these nodes get no anchor of their own: a
// scale, cast or layout op that ORT folds into the node reading it
// (MatMulScaleFusion, gpt2_tiny), and the Sum or Add that ORT folds a Gemm's
// output into (GemmSumFusion, gpt2_tiny's tied embedding). An anchor on
// their input changed the values' last bits at EXTENDED.
bool folded_into_reader(std::string_view op);

// How much an anchor on an input made by `producer` costs ORT's fusions of
// the node reading it: 0, a scale (Mul, Div) that ORT folds into a MatMul's
// alpha only while every reader of it is a MatMul, which changes the
// product's last bits (swin_tiny's attention, a recomputed MatMul at
// EXTENDED); 1, another op a fusion starts from (a Transpose folded into the
// MatMul's flags); 2, none (and for no producer).
int fusion_kept(const ir::Graph& graph, ir::NodeId producer);

// By NodeId: a Gemm whose output ORT sums into its C (GemmSumFusion: a tied
// embedding's two gradients), or a Transpose between it and that Sum (folded
// into the Gemm first: BERT's decoder). ORT fuses only where the Gemm's
// output has that one reader and a shape known to be 2-D; an anchored input's
// shape is computed, and a token's Slice is one more reader, so such nodes
// are neither anchored nor anchors (bert_tiny, gpt2_tiny, from BASIC).
std::vector<bool> gemm_sum_nodes(const ir::Graph& graph);

}  // namespace memplan::passes
