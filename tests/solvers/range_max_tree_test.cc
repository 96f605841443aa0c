#include "solvers/range_max_tree.h"

#include <gtest/gtest.h>

#include <random>

namespace memplan::solvers {
namespace {

// Random adds and queries against a plain array, on sizes that are and are
// not powers of two (the tree pads to one), down to a single step.
void check_against_array(std::size_t size, unsigned seed, int& checked) {
  std::mt19937 rng(seed);
  std::vector<std::int64_t> v(size);
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
      ASSERT_EQ(t.max(a, b), expect) << "size " << size << " [" << a << ", " << b << "]";
      std::int64_t threshold = static_cast<std::int64_t>(rng() % 1000) - 500, last = -1;
      for (auto i = a; i <= b; ++i)
        if (v[i] > threshold) last = i;
      ASSERT_EQ(t.last_above(a, b, threshold), last);
      checked += 2;
    }
  }
  auto it = std::max_element(v.begin(), v.end());
  EXPECT_EQ(t.max(), *it);
  EXPECT_EQ(t.argmax(), it - v.begin());
  EXPECT_EQ(t.values(), v);
  checked += 3;
}

TEST(RangeMaxTree, MatchesABruteForceArray) {
  int checked = 0;
  for (std::size_t size : {1u, 2u, 3u, 64u, 97u, 128u, 1000u})
    check_against_array(size, static_cast<unsigned>(size) + 5, checked);
  EXPECT_EQ(checked, 7 * (2000 + 3));
}

TEST(RangeMaxTree, EmptyAndOutOfRange) {
  RangeMaxTree empty({});
  EXPECT_EQ(empty.max(), INT64_MIN);
  EXPECT_EQ(empty.argmax(), -1);
  EXPECT_EQ(empty.max(0, 3), INT64_MIN);
  empty.add(0, 3, 5);  // nothing to add to
  EXPECT_TRUE(empty.values().empty());

  RangeMaxTree t({4, -2, 7});
  t.add(-5, 0, 10);  // clipped to [0, 0]
  t.add(2, 9, -8);   // clipped to [2, 2]
  EXPECT_EQ(t.values(), (std::vector<std::int64_t>{14, -2, -1}));
  EXPECT_EQ(t.max(1, 40), -1);
  EXPECT_EQ(t.max(3, 4), INT64_MIN);
  EXPECT_EQ(t.last_above(0, 2, 20), -1);
  EXPECT_EQ(t.argmax(), 0);
}

}  // namespace
}  // namespace memplan::solvers
