// `memplan validate` as a user runs it: exit 0 and the peak for a good plan,
// exit 4 and the first broken rule for a bad one.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ir/device_presets.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"
#include "planner/baseline_plan.h"
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

TEST_F(ValidateCli, UnreadablePlanIsBadInput) {
  std::string bad = edited([](json& d) { d["schedule"][0]["op"] = "teleport"; });
  auto r = run_memplan("validate " + model + " " + bad);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("schedule[0].op: unknown op"), std::string::npos) << r.err;
  EXPECT_EQ(run_memplan("validate " + model).exit_code, 1);  // PLAN missing
}

}  // namespace
}  // namespace memplan::planner
