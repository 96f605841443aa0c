// The static memory layout (planner/memory_layout.h): every allocation gets
// an offset, no two live allocations share a byte, the arena stays close to
// the plan's peak, and the layout survives plan.json.
#include "planner/memory_layout.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "planner/plan_json.h"
#include "planner/tiny_plan.h"
#include "runtime_test_util.h"
#include "util/errors.h"

namespace memplan::planner {
namespace {

using test_util::plan_for;
using test_util::steps;
using test_util::tiny_graph;

// Independent of memory_layout_problem(): every pair of allocations whose
// lifetimes meet is disjoint in the arena. Lifetimes come from a plain walk
// of the schedule; O(n^2), for small plans and sampled big ones.
void expect_no_live_overlap(const Plan& plan, const MemoryLayout& layout) {
  const auto& a = layout.allocations;
  std::vector<std::int64_t> end(a.size(), static_cast<std::int64_t>(plan.schedule.size()));
  for (std::size_t i = 0; i < a.size(); ++i)
    for (auto s = static_cast<std::size_t>(std::max<std::int64_t>(a[i].step + 1, 0));
         s < plan.schedule.size(); ++s)
      if (plan.schedule[s].op == StepOp::kFree && plan.schedule[s].id == a[i].tensor) {
        end[i] = static_cast<std::int64_t>(s);
        break;
      }
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_LE(a[i].offset + a[i].bytes, layout.arena_bytes);
    for (std::size_t j = i + 1; j < a.size(); ++j) {
      const bool live_together = a[i].step < end[j] && a[j].step < end[i];
      const bool share = a[i].bytes > 0 && a[j].bytes > 0 &&
                         a[i].offset < a[j].offset + a[j].bytes &&
                         a[j].offset < a[i].offset + a[i].bytes;
      EXPECT_FALSE(live_together && share) << "allocations " << i << " and " << j << " overlap";
    }
  }
}

TEST(MemoryLayout, TinySwapPlanPlacesEveryAllocation) {
  const ir::Graph g = tiny_graph();
  const Plan plan = plan_for(g, test_util::swap_a_schedule(g));
  const MemoryLayout layout = compute_memory_layout(g, plan);
  // x and w at the start; a b c d loss computed; a swapped in once: 8.
  ASSERT_EQ(layout.allocations.size(), 8u);
  EXPECT_EQ(layout.allocations[0].step, -1);
  EXPECT_EQ(layout.allocations[1].step, -1);
  EXPECT_EQ(layout.peak_bytes, plan.predicted.peak_bytes);
  EXPECT_EQ(memory_layout_problem(g, plan, layout), "");
  expect_no_live_overlap(plan, layout);
  for (const Allocation& a : layout.allocations) EXPECT_EQ(a.offset % layout.alignment, 0u);
}

TEST(MemoryLayout, ByteAlignedLayoutOfTheBaselineIsExactlyThePeak) {
  // With alignment 1 nothing is lost to rounding; best fit over lifetimes
  // reaches the peak on this graph (192 B: x w a b c all live after neg).
  const ir::Graph g = tiny_graph();
  const Plan plan = plan_for(g, baseline_schedule(g));
  const MemoryLayout layout = compute_memory_layout(g, plan, 1);
  EXPECT_EQ(layout.peak_bytes, 192u);
  EXPECT_EQ(layout.arena_bytes, 192u);
  EXPECT_DOUBLE_EQ(layout.fragmentation(), 1.0);
  expect_no_live_overlap(plan, layout);
}

TEST(MemoryLayout, ProblemsAreFound) {
  const ir::Graph g = tiny_graph();
  const Plan plan = plan_for(g, test_util::swap_a_schedule(g));
  MemoryLayout layout = compute_memory_layout(g, plan);

  MemoryLayout overlapping = layout;
  // Put the swapped-in a onto c, which is live while a is back.
  const auto c = *g.find_tensor("c");
  for (Allocation& a : overlapping.allocations)
    if (a.step > 0 && a.tensor == *g.find_tensor("a"))
      for (const Allocation& other : layout.allocations)
        if (other.tensor == c) a.offset = other.offset;
  EXPECT_NE(memory_layout_problem(g, plan, overlapping).find("overlaps"), std::string::npos);

  MemoryLayout short_one = layout;
  short_one.allocations.pop_back();
  EXPECT_NE(memory_layout_problem(g, plan, short_one).find("allocations"), std::string::npos);

  MemoryLayout small_arena = layout;
  small_arena.arena_bytes = 64;
  EXPECT_NE(memory_layout_problem(g, plan, small_arena).find("past the arena"), std::string::npos);

  MemoryLayout unaligned = layout;
  unaligned.allocations.back().offset += 8;
  EXPECT_NE(memory_layout_problem(g, plan, unaligned), "");
}

TEST(MemoryLayout, RoundTripsThroughPlanJson) {
  const ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, test_util::swap_a_schedule(g));
  plan.memory_layout = compute_memory_layout(g, plan);
  const nlohmann::ordered_json doc = plan_to_json(g, plan);
  ASSERT_TRUE(doc.contains("memory_layout"));
  EXPECT_EQ(doc["memory_layout"]["allocations"].size(), 8u);
  EXPECT_EQ(doc["memory_layout"]["allocations"][0]["step"], -1);
  const Plan back = plan_from_json(g, nlohmann::json::parse(doc.dump()), "plan.json");
  ASSERT_TRUE(back.memory_layout.has_value());
  EXPECT_EQ(*back.memory_layout, *plan.memory_layout);

  // Plans without the key still read; a malformed key is named.
  Plan bare = plan;
  bare.memory_layout.reset();
  EXPECT_FALSE(plan_from_json(g, nlohmann::json::parse(plan_to_json(g, bare).dump()), "p")
                   .memory_layout.has_value());
  nlohmann::json bad = nlohmann::json::parse(doc.dump());
  bad["memory_layout"]["allocations"][1]["tensor"] = "nope";
  try {
    plan_from_json(g, bad, "plan.json");
    FAIL() << "an unknown tensor was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("memory_layout.allocations[1].tensor"), std::string::npos);
  }
}

// Real plans: the arena is within 5 % of the planned peak and no two live
// allocations overlap.
class FixtureLayout : public ::testing::TestWithParam<const char*> {};

TEST_P(FixtureLayout, ArenaIsCloseToThePeak) {
  const std::string solver = GetParam();
  const auto loaded = runtime::test_util::load_fixture({"resnet50", {{"batch", 1}}});
  const Plan plan = runtime::test_util::plan_fixture(loaded, solver).plan;
  const MemoryLayout layout = compute_memory_layout(loaded.graph, plan);
  EXPECT_EQ(layout, compute_memory_layout(loaded.graph, plan, MemoryLayout::kDefaultAlignment,
                                          LayoutMethod::kBySize));
  EXPECT_EQ(memory_layout_problem(loaded.graph, plan, layout), "");
  EXPECT_EQ(layout.peak_bytes, plan.predicted.peak_bytes);
  EXPECT_LE(layout.fragmentation(), 1.05);
  expect_no_live_overlap(plan, layout);
}

// The O(n log n) method large schedules get: valid, and its arena above the
// peak only by what an online allocator loses to fragmentation.
TEST_P(FixtureLayout, InScheduleOrderIsValidToo) {
  const std::string solver = GetParam();
  const auto loaded = runtime::test_util::load_fixture({"resnet50", {{"batch", 1}}});
  const Plan plan = runtime::test_util::plan_fixture(loaded, solver).plan;
  for (std::uint64_t alignment : {std::uint64_t{1}, MemoryLayout::kDefaultAlignment}) {
    const MemoryLayout layout =
        compute_memory_layout(loaded.graph, plan, alignment, LayoutMethod::kInScheduleOrder);
    // Byte alignment packs, but a plan may not carry it (the device kernels
    // need 256).
    if (alignment == MemoryLayout::kDefaultAlignment)
      EXPECT_EQ(memory_layout_problem(loaded.graph, plan, layout), "");
    else
      EXPECT_NE(memory_layout_problem(loaded.graph, plan, layout).find("alignment is 1"),
                std::string::npos);
    EXPECT_GE(layout.arena_bytes, plan.predicted.peak_bytes);
    EXPECT_LE(layout.fragmentation(), 1.5);
    expect_no_live_overlap(plan, layout);
    std::printf("%s, alignment %llu: in schedule order %.3f, by size %.3f\n", solver.c_str(),
                static_cast<unsigned long long>(alignment), layout.fragmentation(),
                compute_memory_layout(loaded.graph, plan, alignment, LayoutMethod::kBySize)
                    .fragmentation());
  }
}

INSTANTIATE_TEST_SUITE_P(Solvers, FixtureLayout, ::testing::Values("greedy", "vdnn"));

}  // namespace
}  // namespace memplan::planner
