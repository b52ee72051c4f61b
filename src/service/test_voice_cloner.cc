#include "service/test_voice_cloner.h"

#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"

namespace voxserve::service {
namespace {

// libsndfile reads from memory through these callbacks (sf_open_virtual).
struct MemoryInput {
  std::span<const uint8_t> bytes;
  sf_count_t position = 0;
};

sf_count_t Length(void* user) {
  return static_cast<sf_count_t>(static_cast<MemoryInput*>(user)->bytes.size());
}
sf_count_t Seek(sf_count_t offset, int whence, void* user) {
  auto* in = static_cast<MemoryInput*>(user);
  sf_count_t base = whence == SEEK_CUR   ? in->position
                    : whence == SEEK_END ? static_cast<sf_count_t>(in->bytes.size())
                                         : 0;
  in->position =
      std::clamp<sf_count_t>(base + offset, 0, static_cast<sf_count_t>(in->bytes.size()));
  return in->position;
}
sf_count_t Read(void* out, sf_count_t count, void* user) {
  auto* in = static_cast<MemoryInput*>(user);
  sf_count_t left = static_cast<sf_count_t>(in->bytes.size()) - in->position;
  sf_count_t n = std::min(count, left);
  std::memcpy(out, in->bytes.data() + in->position, static_cast<size_t>(n));
  in->position += n;
  return n;
}
sf_count_t Write(const void*, sf_count_t, void*) { return 0; }
sf_count_t Tell(void* user) { return static_cast<MemoryInput*>(user)->position; }

// Below -80 dBFS everywhere: nothing a speaker embedding could be computed from.
constexpr float kSilencePeak = 1e-4f;
constexpr int kEmbeddingDims = 8;
constexpr int kTokensPerSecond = 25;  // CosyVoice 2's speech-token rate

}  // namespace

absl::StatusOr<engine::VoiceProfile> TestVoiceCloner::CloneVoice(
    const engine::VoicePrompt& prompt) {
  MemoryInput input{prompt.audio};
  SF_VIRTUAL_IO io{Length, Seek, Read, Write, Tell};
  SF_INFO info{};
  SNDFILE* file = sf_open_virtual(&io, SFM_READ, &info, &input);
  if (file == nullptr) {
    return core::InvalidArgument(
        std::string("audio_sample cannot be decoded: ") + sf_strerror(nullptr), "audio_sample",
        "invalid_audio");
  }
  if (info.samplerate <= 0 || info.channels <= 0 || info.frames <= 0) {
    sf_close(file);
    return core::InvalidArgument("audio_sample has no samples", "audio_sample", "invalid_audio");
  }
  double seconds = static_cast<double>(info.frames) / info.samplerate;
  if (seconds > kMaxSeconds) {
    sf_close(file);
    return absl::OutOfRangeError("audio_sample is " + std::to_string(seconds) +
                                 " s long; at most 30 s is accepted");
  }
  std::vector<float> samples(static_cast<size_t>(info.frames) * info.channels);
  sf_count_t read = sf_readf_float(file, samples.data(), info.frames);
  sf_close(file);
  if (read <= 0) {
    return core::InvalidArgument("audio_sample is truncated", "audio_sample", "invalid_audio");
  }
  samples.resize(static_cast<size_t>(read) * info.channels);
  float peak = 0;
  for (float s : samples) peak = std::max(peak, std::abs(s));
  if (!(peak >= kSilencePeak)) {  // NaN-safe
    return core::InvalidArgument("audio_sample is silent", "audio_sample", "silent_audio");
  }

  engine::VoiceProfile profile;
  profile.family = "test";
  profile.prompt_seconds = static_cast<double>(read) / info.samplerate;
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
