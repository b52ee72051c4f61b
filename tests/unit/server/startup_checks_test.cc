// What is checked before the server serves (issue 29): a config that could never become ready
// (an unknown engine, a misspelled engine option, workers pinned to CPUs the process may not
// use) is an error at startup, not a server that sits there unready.
#include "server/startup_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace voxserve::server {
namespace {

using ::testing::HasSubstr;

ServerConfig WithModel(const std::string& engine, std::map<std::string, std::string> options) {
  ServerConfig config;
  service::ModelConfig model;
  model.engine.model_id = "m";
  model.engine.engine = engine;
  model.engine.options = std::move(options);
  config.service.models.push_back(model);
  return config;
}

std::string MessageOf(const absl::Status& status) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  return std::string(status.message());
}

TEST(CheckModelsCanStart, AcceptsKnownEnginesWithTheirOptions) {
  EXPECT_TRUE(CheckModelsCanStart(WithModel("espeak", {})).ok());
  EXPECT_TRUE(CheckModelsCanStart(WithModel("tone", {{"step_ms", "10"}})).ok());
}

TEST(CheckModelsCanStart, RefusesAnUnknownEngineNamingTheModelAndTheChoices) {
  EXPECT_THAT(MessageOf(CheckModelsCanStart(WithModel("espek", {}))),
              HasSubstr("models[0] (m): unknown engine 'espek' (available: espeak"));
}

TEST(CheckModelsCanStart, RefusesAMisspelledOrOutOfRangeEngineOption) {
  EXPECT_THAT(MessageOf(CheckModelsCanStart(WithModel("espeak", {{"data_pth", "/x"}}))),
              HasSubstr("models[0] (m): unknown espeak option 'data_pth' (allowed: data_path, "
                        "synthesis_timeout_ms)"));
  EXPECT_THAT(MessageOf(CheckModelsCanStart(WithModel("tone", {{"step_ms", "5000"}}))),
              HasSubstr("models[0] (m): "));
}

TEST(CheckCpusUsable, RefusesACpuTheProcessMayNotRunOnAndListsTheUsableOnes) {
  const std::vector<int> usable = {0, 1, 2, 5};
  EXPECT_TRUE(CheckCpusUsable({"0-2", "5"}, usable, "models[0].scheduling").ok());
  EXPECT_EQ(MessageOf(CheckCpusUsable({"0", "1-3"}, usable, "models[0].scheduling")),
            "models[0].scheduling.cpus: cpu 3 (in \"1-3\") is not one this process may run on "
            "(0-2,5)");
}

TEST(CheckModelsCanStart, RefusesWorkersPinnedToACpuThatDoesNotExist) {
  ServerConfig config = WithModel("espeak", {});
  config.service.models[0].scheduling.isolation = scheduler::Isolation::kProcess;
  config.service.models[0].scheduling.cpus = {"1023"};  // CPU_SETSIZE - 1: no machine here has it
  EXPECT_THAT(MessageOf(CheckModelsCanStart(config)),
              HasSubstr("models[0] (m).scheduling.cpus: cpu 1023"));
}

}  // namespace
}  // namespace voxserve::server
