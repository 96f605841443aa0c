#pragma once
// A simulated timeline checked step by step against the one wanted.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "planner/simulator.h"

namespace memplan::planner::test_util {

struct Expect {
  Stream stream;
  double start, end;
  std::uint64_t bytes;
};

inline void expect_timeline(const SimResult& r, const std::vector<Expect>& want) {
  ASSERT_EQ(r.steps.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r.steps[i].stream, want[i].stream) << "step " << i;
    EXPECT_DOUBLE_EQ(r.steps[i].start, want[i].start) << "step " << i;
    EXPECT_DOUBLE_EQ(r.steps[i].end, want[i].end) << "step " << i;
    EXPECT_EQ(r.steps[i].bytes_in_use_after, want[i].bytes) << "step " << i;
  }
}

}  // namespace memplan::planner::test_util
