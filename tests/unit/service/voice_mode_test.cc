// service::ParseVoiceMode / ResolveVoiceMode: which mode a cloned voice is spoken in, from the
// request's voice_mode and instructions and whether the voice has a transcript, and the errors
// that name the field at fault (docs/cosyvoice-generation.md, "Modes").
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "service/request_checks.h"

namespace voxserve::service {
namespace {

using engine::VoiceMode;

SynthesisRequest Request(std::string mode, std::string instructions = "") {
  SynthesisRequest request;
  request.voice_mode = std::move(mode);
  request.instructions = std::move(instructions);
  return request;
}

TEST(ParseVoiceMode, KnowsTheThreeNamesAndEmptyMeansUnset) {
  EXPECT_EQ(ParseVoiceMode("zero_shot").value(), VoiceMode::kZeroShot);
  EXPECT_EQ(ParseVoiceMode("cross_lingual").value(), VoiceMode::kCrossLingual);
  EXPECT_EQ(ParseVoiceMode("instruct").value(), VoiceMode::kInstruct);
  EXPECT_EQ(ParseVoiceMode("").value(), std::nullopt);
  for (const char* bad : {"Zero_Shot", "instruct2", "cross-lingual", " zero_shot"}) {
    auto mode = ParseVoiceMode(bad);
    ASSERT_FALSE(mode.ok()) << bad;
    EXPECT_EQ(mode.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(core::DetailOf(mode.status()).param, "voice_mode");
    EXPECT_EQ(core::DetailOf(mode.status()).code, "invalid_voice_mode");
  }
}

TEST(ResolveVoiceMode, WithoutAModeInstructionsMeanInstructElseTheTranscriptDecides) {
  EXPECT_EQ(ResolveVoiceMode(Request(""), true).value(), VoiceMode::kZeroShot);
  EXPECT_EQ(ResolveVoiceMode(Request(""), false).value(), VoiceMode::kCrossLingual);
  EXPECT_EQ(ResolveVoiceMode(Request("", "Speak calmly."), true).value(), VoiceMode::kInstruct);
  EXPECT_EQ(ResolveVoiceMode(Request("", "Speak calmly."), false).value(), VoiceMode::kInstruct);
}

TEST(ResolveVoiceMode, AnExplicitModeIsKept) {
  EXPECT_EQ(ResolveVoiceMode(Request("cross_lingual"), true).value(), VoiceMode::kCrossLingual);
  EXPECT_EQ(ResolveVoiceMode(Request("zero_shot"), true).value(), VoiceMode::kZeroShot);
  EXPECT_EQ(ResolveVoiceMode(Request("instruct", "Whisper."), false).value(), VoiceMode::kInstruct);
}

TEST(ResolveVoiceMode, ImpossibleCombinationsNameTheFieldAtFault) {
  struct Case {
    SynthesisRequest request;
    bool transcript;
    const char* param;
  };
  for (const Case& c : {Case{Request("zero_shot"), false, "voice_mode"},
                        Case{Request("instruct"), true, "instructions"},
                        Case{Request("zero_shot", "Whisper."), true, "voice_mode"},
                        Case{Request("cross_lingual", "Whisper."), true, "voice_mode"},
                        Case{Request("sing"), true, "voice_mode"}}) {
    auto mode = ResolveVoiceMode(c.request, c.transcript);
    ASSERT_FALSE(mode.ok()) << c.request.voice_mode;
    EXPECT_EQ(mode.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(core::DetailOf(mode.status()).param, c.param) << c.request.voice_mode;
    EXPECT_FALSE(mode.status().message().empty());
  }
}

}  // namespace
}  // namespace voxserve::service
