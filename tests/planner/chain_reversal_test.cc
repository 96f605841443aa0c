// The reversal table against an exhaustive search of the same game: states
// y_1..y_n, each made from the one before (y_1 from a resident base), at
// most c resident at once, the backward reading y_n first and y_1 last.
#include "planner/chain_reversal.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <queue>
#include <tuple>
#include <vector>

namespace memplan::planner::detail {
namespace {

// Dijkstra over (resident set, next state the backward reads); a make costs
// one, a free nothing, a read lets the backward move on.
std::uint64_t exhaustive(int n, int c) {
  const int sets = 1 << n;
  std::vector<std::uint64_t> dist(static_cast<std::size_t>(sets * (n + 1)),
                                  std::numeric_limits<std::uint64_t>::max());
  using Item = std::tuple<std::uint64_t, int, int>;  // cost, set, next (1-based; 0: done)
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  auto push = [&](std::uint64_t d, int set, int next) {
    auto& slot = dist[static_cast<std::size_t>(set * (n + 1) + next)];
    if (d < slot) {
      slot = d;
      queue.emplace(d, set, next);
    }
  };
  push(0, 0, n);
  while (!queue.empty()) {
    const auto [d, set, next] = queue.top();
    queue.pop();
    if (d != dist[static_cast<std::size_t>(set * (n + 1) + next)]) continue;
    if (next == 0) return d;
    if (set & (1 << (next - 1))) push(d, set & ~(1 << (next - 1)), next - 1);  // read, then free
    for (int k = 1; k <= next; ++k) {
      const int bit = 1 << (k - 1);
      if (set & bit) {
        push(d, set & ~bit, next);
      } else if ((k == 1 || (set & (1 << (k - 2)))) && __builtin_popcount(set) < c) {
        push(d + 1, set | bit, next);
      }
    }
  }
  return ChainReversal::kNever;
}

TEST(ChainReversal, MatchesAnExhaustiveSearch) {
  const ChainReversal table(9, 9);
  int checked = 0;
  for (int n = 1; n <= 9; ++n) {
    for (int c = 1; c <= n + 1; ++c) {
      EXPECT_EQ(table.remakes(n, c), exhaustive(n, c)) << "n=" << n << " c=" << c;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 54);
}

TEST(ChainReversal, HoldsEverythingWhenThereIsRoom) {
  const ChainReversal table(40, 40);
  EXPECT_EQ(table.remakes(40, 40), 40u);
  EXPECT_EQ(table.checkpoint(40, 40), 1u);
  EXPECT_EQ(table.remakes(0, 3), 0u);
}

TEST(ChainReversal, TwoSlotsRerunFromTheBase) {
  // With two slots nothing can be held beside the advance: R(n) = n + R(n-2).
  const ChainReversal table(12, 2);
  EXPECT_EQ(table.remakes(2, 2), 2u);
  EXPECT_EQ(table.remakes(3, 2), 4u);
  EXPECT_EQ(table.remakes(12, 2), 42u);  // 12+10+8+6+4+2
  EXPECT_EQ(table.remakes(3, 1), ChainReversal::kNever);
  EXPECT_EQ(table.remakes(1, 0), ChainReversal::kNever);
}

TEST(ChainReversal, MoreSlotsNeverCostMore) {
  const ChainReversal table(64, 64);
  int pairs = 0;
  for (std::size_t n = 1; n <= 64; ++n)
    for (std::size_t c = 2; c < n; ++c, ++pairs)
      EXPECT_LE(table.remakes(n, c + 1), table.remakes(n, c)) << n << " " << c;
  EXPECT_EQ(pairs, 1953);
}

}  // namespace
}  // namespace memplan::planner::detail
