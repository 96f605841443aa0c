#include "passes/engine_support.h"

namespace memplan::passes {
namespace {

std::string count(std::size_t n, const std::string& what) { return std::to_string(n) + " " + what; }

std::string ort_recomputes(const PlanSummary& s, const std::string& measured) {
  if (s.recomputes == 0) return "none to run";
  if (s.anchors == 0)
    return "run where ORT's own order puts them: " + count(s.recomputes, "clones") +
           " without anchors run as soon as their inputs exist, and from level BASIC on ORT "
           "merges a clone equal to its original into it (rewrite with --anchors remakes)";
  return count(s.recomputes, "clones") + " run after the node the plan issues each after, " +
         "held there by " + count(s.anchors, "anchors") + " (" + measured +
         "); the memory they free is freed only with SessionOptions.enable_mem_reuse = False "
         "(ORT's planner otherwise keeps a freed buffer for a later tensor of its size)";
}

constexpr const char* kSwapFunctions =
    "SwapOut and SwapIn are model-local functions whose body is Identity; ORT inlines them and "
    "its Identity elimination removes them";

}  // namespace

const std::vector<std::string>& known_engines() {
  static const std::vector<std::string> engines = {"memplan", "ort-cpu", "ort-cuda"};
  return engines;
}

std::vector<EngineSupport> engine_support(const PlanSummary& s) {
  std::vector<EngineSupport> out;
  out.push_back({"memplan",
                 s.recomputes == 0 ? "none to run"
                                   : count(s.recomputes, "recomputes") +
                                         " run in the plan's order (`memplan run`)",
                 s.swap_ins == 0
                     ? "none to run"
                     : count(s.swap_outs, "copies out") + " and " + count(s.swap_ins, "copies in") +
                           " run on the runtime's transfer streams"});
  out.push_back({"ort-cpu",
                 ort_recomputes(s,
                                "checked against ORT 1.19's profiled order at all four "
                                "optimisation levels on the test fixtures"),
                 s.swap_ins == 0 ? "none to run"
                                 : std::string("not realised: ") + kSwapFunctions +
                                       "; on the CPU host and device memory are one, so a "
                                       "swapped tensor stays where it is"});
  out.push_back({"ort-cuda",
                 ort_recomputes(s, "as on the CPU; not measured: no GPU build of ORT here"),
                 s.swap_ins == 0 ? "none to run"
                                 : std::string("not realised: ") + kSwapFunctions +
                                       "; a host copy needs a custom-op library built against "
                                       "ORT's C API, whose headers no Debian package ships"});
  return out;
}

}  // namespace memplan::passes
