#include "service/test_voice_cloner.h"

#include <algorithm>
#include <cmath>

#include "audio/audio_file_decoder.h"
#include "core/error.h"

namespace voxserve::service {
namespace {

// Below -80 dBFS everywhere: nothing a speaker embedding could be computed from.
constexpr float kSilencePeak = 1e-4f;
constexpr int kEmbeddingDims = 8;
constexpr int kTokensPerSecond = 25;  // CosyVoice 2's speech-token rate

}  // namespace

absl::StatusOr<engine::VoiceProfile> TestVoiceCloner::CloneVoice(
    const engine::VoicePrompt& prompt) {
  // The decoder every engine's prompt goes through, with its checks (audio/wav_header.h).
  audio::DecodeLimits limits;
  limits.max_seconds = kMaxSeconds;
  absl::StatusOr<audio::PcmAudio> decoded = audio::DecodeAudioFile(prompt.audio, limits);
  if (!decoded.ok()) {
    if (decoded.status().code() == absl::StatusCode::kOutOfRange) return decoded.status();
    return core::InvalidArgument("audio_sample: " + std::string(decoded.status().message()),
                                 "audio_sample", "invalid_audio");
  }
  const std::vector<float>& samples = decoded->samples;
  float peak = 0;
  for (float s : samples) peak = std::max(peak, std::abs(s));
  if (!(peak >= kSilencePeak)) {  // NaN-safe
    return core::InvalidArgument("audio_sample is silent", "audio_sample", "silent_audio");
  }

  engine::VoiceProfile profile;
  profile.family = "test";
  profile.prompt_seconds = decoded->DurationSeconds();
  profile.attributes["transcript"] = std::string(prompt.transcript);
  engine::ProfileTensor embedding;
  embedding.shape = {kEmbeddingDims};
  for (int d = 0; d < kEmbeddingDims; ++d) {
    size_t begin = samples.size() * d / kEmbeddingDims,
           end = samples.size() * (d + 1) / kEmbeddingDims;
    double sum = 0;
    for (size_t i = begin; i < end; ++i) sum += std::abs(samples[i]);
    embedding.floats.push_back(static_cast<float>(end > begin ? sum / (end - begin) : 0));
  }
  profile.tensors["speaker_embedding"] = std::move(embedding);
  engine::ProfileTensor tokens;
  tokens.dtype = engine::ProfileTensor::DType::kInt32;
  auto count = static_cast<size_t>(std::ceil(profile.prompt_seconds * kTokensPerSecond));
  for (size_t t = 0; t < count; ++t) {
    size_t index = std::min(samples.size() - 1, t * samples.size() / count);
    tokens.ints.push_back(static_cast<int32_t>(std::lround((samples[index] + 1.0f) * 3000)));
  }
  tokens.shape = {static_cast<int64_t>(tokens.ints.size())};
  profile.tensors["prompt_speech_tokens"] = std::move(tokens);
  return profile;
}

}  // namespace voxserve::service
