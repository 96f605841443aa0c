// A plan with `initial_host` cannot be written as an ONNX model: the rewrite
// refuses it with one line and a non-zero exit instead of dropping the key
// (which would leave the state on the device, over the plan's budget).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "ir/onnx_loader.h"
#include "passes/rewrite_model.h"
#include "planner/host_state_plan.h"
#include "planner/plan_json.h"
#include "planner/plan_validator.h"
#include "support/run_command.h"
#include "util/errors.h"

namespace memplan::passes {
namespace {

using planner::test_util::host_plan;
using planner::test_util::offload_buf_schedule;

TEST(InitialHostRewrite, RewriteModelRefusesIt) {
  ir::LoadedModel m = ir::load_model(planner::test_util::write_host_state_model(), {});
  const planner::Plan plan = host_plan(m.graph, offload_buf_schedule(m.graph));
  ASSERT_TRUE(planner::validate(m.graph, plan).valid);
  try {
    rewrite_model(m.proto, m.graph, plan, {});
    FAIL() << "rewrote a plan with initial_host";
  } catch (const InvalidPlanError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the plan starts 1 tensor(s) on the host (initial_host, first 'buf')"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("rewrite a plan without initial_host"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  // The same schedule's plan without the key is not refused for it.
  planner::Plan resident = host_plan(
      m.graph,
      planner::test_util::steps(
          m.graph, {{"compute", "mm"}, {"compute", "acc"}, {"compute", "sum"}, {"free", "a"}}),
      {});
  EXPECT_NO_THROW(rewrite_model(m.proto, m.graph, resident, {}));
}

TEST(InitialHostRewrite, TheCommandSaysWhyInOneLineAndWritesNothing) {
  const std::string model = planner::test_util::write_host_state_model();
  ir::LoadedModel m = ir::load_model(model, {});
  planner::Plan plan = host_plan(m.graph, offload_buf_schedule(m.graph));
  plan.model_path = model;
  plan.model_sha256 = m.sha256;
  const std::string plan_path = test::temp_path("initial_host_plan") + ".json";
  planner::write_plan_file(m.graph, plan, plan_path);
  const std::string out = test::temp_path("initial_host_rewritten") + ".onnx";

  // The plan itself is valid: validate accepts it.
  const test::CommandResult valid = test::run_memplan("validate " + model + " " + plan_path);
  EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;

  const test::CommandResult r =
      test::run_memplan("rewrite " + model + " --plan " + plan_path + " -o " + out);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("initial_host, first 'buf'"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace memplan::passes
