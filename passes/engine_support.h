#pragma once
// Which of a rewritten model's decisions each engine carries out, for
// `memplan explain`: memplan's own runtime runs the plan as written; ONNX
// Runtime runs the recomputes (in the plan's place when they are anchored)
// but cannot run the swaps (docs/ort-anchoring.md).
#include <string>
#include <vector>

#include "passes/plan_summary.h"

namespace memplan::passes {

struct EngineSupport {
  std::string engine;      // "memplan", "ort-cpu", "ort-cuda"
  std::string recomputes;  // what happens to the recomputes, one sentence
  std::string swaps;       // what happens to the swaps, one sentence
};

// The engines `memplan explain --engine` knows.
const std::vector<std::string>& known_engines();

// What each engine does with the decisions the summary counts.
std::vector<EngineSupport> engine_support(const PlanSummary& summary);

}  // namespace memplan::passes
