// ir::MemoryTracker: the byte arithmetic every step-by-step account of
// device memory relies on, and check()'s recount.
#include "ir/memory_tracker.h"

#include <gtest/gtest.h>

#include <random>

namespace memplan::ir {
namespace {

TEST(MemoryTracker, CountsBytesAndPeakThroughAllocateAndRelease) {
  MemoryTracker m({100, 20, 3});
  EXPECT_TRUE(m.allocate(0));
  EXPECT_TRUE(m.allocate(2));
  EXPECT_EQ(m.bytes_in_use(), 103u);  // 100 + 3
  EXPECT_FALSE(m.allocate(0));        // already resident: no change
  EXPECT_EQ(m.bytes_in_use(), 103u);
  EXPECT_TRUE(m.release(0));
  EXPECT_FALSE(m.release(0));  // not resident: no change
  EXPECT_TRUE(m.allocate(1));
  EXPECT_EQ(m.bytes_in_use(), 23u);  // 20 + 3
  EXPECT_EQ(m.peak_bytes(), 103u);   // the peak stays at its highest
  EXPECT_EQ(m.resident_tensors(), (std::vector<TensorId>{1, 2}));
  EXPECT_EQ(m.check(), "");
}

TEST(MemoryTracker, FitsIsTheBudgetTestWithoutOverflow) {
  MemoryTracker m({60, 50});
  m.allocate(0);
  EXPECT_TRUE(m.fits(40, 100));   // 60 + 40 = 100
  EXPECT_FALSE(m.fits(41, 100));  // 101
  EXPECT_FALSE(m.fits(UINT64_MAX, 100));
  EXPECT_TRUE(m.fits(UINT64_MAX - 60, UINT64_MAX));
  m.allocate(1);                 // 110 in use
  EXPECT_FALSE(m.fits(0, 100));  // already over
}

TEST(MemoryTracker, RecountAgreesAfterARandomWalk) {
  std::mt19937 rng(7);
  std::vector<std::uint64_t> bytes(64);
  for (auto& b : bytes) b = rng() % 1000;
  MemoryTracker m(bytes);
  std::vector<bool> mine(bytes.size(), false);
  std::uint64_t expect = 0, peak = 0;
  int changes = 0;
  for (int i = 0; i < 2000; ++i) {
    const TensorId t = rng() % bytes.size();
    const bool add = rng() % 2 == 0;
    const bool changed = add ? m.allocate(t) : m.release(t);
    EXPECT_EQ(changed, add != mine[t]);
    if (changed) {
      ++changes;
      expect = add ? expect + bytes[t] : expect - bytes[t];
      mine[t] = add;
      peak = std::max(peak, expect);
    }
    ASSERT_EQ(m.bytes_in_use(), expect) << "after " << i + 1 << " operations";
  }
  EXPECT_EQ(m.peak_bytes(), peak);
  EXPECT_EQ(m.check(), "");
  EXPECT_GT(changes, 500);  // the walk did change the state, often
}

TEST(MemoryTracker, StartsWhereTheGraphDoes) {
  Graph g;
  const TensorId x = g.add_tensor("x"), w = g.add_tensor("w"), y = g.add_tensor("y");
  g.mutable_tensors()[x].is_graph_input = true;
  g.mutable_tensors()[x].bytes = 16;
  g.mutable_tensors()[w].is_initializer = true;
  g.mutable_tensors()[w].bytes = 8;
  g.mutable_tensors()[y].bytes = 32;
  const MemoryTracker m = MemoryTracker::at_start(g);
  EXPECT_EQ(m.bytes_in_use(), 24u);  // x 16 + w 8
  EXPECT_EQ(m.peak_bytes(), 24u);
  EXPECT_TRUE(m.resident(x) && m.resident(w));
  EXPECT_FALSE(m.resident(y));
}

}  // namespace
}  // namespace memplan::ir
