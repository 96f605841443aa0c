#include "ir/roofline.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ir/device_presets.h"
#include "util/errors.h"

namespace memplan::ir {
namespace {

constexpr std::int32_t kFloat = 1;  // TensorProto::FLOAT

TensorId add_float(Graph& g, const std::string& name, std::vector<std::int64_t> shape) {
  TensorId id = g.add_tensor(name);
  Tensor& t = g.mutable_tensors()[id];
  t.elem_type = kFloat;
  std::uint64_t n = 1;
  for (auto d : shape) n *= static_cast<std::uint64_t>(d);
  t.bytes = 4 * n;
  t.shape = std::move(shape);
  t.shape_known = true;
  return id;
}

NodeId add_op(Graph& g, std::string op, std::vector<TensorId> in, std::vector<TensorId> out,
              std::string domain = "", Attributes attrs = {}) {
  Node n;
  n.name = op + "_" + std::to_string(g.nodes().size());
  n.op_type = std::move(op);
  n.domain = std::move(domain);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  n.attrs = std::move(attrs);
  return g.add_node(std::move(n));
}

double flops_of(const Graph& g, NodeId id) { return node_flops(g, g.node(id)); }

// A device with round figures so expected seconds are easy to check.
DeviceSpec toy_device() {
  return {.name = "toy",
          .memory_bytes = 1 << 30,
          .h2d_bytes_per_s = 1e9,
          .d2h_bytes_per_s = 1e9,
          .peak_flops = 1e3,
          .memory_bytes_per_s = 1e9,
          .launch_seconds = 5e-6,
          .source = "round figures for the tests"};
}

TEST(Roofline, MatMulWithBatchBroadcast) {
  Graph g;
  // [2,3,4,5] x [5,6] -> [2,3,4,6]: 2 * (2*3*4*6 = 144 outputs) * K=5 = 1440.
  NodeId a = add_op(g, "MatMul", {add_float(g, "A", {2, 3, 4, 5}), add_float(g, "B", {5, 6})},
                    {add_float(g, "Y", {2, 3, 4, 6})});
  EXPECT_DOUBLE_EQ(flops_of(g, a), 1440);
  // [4,5] x [3,5,6] -> [3,4,6]: the left operand is broadcast over 3;
  // 2 * (3*4*6 = 72) * 5 = 720.
  NodeId b = add_op(g, "MatMul", {add_float(g, "A2", {4, 5}), add_float(g, "B2", {3, 5, 6})},
                    {add_float(g, "Y2", {3, 4, 6})});
  EXPECT_DOUBLE_EQ(flops_of(g, b), 720);
}

TEST(Roofline, GemmHonoursTransA) {
  Graph g;
  // [8,16] x [16,32] -> [8,32]: 2 * 8*32 * 16 = 8192.
  NodeId plain = add_op(g, "Gemm", {add_float(g, "A", {8, 16}), add_float(g, "B", {16, 32})},
                        {add_float(g, "Y", {8, 32})});
  EXPECT_DOUBLE_EQ(flops_of(g, plain), 8192);
  // transA: A is [K=16, M=8]; same product, same 8192 (reading K as A[1] would give 4096).
  Attributes trans;
  trans.ints["transA"] = {1};
  NodeId t = add_op(g, "Gemm", {add_float(g, "At", {16, 8}), add_float(g, "Bt", {16, 32})},
                    {add_float(g, "Yt", {8, 32})}, "", trans);
  EXPECT_DOUBLE_EQ(flops_of(g, t), 8192);
}

TEST(Roofline, FusedMatMulFromOrtGradients) {
  Graph g;
  Attributes trans;
  trans.ints["transA"] = {1};
  // dW = A^T x dY per batch: A [2,16,8] transposed -> [2,8,16], x [2,16,32] -> [2,8,32]:
  // 2 * (2*8*32 = 512) * K=16 = 16384.
  NodeId n =
      add_op(g, "FusedMatMul", {add_float(g, "A", {2, 16, 8}), add_float(g, "B", {2, 16, 32})},
             {add_float(g, "Y", {2, 8, 32})}, "com.microsoft", trans);
  EXPECT_DOUBLE_EQ(flops_of(g, n), 16384);
  // The same op in the default domain is not FusedMatMul: memory-bound, no FLOPs.
  NodeId other = add_op(g, "FusedMatMul", {g.find_tensor("A").value(), g.find_tensor("B").value()},
                        {add_float(g, "Y2", {2, 8, 32})});
  EXPECT_EQ(flops_of(g, other), 0);
}

TEST(Roofline, ConvAndGroupedConv) {
  Graph g;
  // X [2,3,32,32], W [16,3,3,3], Y [2,16,30,30]:
  // 2*N*Cout*Hout*Wout*(Cin/group)*kh*kw = 2*2*16*30*30*3*3*3 = 2*28800*27 = 1,555,200.
  NodeId c =
      add_op(g, "Conv", {add_float(g, "X", {2, 3, 32, 32}), add_float(g, "W", {16, 3, 3, 3})},
             {add_float(g, "Y", {2, 16, 30, 30})});
  EXPECT_DOUBLE_EQ(flops_of(g, c), 1555200);
  // group=4: X [1,8,10,10], W [8,2,3,3], Y [1,8,8,8]: 2*1*8*8*8*(8/4=2)*3*3 = 2*512*18 = 18432.
  Attributes grouped;
  grouped.ints["group"] = {4};
  NodeId gc =
      add_op(g, "Conv", {add_float(g, "Xg", {1, 8, 10, 10}), add_float(g, "Wg", {8, 2, 3, 3})},
             {add_float(g, "Yg", {1, 8, 8, 8})}, "", grouped);
  EXPECT_DOUBLE_EQ(flops_of(g, gc), 18432);
}

TEST(Roofline, ConvGradCountsEachGradientItMakes) {
  Graph g;
  TensorId dy = add_float(g, "dY", {2, 16, 30, 30});
  TensorId x = add_float(g, "X", {2, 3, 32, 32});
  TensorId w = add_float(g, "W", {16, 3, 3, 3});
  // dX and dW (and dB): each one forward conv, 2 * 1,555,200 = 3,110,400.
  NodeId both = add_op(g, "ConvGrad", {dy, x, w},
                       {add_float(g, "dX", {2, 3, 32, 32}), add_float(g, "dW", {16, 3, 3, 3}),
                        add_float(g, "dB", {16})},
                       "com.microsoft");
  EXPECT_DOUBLE_EQ(flops_of(g, both), 3110400);
  // The first layer needs no dX: dW and dB only, 1,555,200.
  NodeId dw_only =
      add_op(g, "ConvGrad", {dy, x, w},
             {add_float(g, "dW1", {16, 3, 3, 3}), add_float(g, "dB1", {16})}, "com.microsoft");
  EXPECT_DOUBLE_EQ(flops_of(g, dw_only), 1555200);
}

TEST(Roofline, ConvTranspose) {
  Graph g;
  // X [1,4,5,5], W [Cin=4, Cout/group=2, 3, 3], Y [1,2,7,7]: each of the 100 input
  // elements feeds 2*3*3 = 18 outputs: 2 * 100 * 18 = 3600.
  NodeId n =
      add_op(g, "ConvTranspose", {add_float(g, "X", {1, 4, 5, 5}), add_float(g, "W", {4, 2, 3, 3})},
             {add_float(g, "Y", {1, 2, 7, 7})});
  EXPECT_DOUBLE_EQ(flops_of(g, n), 3600);
}

TEST(Roofline, ElementwiseOpsAreMemoryBound) {
  Graph g;
  NodeId relu =
      add_op(g, "Relu", {add_float(g, "X", {1024, 1024})}, {add_float(g, "Y", {1024, 1024})});
  EXPECT_EQ(flops_of(g, relu), 0);
  // Reads 4 MiB and writes 4 MiB: 8,388,608 bytes at 1e9 B/s.
  EXPECT_DOUBLE_EQ(node_bytes_moved(g, g.node(relu)), 8388608);
  EXPECT_DOUBLE_EQ(roofline_seconds(g, g.node(relu), toy_device()), 8388608 / 1e9);
}

TEST(Roofline, ComputeBoundTakesTheFlopTerm) {
  Graph g;
  NodeId mm = add_op(g, "MatMul", {add_float(g, "A", {2, 3, 4, 5}), add_float(g, "B", {5, 6})},
                     {add_float(g, "Y", {2, 3, 4, 6})});
  // 1440 FLOPs at 1e3 FLOP/s = 1.44 s, far above the bytes term (~1e-6 s).
  EXPECT_DOUBLE_EQ(roofline_seconds(g, g.node(mm), toy_device()), 1.44);

  // On a real preset a 4096^3 product is compute-bound: 2*4096^3 = 1.37e11 FLOPs
  // / 156e12 = 881 us, against 3 * 64 MiB / 1555e9 B/s = 129 us.
  Graph big;
  NodeId bm =
      add_op(big, "MatMul", {add_float(big, "A", {4096, 4096}), add_float(big, "B", {4096, 4096})},
             {add_float(big, "Y", {4096, 4096})});
  const DeviceSpec& a100 = device_preset("a100-40gb");
  EXPECT_DOUBLE_EQ(roofline_seconds(big, big.node(bm), a100), 2.0 * 4096 * 4096 * 4096 / 156e12);
}

TEST(Roofline, LaunchFloorForTinyAndUnknownShapes) {
  Graph g;
  TensorId x = g.add_tensor("x");  // shape not known, bytes 0
  TensorId y = g.add_tensor("y");
  TensorId w = g.add_tensor("w");
  NodeId mm = add_op(g, "MatMul", {x, w}, {y});
  EXPECT_EQ(flops_of(g, mm), 0);
  EXPECT_DOUBLE_EQ(roofline_seconds(g, g.node(mm), toy_device()), 5e-6);
  NodeId tiny =
      add_op(g, "Add", {add_float(g, "a", {4}), add_float(g, "b", {4})}, {add_float(g, "c", {4})});
  EXPECT_DOUBLE_EQ(roofline_seconds(g, g.node(tiny), toy_device()), 5e-6);
}

TEST(Roofline, ViewsMoveNoData) {
  Graph g;
  NodeId r = add_op(g, "Reshape", {add_float(g, "X", {1024, 1024}), add_float(g, "s", {1})},
                    {add_float(g, "Y", {1048576})});
  EXPECT_EQ(node_bytes_moved(g, g.node(r)), 0);
  EXPECT_DOUBLE_EQ(roofline_seconds(g, g.node(r), toy_device()), 5e-6);
}

TEST(Roofline, DeviceWithoutRatesIsRejected) {
  Graph g;
  NodeId relu = add_op(g, "Relu", {add_float(g, "X", {4})}, {add_float(g, "Y", {4})});
  DeviceSpec d = toy_device();
  d.peak_flops = 0;
  EXPECT_THROW(roofline_seconds(g, g.node(relu), d), UsageError);
  d = toy_device();
  d.memory_bytes_per_s = 0;
  EXPECT_THROW(roofline_seconds(g, g.node(relu), d), UsageError);
}

}  // namespace
}  // namespace memplan::ir
