// `memplan validate` as a user runs it: exit 0 and the peak for a good plan,
// exit 4 and the first broken rule for a bad one.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ir/device_presets.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"
#include "planner/baseline_plan.h"
#include "planner/memory_layout.h"
#include "planner/plan_json.h"
#include "support/model_builder.h"
#include "support/run_command.h"
#include "tiny_plan.h"

namespace memplan::planner {
namespace {

using nlohmann::json;
using test::run_memplan;

class ValidateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    model = test_util::write_tiny_model(/*symbolic_batch=*/true);
    ir::LoadOptions o;
    o.dims["batch"] = 2;
    loaded = ir::load_model(model, o);
    std::vector<std::string> warnings;
    ir::NodeCosts costs = ir::make_node_costs(loaded.graph, ir::device_preset("a100-40gb"), {},
                                              "roofline a100-40gb", warnings);
    Plan plan = baseline_plan(loaded.graph, costs, {model, loaded.sha256, std::nullopt});
    plan_path = test::temp_path("cli_plan") + ".json";
    write_plan_file(loaded.graph, plan, plan_path);
  }

  // The written plan, edited, saved under a new name.
  std::string edited(const std::function<void(json&)>& edit) {
    std::ifstream in(plan_path);
    json doc = json::parse(in);
    edit(doc);
    return test::write_temp("edited.json", doc.dump(2));
  }

  std::string model, plan_path;
  ir::LoadedModel loaded;
};

TEST_F(ValidateCli, ValidPlanExitsZero) {
  // No --dim: the plan's model.dims (batch=2) are bound.
  auto r = run_memplan("validate " + model + " " + plan_path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("valid: peak 192 bytes (192 B), iteration"), std::string::npos) << r.out;

  auto j = run_memplan("validate " + model + " " + plan_path + " --dim batch=2 --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  json doc = json::parse(j.out);
  EXPECT_EQ(doc["valid"], true);
  EXPECT_EQ(doc["peak_bytes"], 192);
}

TEST_F(ValidateCli, BrokenRuleExitsFour) {
  // Swap "free b" (step 3) before "compute neg" (step 2): neg reads b.
  std::string bad = edited([](json& d) { std::swap(d["schedule"][2], d["schedule"][3]); });
  auto r = run_memplan("validate " + model + " " + bad);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("step 3 (compute 'neg'): input 'b' is not resident"), std::string::npos)
      << r.err;

  auto j = run_memplan("validate " + model + " " + bad + " --json");
  EXPECT_EQ(j.exit_code, 4);
  json doc = json::parse(j.out);
  EXPECT_EQ(doc["valid"], false);
  EXPECT_EQ(doc["step"], 3);
}

TEST_F(ValidateCli, OtherModelFileIsInvalid) {
  std::string other = edited([](json& d) { d["model"]["sha256"] = std::string(64, 'f'); });
  auto r = run_memplan("validate " + model + " " + other);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("the plan was made for another model file"), std::string::npos) << r.err;
}

TEST_F(ValidateCli, OtherDimsAreInvalid) {
  auto r = run_memplan("validate " + model + " " + plan_path + " --dim batch=3");
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("model.dims {batch=2} differ from the graph's {batch=3}"), std::string::npos)
      << r.err;
}

// The plan with a computed memory_layout and a budget it fits, edited.
std::string with_layout(const ir::Graph& g, const std::string& plan_path,
                        const std::function<void(json&)>& edit) {
  std::ifstream in(plan_path);
  Plan plan = plan_from_json(g, json::parse(in), plan_path);
  plan.budget_bytes = 1 << 20;
  plan.memory_layout = compute_memory_layout(g, plan);
  json doc = json::parse(plan_to_json(g, plan).dump());
  edit(doc);
  return test::write_temp("layout.json", doc.dump(2));
}

TEST_F(ValidateCli, LayoutRulesAreChecked) {
  const ir::Graph& g = loaded.graph;
  auto good = run_memplan("validate " + model + " " + with_layout(g, plan_path, [](json&) {}));
  EXPECT_EQ(good.exit_code, 0) << good.err;

  auto misaligned = run_memplan("validate " + model + " " + with_layout(g, plan_path, [](json& d) {
                                  d["memory_layout"]["alignment"] = 4;
                                  for (json& a : d["memory_layout"]["allocations"])
                                    a["offset"] = a["offset"].get<std::uint64_t>() + 4;
                                }));
  EXPECT_EQ(misaligned.exit_code, 4);
  EXPECT_NE(misaligned.err.find(": invalid: memory_layout.alignment is 4: it must be a power of "
                                "two of at least 256"),
            std::string::npos)
      << misaligned.err;

  auto shifted = run_memplan("validate " + model + " " + with_layout(g, plan_path, [](json& d) {
                               json& a = d["memory_layout"]["allocations"][0];
                               a["offset"] = a["offset"].get<std::uint64_t>() + 8;
                             }));
  EXPECT_EQ(shifted.exit_code, 4);
  EXPECT_NE(shifted.err.find("is not aligned to 256"), std::string::npos) << shifted.err;

  auto over = run_memplan("validate " + model + " " + with_layout(g, plan_path, [](json& d) {
                            d["budget_bytes"] = d["memory_layout"]["arena_bytes"].get<int>() - 256;
                          }));
  EXPECT_EQ(over.exit_code, 4);
  EXPECT_NE(over.err.find("is over budget_bytes"), std::string::npos) << over.err;
  EXPECT_EQ(std::count(over.err.begin(), over.err.end(), '\n'), 1) << over.err;
}

TEST_F(ValidateCli, UnreadablePlanIsBadInput) {
  std::string bad = edited([](json& d) { d["schedule"][0]["op"] = "teleport"; });
  auto r = run_memplan("validate " + model + " " + bad);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("schedule[0].op: unknown op"), std::string::npos) << r.err;
  EXPECT_EQ(run_memplan("validate " + model).exit_code, 1);  // PLAN missing
}

}  // namespace
}  // namespace memplan::planner
