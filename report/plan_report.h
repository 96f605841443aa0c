#pragma once
// report.md: what a person reads after `memplan plan`.
#include <string>

#include "ir/graph.h"
#include "planner/plan.h"
#include "planner/simulator.h"

namespace memplan::report {

struct ReportContext {
  std::string solver_used;
  std::string note;
  std::size_t rounds = 0;
};

std::string plan_report_markdown(const ir::Graph& graph, const planner::Plan& plan,
                                 const planner::SimResult& sim, const ReportContext& context);

}  // namespace memplan::report
