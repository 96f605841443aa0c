#pragma once
// A parameter W, its gradient's accumulation buffer and a data input x
// around a small forward and backward (the training state tests').
#include <cstdint>
#include <string>

#include "scheduler_test_util.h"

namespace memplan::planner::sched_test {

// float32, batch 64: activations of 4 KiB; W [16,16] and the buffer 1 KiB.
//   forward:  f0 h = MatMul(x, W)  f1 a = Relu(h)  f2 c = Tanh(a)  f3 loss
//   backward: bw0 d1 = Neg(c)  bw1 d2 = Mul(d1, a)  bw2 xt = Transpose(x)
//             bw3 W_grad = MatMul(xt, d2)  bw4 dh = MatMul(d2, W)
//             bw5: `in_place` flag = InPlaceAccumulatorV2(buf, W_grad),
//             writing buf; otherwise W_grad.accumulation.out = Add(buf, W_grad)
//   with `read_after` (in place only): bw6 step = Neg(buf), an optimizer's
//   read of the buffer after its last write.
inline ir::Graph param_graph(const std::string& stem, bool in_place, bool read_after = false) {
  const char* buf = "W_grad.accumulation.buffer";
  test::ModelBuilder b;
  b.input("x", {"batch", std::int64_t{16}});
  b.input("W", {std::int64_t{16}, std::int64_t{16}});
  b.input(buf, {std::int64_t{16}, std::int64_t{16}});
  b.node("MatMul", {"x", "W"}, {"h"}, "f0");
  b.node("Relu", {"h"}, {"a"}, "f1");
  b.node("Tanh", {"a"}, {"c"}, "f2");
  test::set_int_attr(b.node("ReduceSum", {"c"}, {"loss"}, "f3"), "keepdims", 0);
  b.node("Neg", {"c"}, {"d1"}, "bw0");
  b.node("Mul", {"d1", "a"}, {"d2"}, "bw1");
  b.node("Transpose", {"x"}, {"xt"}, "bw2");
  b.node("MatMul", {"xt", "d2"}, {"W_grad"}, "bw3");
  b.node("MatMul", {"d2", "W"}, {"dh"}, "bw4");
  if (in_place) {
    b.node("InPlaceAccumulatorV2", {buf, "W_grad"}, {"flag"}, "bw5", "com.microsoft");
    b.output("loss").output("dh").output("flag");
    if (read_after) {
      b.node("Neg", {buf}, {"step"}, "bw6");
      b.output("step");
    }
  } else {
    b.node("Add", {buf, "W_grad"}, {"W_grad.accumulation.out"}, "bw5");
    b.output("loss").output("dh").output("W_grad.accumulation.out");
  }
  return load(b, stem, {{"batch", 64}});
}

}  // namespace memplan::planner::sched_test
