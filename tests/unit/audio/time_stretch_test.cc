#include "audio/time_stretch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "unit/audio/audio_test_support.h"

namespace voxserve::audio {
namespace {

using testing::Middle;
using testing::Rms;
using testing::Sine;
using testing::ZeroCrossingFrequency;

PcmAudio Tone(double seconds) { return PcmAudio{Sine(220, 22050, seconds), 22050}; }

TEST(TimeStretchTest, HalfSpeedDoublesTheDuration) {
  absl::StatusOr<PcmAudio> slow = TimeStretch(Tone(1.0), 0.5);
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_EQ(slow->sample_rate, 22050);
  EXPECT_NEAR(slow->DurationSeconds(), 2.0, 2.0 * 0.05);
}

TEST(TimeStretchTest, WordTimesStretchWithTheAudio) {
  PcmAudio tone = Tone(1.0);
  tone.timings = TimingsKind::kExact;
  tone.words = {{0, 3, 0.0, 0.4}, {4, 7, 0.5, 1.0}};
  absl::StatusOr<PcmAudio> slow = TimeStretch(tone, 0.5);
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_EQ(slow->timings, TimingsKind::kExact);
  ASSERT_EQ(slow->words.size(), 2u);
  EXPECT_EQ(slow->words[1].text_begin, 4u);
  EXPECT_NEAR(slow->words[1].start_s, 1.0, 0.05);
  EXPECT_DOUBLE_EQ(slow->words[1].end_s, slow->DurationSeconds());  // still the audio's end
}

TEST(TimeStretchTest, DoubleSpeedHalvesTheDuration) {
  absl::StatusOr<PcmAudio> fast = TimeStretch(Tone(1.0), 2.0);
  ASSERT_TRUE(fast.ok()) << fast.status();
  EXPECT_NEAR(fast->DurationSeconds(), 0.5, 0.5 * 0.05);
}

TEST(TimeStretchTest, KeepsThePitch) {
  absl::StatusOr<PcmAudio> slow = TimeStretch(Tone(1.0), 0.5);
  ASSERT_TRUE(slow.ok());
  std::span<const float> middle = Middle(slow->samples, 22050, 1.0);
  EXPECT_GT(Rms(middle), 0.2);
  EXPECT_NEAR(ZeroCrossingFrequency(middle, 22050), 220, 220 * 0.05);
}

TEST(TimeStretchTest, SpeedOneReturnsTheAudioUnchanged) {
  PcmAudio tone = Tone(0.1);
  absl::StatusOr<PcmAudio> same = TimeStretch(tone, 1.0);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->samples, tone.samples);
}

TEST(TimeStretchTest, RejectsZeroNegativeAndNonFiniteSpeeds) {
  for (double speed : {0.0, -1.0, std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::quiet_NaN()}) {
    absl::StatusOr<PcmAudio> result = TimeStretch(Tone(0.1), speed);
    ASSERT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << speed;
    EXPECT_EQ(core::DetailOf(result.status()).param, "speed");
  }
}

}  // namespace
}  // namespace voxserve::audio
