#include "solvers/range_max_tree.h"

#include <gtest/gtest.h>

#include <random>

namespace memplan::solvers {
namespace {

TEST(RangeMaxTree, MatchesABruteForceArray) {
  std::mt19937 rng(5);
  std::vector<std::int64_t> v(97);
  for (auto& x : v) x = static_cast<std::int64_t>(rng() % 1000) - 500;
  RangeMaxTree t(v);
  for (int op = 0; op < 2000; ++op) {
    std::int64_t a = rng() % v.size(), b = rng() % v.size();
    if (a > b) std::swap(a, b);
    if (op % 2 == 0) {
      std::int64_t d = static_cast<std::int64_t>(rng() % 200) - 100;
      t.add(a, b, d);
      for (auto i = a; i <= b; ++i) v[i] += d;
    } else {
      std::int64_t expect = *std::max_element(v.begin() + a, v.begin() + b + 1);
      ASSERT_EQ(t.max(a, b), expect);
      std::int64_t threshold = static_cast<std::int64_t>(rng() % 1000) - 500, last = -1;
      for (auto i = a; i <= b; ++i)
        if (v[i] > threshold) last = i;
      ASSERT_EQ(t.last_above(a, b, threshold), last);
    }
  }
  auto it = std::max_element(v.begin(), v.end());
  EXPECT_EQ(t.max(), *it);
  EXPECT_EQ(t.argmax(), it - v.begin());
  EXPECT_EQ(t.values(), v);
}

}  // namespace
}  // namespace memplan::solvers
