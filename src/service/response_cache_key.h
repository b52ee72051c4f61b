// What the response cache (service/response_cache.h) keys a response by: everything that changes
// its bytes, and whether a request may be cached at all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audio/audio_format.h"

namespace voxserve::service {

struct ResponseCacheKey {
  std::string model_id;
  // The model's engine and its options (noise_scale, length_scale, ...): a model id of a
  // replaced config cannot answer with the old model's audio.
  std::string model_fingerprint;
  std::string voice_id;       // as the engine gets it: a catalog voice, or a cloned voice's id
  std::string voice_version;  // a cloned voice's registration (created_at); empty: built-in
  std::string voice_mode;     // a cloned voice's resolved mode; empty: none
  std::string instructions;
  // The text as the engine gets it, segment by segment (after normalization and splitting).
  std::vector<std::string> segments;
  // SSML and pronunciation dictionary versions (SynthesisRequest::markup_version); empty: none.
  std::string markup_version;
  double speed = 1.0;
  audio::AudioFormat format = audio::AudioFormat::kMp3;
  int sample_rate = 0;  // the output rate (after resampling)
  // A stream's container differs from a file's (WAV's unknown length, no seek table): streamed
  // and whole-file answers are stored apart.
  bool streaming = false;
  std::optional<uint64_t> seed;

  // An unambiguous byte string of every field (each one length-prefixed), the cache's map key.
  std::string Serialize() const;
};

// Whether `engine`'s audio is a function of the request: engines that sample (CosyVoice's LLM)
// only when the request fixes the seed; the others always (espeak-ng, Piper, Kokoro: their audio
// depends on the text, voice and options alone).
bool EngineOutputIsDeterministic(std::string_view engine, const std::optional<uint64_t>& seed);

// The tag of responses spoken with a cloned voice: deleting the voice drops them.
inline std::string ClonedVoiceCacheTag(std::string_view voice_id) {
  return "voice:" + std::string(voice_id);
}

}  // namespace voxserve::service
