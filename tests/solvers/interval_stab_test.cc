#include "solvers/interval_stab.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace memplan::solvers {
namespace {

std::vector<std::size_t> stabbed(const IntervalStab& index, std::int64_t s) {
  std::vector<std::size_t> ids;
  index.for_each_containing(s, [&](std::size_t id) { ids.push_back(id); });
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(IntervalStab, ReportsExactlyTheWindowsContainingEachStep) {
  std::mt19937 rng(7);
  for (std::int64_t steps : {1, 2, 5, 64, 97}) {
    std::vector<Interval> windows(200);
    for (Interval& w : windows) {
      // Some empty, some reaching past either end.
      w.begin = static_cast<std::int64_t>(rng() % (steps + 4)) - 2;
      w.end = w.begin + static_cast<std::int64_t>(rng() % (steps + 2)) - 1;
    }
    const IntervalStab index(steps, windows);
    for (std::int64_t s = -1; s <= steps; ++s) {
      std::vector<std::size_t> expect;
      for (std::size_t k = 0; k < windows.size(); ++k)
        if (s >= 0 && s < steps && windows[k].contains(s)) expect.push_back(k);
      ASSERT_EQ(stabbed(index, s), expect) << "steps " << steps << ", step " << s;
    }
  }
}

TEST(IntervalStab, NoWindowsAndNoSteps) {
  const IntervalStab none(10, {});
  EXPECT_TRUE(stabbed(none, 3).empty());
  const std::vector<Interval> one{{0, 5}};
  const IntervalStab no_steps(0, one);
  EXPECT_TRUE(stabbed(no_steps, 0).empty());
}

}  // namespace
}  // namespace memplan::solvers
