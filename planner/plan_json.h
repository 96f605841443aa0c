#pragma once
// plan.json (PLAN_FORMAT.md, format 1): the Plan as JSON and back, and the
// files. Writing is deterministic: the same plan gives the same bytes.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ir/graph.h"
#include "planner/plan.h"

namespace memplan::planner {

inline constexpr std::string_view kPlanFormat = "memplan.plan";
inline constexpr int kPlanVersion = 1;

// Keys in the order of PLAN_FORMAT.md; every node and tensor named. Throws
// InvalidPlanError when the plan does not fit the graph (vector sizes, ids)
// or holds a time JSON cannot write (NaN, infinity).
nlohmann::ordered_json plan_to_json(const ir::Graph& graph, const Plan& plan);

// Strict: a missing key, a wrong type, a negative number, an unknown node,
// tensor, op, class, decision or status throws InputError naming `where`
// (the file) and the key, e.g. `plan.json: schedule[17].node: unknown node
// 'MatMul_9'`. Keys the format does not list are ignored. Rules about the
// schedule's meaning are left to validate().
Plan plan_from_json(const ir::Graph& graph, const nlohmann::json& doc, std::string_view where);

// The parsed document, for callers that need a key before the graph exists
// (the dims to bind). Throws InputError for an unreadable file or bad JSON.
nlohmann::json read_plan_json(const std::string& path);

Plan read_plan_file(const ir::Graph& graph, const std::string& path);

// The bytes write_plan_file() writes: plan_to_json() indented by 2, and a
// newline.
std::string plan_file_text(const ir::Graph& graph, const Plan& plan);

// Writes to a temporary file in the same directory and renames it over
// `path`, so a reader never sees half a plan. Throws InputError on I/O
// failure. Returns the sha256 of the bytes written: the rewrite records it,
// and serializing a large plan a second time to hash it cost as much as
// writing it.
std::string write_plan_file(const ir::Graph& graph, const Plan& plan, const std::string& path);

}  // namespace memplan::planner
