// SchedulerConfig::Validate: defaults pass; each key out of range is refused with a message that
// names the model, the key and the allowed range.
#include "scheduler/scheduler_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace voxserve::scheduler {
namespace {

using ::testing::HasSubstr;

TEST(SchedulerConfigTest, DefaultsAreValid) { EXPECT_TRUE(SchedulerConfig{}.Validate("m").ok()); }

TEST(SchedulerConfigTest, BoundaryValuesAreValid) {
  SchedulerConfig low;
  low.instances = 1;
  low.max_batch_size = 1;
  low.max_queue_delay_ms = 0;
  low.queue_capacity = 1;
  low.first_segment_lead_ms = 0;
  EXPECT_TRUE(low.Validate("m").ok());

  SchedulerConfig high;
  high.instances = 256;
  high.max_batch_size = 1024;
  high.max_queue_delay_ms = 10'000;
  high.queue_capacity = 1'000'000;
  high.first_segment_lead_ms = 600'000;
  EXPECT_TRUE(high.Validate("m").ok());
}

struct InvalidCase {
  const char* key;
  void (*set)(SchedulerConfig&);
  const char* message;
};

class SchedulerConfigInvalidTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(SchedulerConfigInvalidTest, NamesTheKeyAndTheAllowedRange) {
  SchedulerConfig config;
  GetParam().set(config);

  absl::Status status = config.Validate("piper-en");

  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    EachKey, SchedulerConfigInvalidTest,
    ::testing::Values(
        InvalidCase{"instances", [](SchedulerConfig& c) { c.instances = -1; },
                    "models[piper-en].instances = -1 is outside 1..256 (or auto)"},
        InvalidCase{"instances_above", [](SchedulerConfig& c) { c.instances = 257; },
                    "models[piper-en].instances = 257 is outside 1..256 (or auto)"},
        InvalidCase{"max_batch_size", [](SchedulerConfig& c) { c.max_batch_size = 1025; },
                    "models[piper-en].max_batch_size = 1025 is outside 1..1024"},
        InvalidCase{"max_active", [](SchedulerConfig& c) { c.max_active = 0; },
                    "models[piper-en].max_active = 0 is outside 1..1024"},
        InvalidCase{"max_queue_delay_ms", [](SchedulerConfig& c) { c.max_queue_delay_ms = -1; },
                    "models[piper-en].max_queue_delay_ms = -1 is outside 0..10000"},
        InvalidCase{"queue_capacity", [](SchedulerConfig& c) { c.queue_capacity = 0; },
                    "models[piper-en].queue_capacity = 0 is outside 1..1000000"},
        InvalidCase{"first_segment_lead_ms",
                    [](SchedulerConfig& c) { c.first_segment_lead_ms = 600'001; },
                    "models[piper-en].first_segment_lead_ms = 600001 is outside 0..600000"}),
    [](const ::testing::TestParamInfo<InvalidCase>& info) { return std::string(info.param.key); });

}  // namespace
}  // namespace voxserve::scheduler
