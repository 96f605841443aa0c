// solvers/solution_wire: what an isolated ILP solve sends back is the
// Solution it made, and bytes cut short are refused, not misread.
#include "solvers/solution_wire.h"

#include <gtest/gtest.h>

#include <string>

namespace memplan::solvers {
namespace {

WireSolution sample() {
  WireSolution w;
  w.solution.choice = {Decision::kKeep, Decision::kSwap, Decision::kRecompute};
  w.solution.status = SolveStatus::kTimeLimit;
  w.solution.objective_seconds = 0.125;
  w.solution.bound_seconds = 0.0625;
  w.solution.solve_seconds = 2.5;
  w.solution.note = "990 binaries; 7 link-queue cuts";
  w.interrupted = true;
  return w;
}

TEST(SolutionWire, ARoundTripGivesTheSolutionBack) {
  const WireSolution w = sample();
  const auto back = decode_solution(encode_solution(w));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->solution.choice, w.solution.choice);
  EXPECT_EQ(back->solution.status, w.solution.status);
  EXPECT_EQ(back->solution.objective_seconds, w.solution.objective_seconds);
  EXPECT_EQ(back->solution.bound_seconds, w.solution.bound_seconds);
  EXPECT_EQ(back->solution.solve_seconds, w.solution.solve_seconds);
  EXPECT_EQ(back->solution.note, w.solution.note);
  EXPECT_TRUE(back->interrupted);
}

TEST(SolutionWire, NoBoundStaysNoBound) {
  WireSolution w = sample();
  w.solution.bound_seconds.reset();
  w.interrupted = false;
  const auto back = decode_solution(encode_solution(w));
  ASSERT_TRUE(back.has_value());
  EXPECT_FALSE(back->solution.bound_seconds.has_value());
  EXPECT_FALSE(back->interrupted);
}

TEST(SolutionWire, BytesCutShortOrTooManyAreRefused) {
  const std::string bytes = encode_solution(sample());
  int refused = 0;
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(decode_solution(bytes.substr(0, n)).has_value()) << n;
    ++refused;
  }
  EXPECT_FALSE(decode_solution(bytes + "x").has_value());
  EXPECT_EQ(refused, static_cast<int>(bytes.size()));
}

}  // namespace
}  // namespace memplan::solvers
