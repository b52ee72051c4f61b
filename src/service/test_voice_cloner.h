// TEST ONLY (voices.test_cloner): a stand-in VoiceCloner for models whose engine clones no
// voices, so the voice API can be exercised end to end before a cloning engine (CosyVoice) is
// configured. Its profile is a deterministic digest of the decoded samples, family "test"; no
// engine can synthesize with it.
#pragma once

#include "engine/voice_cloning.h"

namespace voxserve::service {

// Stateless; safe cross thread. Decodes with audio::DecodeAudioFile, as CosyVoice's prompts are
// (wav, flac, ogg, mp3), mixed to mono. Keeps the VoiceCloner error contract: InvalidArgument
// for undecodable, empty or silent audio, OutOfRange above kMaxSeconds.
class TestVoiceCloner : public engine::VoiceCloner {
 public:
  // CosyVoice's frontend refuses prompts over 30 s (reference/model-interfaces.md 3.5); the
  // double does the same so tests see the real limit's error.
  static constexpr double kMaxSeconds = 30.0;

  absl::StatusOr<engine::VoiceProfile> CloneVoice(const engine::VoicePrompt& prompt) override;
};

}  // namespace voxserve::service
