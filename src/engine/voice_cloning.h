// Zero-shot voice cloning, an optional engine capability: an engine's frontend turns a short
// prompt recording and its transcript into a voice profile once; the service stores profiles
// (voices directory) and synthesis refers to them by id. The service treats a profile as opaque
// named tensors; only engines of the profile's family read them.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::engine {

// A recording that registers a voice. Views stay valid for the duration of the call.
struct VoicePrompt {
  std::span<const uint8_t> audio;  // an encoded file as uploaded: wav, flac, ogg or mp3
  std::string_view transcript;     // what the recording says (valid UTF-8, may be empty where
                                   // the engine does not need it)
};

// One tensor of a profile, row-major, little-endian as in memory.
struct ProfileTensor {
  enum class DType { kFloat32, kInt32 };
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<float> floats;  // when kFloat32; size = product of shape
  std::vector<int32_t> ints;  // when kInt32; size = product of shape
};

// Owned by value. E.g. CosyVoice 2: "speaker_embedding" f32 [192], "prompt_speech_tokens"
// i32 [N], "prompt_mel" f32 [2N, 80], "transcript_tokens" i32 [M]; attribute "transcript".
struct VoiceProfile {
  std::string family;  // e.g. "cosyvoice2": usable by engines of this family only
  std::map<std::string, ProfileTensor> tensors;
  std::map<std::string, std::string> attributes;
  double prompt_seconds = 0;  // length of the recording the profile came from
};

// Implemented by engines that clone voices (Engine::voice_cloner()). Safe cross thread. Blocking
// (decoding, features, ONNX graphs): call it on a worker, never on an I/O thread.
// Errors: InvalidArgument for audio that cannot be decoded, is silent or has no usable speech;
// OutOfRange for a recording longer than the engine allows (the message says the limit).
class VoiceCloner {
 public:
  virtual ~VoiceCloner() = default;
  virtual absl::StatusOr<VoiceProfile> CloneVoice(const VoicePrompt& prompt) = 0;
  // Clones once from a built-in prompt, so the first registration pays no first-run costs. What
  // a process whose engine only clones warms up: the parent of worker processes, whose workers
  // warm up the rest (Engine::Warmup) themselves.
  virtual absl::Status WarmupCloning() { return absl::OkStatus(); }
};

}  // namespace voxserve::engine
