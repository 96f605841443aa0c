#pragma once
// A graph whose backward holds two reloads across a peak: the over-budget
// repair's test bed (split_order_test.cc, realised_reloads_test.cc).
#include "scheduler_test_util.h"

namespace memplan::planner::sched_test {

// Forward: a = Concat(x, x) (64 B) and b = Relu(x) (32 B). The backward
// reads a at bw0 and bw5 and b at bw1 and bw6, with a 128-B temporary
// between: both are held across that peak unless split.
inline ir::Graph two_held_graph() {
  test::ModelBuilder b;
  b.input("x", {"batch", std::int64_t{4}});
  test::set_int_attr(b.node("Concat", {"x", "x"}, {"a"}, "f0"), "axis", 1);
  b.node("Relu", {"x"}, {"b"}, "f1");
  test::set_int_attr(b.node("Concat", {"a", "b"}, {"c"}, "f2"), "axis", 1);
  test::set_int_attr(b.node("ReduceSum", {"c"}, {"loss"}, "f3"), "keepdims", 0);
  b.node("Neg", {"a"}, {"ga"}, "bw0");
  b.node("Neg", {"b"}, {"gb"}, "bw1");
  test::set_int_attr(b.node("Concat", {"x", "x", "x", "x"}, {"big"}, "bw2"), "axis", 1);
  test::set_int_attr(b.node("ReduceSum", {"big"}, {"s"}, "bw3"), "keepdims", 0);
  b.node("Neg", {"s"}, {"t"}, "bw4");
  b.node("Mul", {"a", "ga"}, {"ha"}, "bw5");
  b.node("Mul", {"b", "gb"}, {"hb"}, "bw6");
  b.output("loss").output("ha").output("hb").output("t");
  return sched_test::load(b, "sched_two_held");
}

}  // namespace memplan::planner::sched_test
