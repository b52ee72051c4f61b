// The ONNX half of CosyVoice's zero-shot frontend (cosyvoice/cli/frontend.py:95-118): CAM++
// turns a prompt's Kaldi fbank into the speaker x-vector, the speech tokenizer turns its Whisper
// log-mel into speech tokens. The features themselves come from audio/features (another module).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/cosyvoice/bundle_manifest.h"
#include "engine/onnx/onnx_session.h"
#include "engine/onnx/onnx_session_config.h"

namespace voxserve::engine::cosyvoice {

// Owns the two sessions. Immutable after Create; safe cross thread (ORT's Run is thread-safe).
// Blocking: call on a worker.
class PromptEncoder {
 public:
  // Opens the bundle's campplus and speech_tokenizer graphs (inputs addressed by position, as
  // upstream does, with the names the manifest gives).
  static absl::StatusOr<std::unique_ptr<PromptEncoder>> Create(
      const BundleManifest& manifest, const std::string& bundle_dir,
      const onnx::OnnxSessionConfig& session_config);

  // fbank: [frames, 80] row-major, mean-normalised over time. Returns the x-vector (192).
  absl::StatusOr<std::vector<float>> SpeakerEmbedding(std::span<const float> fbank) const;
  // logmel: [128, frames] row-major (Whisper log-mel, 100 frames per second). Returns the
  // speech tokens (25 per second), each in [0, speech_token_size). OutOfRange past the
  // manifest's prompt_max_seconds (upstream asserts 30 s, frontend.py:97).
  absl::StatusOr<std::vector<int32_t>> SpeechTokens(std::span<const float> logmel) const;

  int fbank_bins() const { return fbank_bins_; }
  int logmel_bins() const { return logmel_bins_; }

 private:
  PromptEncoder() = default;

  std::unique_ptr<onnx::OnnxSession> campplus_;
  std::unique_ptr<onnx::OnnxSession> tokenizer_;
  std::string campplus_input_, tokenizer_feats_, tokenizer_length_;
  int fbank_bins_ = 80;
  int logmel_bins_ = 128;
  int embedding_dim_ = 192;
  int64_t speech_token_size_ = 6561;
  int64_t max_logmel_frames_ = 3000;
};

}  // namespace voxserve::engine::cosyvoice
