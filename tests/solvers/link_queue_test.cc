// The link queues: copies that are each hidden alone but queue behind one
// another, the cuts a replay makes of them, and the ILP acting on the cuts.
#include "solvers/link_queue.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "solvers/ilp_solver.h"
#include "solvers/model_eval.h"

namespace memplan::solvers {
namespace {

// Ten 1 s steps. A and B (40 B each) are made at step 0 and read again at
// step 9; both must leave the device over steps 1..8 (80 of 100 B must go).
// Each copy out takes 1.5 s, and the model alone hides it (exposed 0): it
// has until step 2 begins... but the two share the link.
Problem two_copies() {
  Problem p;
  p.step_seconds.assign(10, 1.0);
  p.step_bytes.assign(10, 20);
  for (int s = 1; s <= 8; ++s) p.step_bytes[static_cast<std::size_t>(s)] = 100;
  p.budget_bytes = 20;
  p.forward_seconds = 5;
  p.backward_seconds = 5;
  p.baseline_seconds = 10;
  for (int i = 0; i < 2; ++i) {
    Candidate c;
    c.tensor = static_cast<std::uint32_t>(i);
    c.name = i == 0 ? "A" : "B";
    c.bytes = 40;
    c.made = 0;
    c.last_forward_use = 0;
    c.first_backward_use = 9;
    c.swap_gap = {1, 8};
    c.recompute_gap = {1, 8};
    c.swap_out_seconds =
        0.5;  // out: released at 1 s, due when step 1 begins (1 s): 0.5 s own overrun
    c.swap_in_seconds = 1.5;  // in: released when step 9 begins (9 s), due then too
    c.swap_exposed_seconds = 0;
    c.recompute_seconds = 1.0;
    c.can_swap = true;
    c.can_recompute = true;
    p.candidates.push_back(c);
  }
  return p;
}

TEST(LinkQueue, CopiesAreQueuedByReleaseWithDeadlinesNoEarlierThanAnIdleLinkAllows) {
  const LinkCopies q = link_copies(two_copies());
  ASSERT_EQ(q.to_host.size(), 2u);
  ASSERT_EQ(q.to_device.size(), 2u);
  EXPECT_EQ(q.to_host[0].candidate, 0u);
  EXPECT_DOUBLE_EQ(q.to_host[0].release, 1.0);   // after step 0
  EXPECT_DOUBLE_EQ(q.to_host[0].deadline, 1.5);  // T(1) = 1, but the copy alone ends at 1.5
  EXPECT_DOUBLE_EQ(q.to_device[1].release, 9.0);
  EXPECT_DOUBLE_EQ(q.to_device[1].deadline, 10.5);
}

TEST(LinkQueue, TheSecondCopyInIsLateByTheFirstOnesLength) {
  const LinkCopies q = link_copies(two_copies());
  const std::vector<Decision> both(2, Decision::kSwap);
  // Out: A 1.0-1.5, B 1.5-2.0 (due 1.5): 0.5 s late. In: A 9-10.5, B
  // 10.5-12 (due 10.5): 1.5 s late.
  EXPECT_DOUBLE_EQ(queue_delay(q, both), 2.0);
  const std::vector<LinkCut> cuts = late_copy_cuts(q, both, 1e-9);
  ASSERT_EQ(cuts.size(), 2u);
  const LinkCut& in = cuts[1];
  EXPECT_TRUE(in.to_device);
  EXPECT_EQ(in.last, 1u);
  EXPECT_EQ(in.members, (std::vector<std::size_t>{0, 1}));
  EXPECT_DOUBLE_EQ(in.capacity, 1.5);
  EXPECT_DOUBLE_EQ(in.delay(both), 1.5);
  // Valid for every assignment: B alone is not late, A alone charges nothing.
  EXPECT_DOUBLE_EQ(in.delay(std::vector<Decision>{Decision::kKeep, Decision::kSwap}), 0.0);
  EXPECT_DOUBLE_EQ(in.delay(std::vector<Decision>{Decision::kSwap, Decision::kRecompute}), 0.0);
  EXPECT_DOUBLE_EQ(queue_delay(q, std::vector<Decision>{Decision::kSwap, Decision::kRecompute}),
                   0.0);
}

// The scheduler frees late and loads early wherever the budget allows: with
// the budget binding only over steps 3..4, A's and B's copies out are due
// when step 3 begins and their copies in may start when step 5 begins, so
// the same two swaps no longer queue past their readers.
TEST(LinkQueue, CopiesUseTheStepsWithinBudgetAroundTheGap) {
  Problem p = two_copies();
  p.budget_bytes = 60;
  for (int s = 1; s <= 8; ++s)
    p.step_bytes[static_cast<std::size_t>(s)] = s == 3 || s == 4 ? 100 : 60;
  const LinkCopies q = link_copies(p);
  ASSERT_EQ(q.to_host.size(), 2u);
  EXPECT_DOUBLE_EQ(q.to_host[0].release, 1.0);
  EXPECT_DOUBLE_EQ(q.to_host[0].deadline, 3.0);
  EXPECT_DOUBLE_EQ(q.to_device[0].release, 5.0);
  EXPECT_DOUBLE_EQ(q.to_device[0].deadline, 9.0);
  // Out: A 1.0-1.5, B 1.5-2.0 (due 3). In: A 5-6.5, B 6.5-8 (due 9).
  EXPECT_DOUBLE_EQ(queue_delay(q, std::vector<Decision>(2, Decision::kSwap)), 0.0);
  EXPECT_TRUE(late_copy_cuts(q, std::vector<Decision>(2, Decision::kSwap), 1e-9).empty());
}

// The replay as the scheduler runs it. Both swapped, the budget has no
// room anywhere in the gap: A's free waits 0.5 s for its copy, B's another
// 0.5 s behind it; in the backward both copies start at the load point
// (step 9) and the reader waits until 12 s: 3 s. One swapped, the other
// recomputed: its own 0.5 s out; in, its 1.5 s copy runs beside the 1 s
// recompute that step 9's turn issues before the reader: 0.5 s.
// link_copies finds the over-budget steps around each gap through this
// index; it must answer as a scan of the steps would, off both ends too.
TEST(LinkQueue, OverBudgetStepsAnswersAsAScan) {
  std::mt19937 rng(4);
  for (std::size_t steps : {0u, 1u, 7u, 50u}) {
    Problem p;
    p.budget_bytes = 100;
    for (std::size_t s = 0; s < steps; ++s) p.step_bytes.push_back(rng() % 3 == 0 ? 150 : 50);
    const OverBudgetSteps index(p);
    auto over = [&](std::int64_t s) {
      return s >= 0 && s < static_cast<std::int64_t>(steps) &&
             p.step_bytes[static_cast<std::size_t>(s)] > p.budget_bytes;
    };
    const auto n = static_cast<std::int64_t>(steps);
    for (std::int64_t s = -3; s <= n + 3; ++s) {
      std::int64_t first = OverBudgetSteps::kNone, last = -1;
      for (std::int64_t k = n - 1; k >= std::max<std::int64_t>(s, 0); --k)
        if (over(k)) first = k;
      for (std::int64_t k = 0; k <= std::min(s, n - 1); ++k)
        if (over(k)) last = k;
      ASSERT_EQ(index.first_from(s), first) << steps << " steps, from " << s;
      ASSERT_EQ(index.last_upto(s), last) << steps << " steps, up to " << s;
    }
  }
}

TEST(LinkQueue, TheReplayChargesTheWaitsTheScheduleHas) {
  const Problem p = two_copies();
  EXPECT_DOUBLE_EQ(replayed_link_stall(p, std::vector<Decision>(2, Decision::kSwap)), 4.0);
  const std::vector<Decision> one{Decision::kSwap, Decision::kRecompute};
  EXPECT_DOUBLE_EQ(replayed_link_stall(p, one), 1.0);
  // The reported objective: the model's minus its link terms, plus the replay.
  EXPECT_DOUBLE_EQ(replayed_overhead_seconds(p, one), 1.0 + 1.0);
  EXPECT_DOUBLE_EQ(replayed_link_stall(p, std::vector<Decision>(2, Decision::kKeep)), 0.0);
}

// With room in the budget the frees wait for their copies and the copies
// in start early enough: no stall (the budget binds over steps 3..4 only).
TEST(LinkQueue, TheReplayUsesTheRoomTheBudgetLeaves) {
  Problem p = two_copies();
  p.budget_bytes = 60;
  for (int s = 1; s <= 8; ++s)
    p.step_bytes[static_cast<std::size_t>(s)] = s == 3 || s == 4 ? 100 : 60;
  EXPECT_DOUBLE_EQ(replayed_link_stall(p, std::vector<Decision>(2, Decision::kSwap)), 0.0);
  // Only one tensor's room over steps 5..8: B's copy in starts at step 9's
  // load point behind A's and its reader waits.
  for (int s = 5; s <= 8; ++s) p.step_bytes[static_cast<std::size_t>(s)] = 80;
  EXPECT_GT(replayed_link_stall(p, std::vector<Decision>(2, Decision::kSwap)), 0.0);
}

// Room for one of the two pending tensors at step 1: the compute waits
// for the copy that ends first (A, at 2 s) and keeps B while its copy runs
// (to 3 s), as the scheduler's make_room does: 1 s, not the 2 s of waiting
// on B's copy.
TEST(LinkQueue, TheReplayWaitsForTheCopyThatEndsFirst) {
  Problem p = two_copies();
  p.budget_bytes = 100;
  for (int s = 1; s <= 8; ++s) p.step_bytes[static_cast<std::size_t>(s)] = 140;
  for (Candidate& c : p.candidates) {
    c.swap_out_seconds = 1.0;
    c.swap_in_seconds = 0.0;
  }
  EXPECT_DOUBLE_EQ(replayed_link_stall(p, std::vector<Decision>(2, Decision::kSwap)), 1.0);
}

// A alone, its copy out instant, its copy in (1.5 s) hidden from its load
// point, step 6, to its reader at step 9. Where the model has step 7 over
// budget with A back, the schedule cannot reload A before step 7 ends:
// the copy runs 8-9.5 s and the reader waits 0.5 s.
TEST(LinkQueue, TheReplayReloadsAfterTheLastOverBudgetStepBeforeTheReader) {
  Problem p = two_copies();
  p.candidates.resize(1);
  p.candidates[0].swap_gap = {1, 5};
  p.candidates[0].swap_out_seconds = 0;
  p.budget_bytes = 60;
  for (int s = 6; s <= 8; ++s) p.step_bytes[static_cast<std::size_t>(s)] = 60;
  const std::vector<Decision> swap{Decision::kSwap};
  EXPECT_DOUBLE_EQ(replayed_link_stall(p, swap), 0.0);
  p.step_bytes[7] = 80;
  EXPECT_DOUBLE_EQ(replayed_link_stall(p, swap), 0.5);
}

// State kept on the host between iterations (Problem::host_copies) shares
// the links with the swaps. A alone, its copy out instant, has no room to
// come back before its reader (step 9): it runs 9-10.5 s. H's copy in (1 s,
// also for step 9) queues behind it, 10.5-11.5 s: 1 s more. H's copy out
// (2 s) after its writer, step 9, starts when that step ends (12.5 s, after
// both waits) and runs 2 s past the last step.
TEST(LinkQueue, HostStateCopiesQueueWithTheSwapsAndRunPastTheLastStep) {
  Problem p = two_copies();
  p.candidates.resize(1);
  p.candidates[0].swap_out_seconds = 0;
  p.budget_bytes = 60;
  const std::vector<Decision> swap{Decision::kSwap};
  EXPECT_DOUBLE_EQ(replayed_link_stall(p, swap), 1.5);
  HostCopy h;
  h.bytes = 10;
  h.load = 9;
  h.first_read = 9;
  h.last_read = 9;
  h.in_seconds = 1.0;
  p.host_copies.push_back(h);
  EXPECT_DOUBLE_EQ(replayed_link_stall(p, swap), 2.5);
  // With A kept no step before 9 has room for H either: it is 1 s late.
  EXPECT_DOUBLE_EQ(replayed_link_stall(p, std::vector<Decision>{Decision::kKeep}), 1.0);
  p.host_copies[0].written = 9;
  p.host_copies[0].out_seconds = 2.0;
  EXPECT_DOUBLE_EQ(replayed_link_stall(p, swap), 4.5);
  EXPECT_DOUBLE_EQ(replayed_link_stall(p, std::vector<Decision>{Decision::kKeep}), 3.0);
  // The objective: the model's constant for those copies gives way to the replay.
  p.host_copy_seconds = 2.0;
  EXPECT_DOUBLE_EQ(replayed_overhead_seconds(p, swap), 4.5);
}

// No limit (the largest budget there is) leaves room everywhere: no wait.
TEST(LinkQueue, TheReplayUnderNoLimitNeverWaits) {
  Problem p = two_copies();
  p.budget_bytes = std::numeric_limits<std::uint64_t>::max();
  EXPECT_DOUBLE_EQ(replayed_link_stall(p, std::vector<Decision>(2, Decision::kSwap)), 0.0);
}

TEST(LinkQueue, TheIlpStopsQueueingOnceTheReplayShowsTheWait) {
  const Problem p = two_copies();
  // The model alone sees two free swaps; the queues make one of them cost 2 s.
  EXPECT_DOUBLE_EQ(evaluate(p, std::vector<Decision>(2, Decision::kSwap)).overhead_seconds, 0.0);
  const Solution s = IlpSolver().solve(p, {});
  ASSERT_EQ(s.status, SolveStatus::kOptimal) << s.note;
  int swaps = 0, recomputes = 0;
  for (Decision d : s.choice) {
    swaps += d == Decision::kSwap;
    recomputes += d == Decision::kRecompute;
  }
  EXPECT_EQ(swaps, 1);
  EXPECT_EQ(recomputes, 1);
  // Reported with the link replayed as the scheduler runs it: the kept
  // swap's own 0.5 s out and the 0.5 s of its 1.5 s copy in that the 1 s
  // recompute before the reader does not cover (this hand-made problem
  // leaves both out of its exposed time), on top of that recompute.
  EXPECT_DOUBLE_EQ(s.objective_seconds, 2.0);
  EXPECT_NE(s.note.find("link-queue cuts"), std::string::npos) << s.note;
  EXPECT_DOUBLE_EQ(queue_delay(link_copies(p), s.choice), 0.0);
}

}  // namespace
}  // namespace memplan::solvers
