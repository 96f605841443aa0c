#pragma once
// report.md: what a person reads after `memplan plan`.
#include <string>

#include "ir/graph.h"
#include "planner/plan.h"
#include "planner/simulator.h"

namespace memplan::planner {

struct ReportContext {
  std::string solver_used;
  std::string note;
  std::size_t rounds = 0;
};

std::string plan_report_markdown(const ir::Graph& graph, const Plan& plan, const SimResult& sim,
                                 const ReportContext& context);

}  // namespace memplan::planner
