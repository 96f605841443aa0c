#include "planner/plan.h"

#include <array>
#include <utility>

namespace memplan::planner {
namespace {

// The strings of PLAN_FORMAT.md, indexed by the enums' values.
constexpr std::array<std::string_view, 3> kDecisionNames = {"keep", "swap", "recompute"};
constexpr std::array<std::string_view, 5> kStepOpNames = {"compute", "recompute", "swap_out",
                                                          "swap_in", "free"};

template <typename Enum, std::size_t N>
std::optional<Enum> parse(const std::array<std::string_view, N>& names, std::string_view text) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == text) return static_cast<Enum>(i);
  return std::nullopt;
}

}  // namespace

std::string_view to_string(Decision d) { return kDecisionNames.at(static_cast<std::size_t>(d)); }

std::optional<Decision> parse_decision(std::string_view text) {
  return parse<Decision>(kDecisionNames, text);
}

std::string_view to_string(StepOp op) { return kStepOpNames.at(static_cast<std::size_t>(op)); }

std::optional<StepOp> parse_step_op(std::string_view text) {
  return parse<StepOp>(kStepOpNames, text);
}

}  // namespace memplan::planner
