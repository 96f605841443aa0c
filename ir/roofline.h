#pragma once
// The analytical cost model (COSTS_FORMAT.md §3): a per-node roofline used
// for every node that no costs file or profile times.
#include "ir/device.h"
#include "ir/graph.h"
#include "ir/node.h"

namespace memplan::ir {

// Floating-point operations of one run of `n`, counting a multiply-add as 2
// (2*M*N*K for a matrix product). Non-zero only for the matrix and
// convolution ops and their gradients: MatMul (batch dims broadcast), Gemm,
// Conv, ConvTranspose, and com.microsoft FusedMatMul, FusedGemm, FusedConv,
// ConvGrad, ConvTransposeGrad. 0 when a shape it needs is not known.
double node_flops(const Graph& g, const Node& n);

// Bytes the node reads and writes: the sum of its input and output tensor
// sizes, counting each slot, and for ai.memplan AdamWStep also the
// parameter and moments it writes in place. 0 for ops that ONNX Runtime runs as views or
// metadata reads (Reshape, Shape, ...), which move no tensor data.
double node_bytes_moved(const Graph& g, const Node& n);

// max(flops / peak_flops, bytes moved / memory bandwidth, launch_seconds).
// Throws UsageError when the device has no positive peak_flops or memory
// bandwidth (a hand-made DeviceSpec rather than a preset).
double roofline_seconds(const Graph& g, const Node& n, const DeviceSpec& d);

}  // namespace memplan::ir
