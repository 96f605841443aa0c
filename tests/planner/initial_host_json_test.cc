// `initial_host` in plan.json: written only when a plan has it (plans
// without it keep their bytes), read back by name, and refused with one line
// naming the key and the tensor when it lists what cannot start on the host.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "host_state_plan.h"
#include "planner/plan_json.h"
#include "planner/plan_validator.h"
#include "util/errors.h"

namespace memplan::planner {
namespace {

using nlohmann::json;
using test_util::host_plan;
using test_util::offload_buf_schedule;

class InitialHostJson : public ::testing::Test {
 protected:
  ir::Graph g = test_util::host_state_graph();

  // The InputError plan_from_json() throws for `doc`, or "accepted".
  std::string error_for(const json& doc) const {
    try {
      plan_from_json(g, doc, "plan.json");
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  }
  json doc_with(const json& initial_host) const {
    json doc = json::parse(plan_to_json(g, host_plan(g, offload_buf_schedule(g))).dump());
    doc["initial_host"] = initial_host;
    return doc;
  }
};

TEST_F(InitialHostJson, RoundTripsThroughTheFile) {
  const Plan plan = host_plan(g, offload_buf_schedule(g));
  const std::string path = test::temp_path("initial_host") + ".json";
  write_plan_file(g, plan, path);
  const Plan back = read_plan_file(g, path);
  EXPECT_EQ(back.initial_host, plan.initial_host);
  EXPECT_EQ(back.initial_host, std::vector<ir::TensorId>{*g.find_tensor("buf")});
  EXPECT_EQ(back.schedule, plan.schedule);
  const Validation v = validate(g, back);
  EXPECT_TRUE(v.valid) << v.message;
}

TEST_F(InitialHostJson, WrittenByNameBeforeTheScheduleOnlyWhenThereIsOne) {
  const Plan plan = host_plan(g, offload_buf_schedule(g));
  const nlohmann::ordered_json doc = plan_to_json(g, plan);
  EXPECT_EQ(doc["initial_host"], json::array({"buf"}));
  std::vector<std::string> keys;
  for (const auto& item : doc.items()) keys.push_back(item.key());
  const auto at = std::find(keys.begin(), keys.end(), "initial_host");
  ASSERT_NE(at, keys.end());
  EXPECT_EQ(*(at - 1), "tensors");
  EXPECT_EQ(*(at + 1), "schedule");
  // The streamed writer writes the same bytes.
  EXPECT_EQ(plan_file_text(g, plan), doc.dump(2) + "\n");

  Plan without = plan;
  without.initial_host.clear();
  EXPECT_FALSE(plan_to_json(g, without).contains("initial_host"));
  EXPECT_EQ(plan_file_text(g, without).find("initial_host"), std::string::npos);
}

TEST_F(InitialHostJson, SortedByTensorIdWhateverTheFileOrder) {
  const Plan back = plan_from_json(g, doc_with({"buf", "x"}), "plan.json");
  ASSERT_EQ(back.initial_host.size(), 2u);
  EXPECT_LT(back.initial_host[0], back.initial_host[1]);
}

TEST_F(InitialHostJson, AnEmptyArrayIsNoKey) {
  EXPECT_TRUE(plan_from_json(g, doc_with(json::array()), "plan.json").initial_host.empty());
}

TEST_F(InitialHostJson, WhatCannotStartOnTheHostIsAnInputError) {
  EXPECT_EQ(error_for(doc_with("buf")),
            "plan.json: initial_host: expected an array, got string \"buf\"");
  EXPECT_EQ(error_for(doc_with({3})), "plan.json: initial_host[0]: expected a string, got 3");
  EXPECT_EQ(error_for(doc_with({"buf", "ghost"})),
            "plan.json: initial_host[1]: unknown tensor \"ghost\"");
  EXPECT_EQ(error_for(doc_with({"a"})),
            "plan.json: initial_host[0]: tensor \"a\" is not a graph input or initializer: only "
            "those can start on the host");
  EXPECT_EQ(error_for(doc_with({"buf", "x", "buf"})),
            "plan.json: initial_host: tensor \"buf\" is listed twice");
}

TEST_F(InitialHostJson, AGraphOutputIsAnInputError) {
  test::ModelBuilder b;
  b.input("x", {std::int64_t{4}}).input("w", {std::int64_t{4}});
  b.node("Relu", {"x"}, {"y"}, "relu");
  b.output("y").output("w");
  const ir::Graph out_graph = ir::load_model(b.write("input_output"), {}).graph;
  json doc = json::parse(
      plan_to_json(out_graph, test_util::plan_for(
                                  out_graph, test_util::steps(out_graph, {{"compute", "relu"}})))
          .dump());
  doc["initial_host"] = {"w"};
  try {
    plan_from_json(out_graph, doc, "plan.json");
    FAIL() << "accepted a graph output";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "plan.json: initial_host[0]: tensor \"w\" is a graph output, which must be "
                 "resident at the end");
  }
}

TEST_F(InitialHostJson, TheWriterRefusesAnIdOutsideTheGraph) {
  Plan plan = host_plan(g, offload_buf_schedule(g));
  plan.initial_host.push_back(static_cast<ir::TensorId>(g.tensors().size()));
  EXPECT_THROW(plan_to_json(g, plan), InvalidPlanError);
  EXPECT_THROW(plan_file_text(g, plan), InvalidPlanError);
}

}  // namespace
}  // namespace memplan::planner
