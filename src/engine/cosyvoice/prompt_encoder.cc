#include "engine/cosyvoice/prompt_encoder.h"

#include <filesystem>

#include "core/error.h"

namespace voxserve::engine::cosyvoice {
namespace {

absl::StatusOr<std::unique_ptr<onnx::OnnxSession>> OpenGraph(
    const BundleManifest& manifest, const std::string& dir, std::string_view role,
    const onnx::OnnxSessionConfig& config) {
  const GraphEntry* g = manifest.graph(role);
  if (g == nullptr) return core::InvalidArgument("bundle has no graph " + std::string(role));
  return onnx::OnnxSession::Create((std::filesystem::path(dir) / g->file).string(), config);
}

}  // namespace

absl::StatusOr<std::unique_ptr<PromptEncoder>> PromptEncoder::Create(
    const BundleManifest& manifest, const std::string& bundle_dir,
    const onnx::OnnxSessionConfig& session_config) {
  std::unique_ptr<PromptEncoder> encoder(new PromptEncoder());
  auto campplus = OpenGraph(manifest, bundle_dir, "campplus", session_config);
  if (!campplus.ok()) return campplus.status();
  auto tokenizer = OpenGraph(manifest, bundle_dir, "speech_tokenizer", session_config);
  if (!tokenizer.ok()) return tokenizer.status();
  encoder->campplus_ = std::move(*campplus);
  encoder->tokenizer_ = std::move(*tokenizer);
  // The manifest was validated against RoleContracts (ranks and counts), so these exist.
  const GraphEntry& c = *manifest.graph("campplus");
  const GraphEntry& t = *manifest.graph("speech_tokenizer");
  encoder->campplus_input_ = c.inputs[0].name;
  encoder->tokenizer_feats_ = t.inputs[0].name;
  encoder->tokenizer_length_ = t.inputs[1].name;
  encoder->fbank_bins_ = manifest.audio.mel_bins;
  encoder->logmel_bins_ = manifest.audio.whisper_mel_bins;
  encoder->embedding_dim_ = manifest.audio.speaker_embedding_dim;
  encoder->speech_token_size_ = manifest.vocab.speech_token_size;
  // Whisper log-mel: 100 frames per second (hop 160 at 16 kHz).
  encoder->max_logmel_frames_ = static_cast<int64_t>(manifest.audio.prompt_max_seconds * 100);
  return encoder;
}

absl::StatusOr<std::vector<float>> PromptEncoder::SpeakerEmbedding(
    std::span<const float> fbank) const {
  if (fbank.empty() || fbank.size() % static_cast<size_t>(fbank_bins_) != 0) {
    return core::InvalidArgument("speaker embedding: fbank of " + std::to_string(fbank.size()) +
                                 " values is not a non-empty [frames, " +
                                 std::to_string(fbank_bins_) + "] array");
  }
  int64_t frames = static_cast<int64_t>(fbank.size()) / fbank_bins_;
  auto outputs = campplus_->Run(
      {{campplus_input_, onnx::Tensor::Floats({1, frames, fbank_bins_},
                                              std::vector<float>(fbank.begin(), fbank.end()))}});
  if (!outputs.ok()) return outputs.status();
  std::vector<float> embedding = outputs->at(0).ToFloats();
  if (embedding.size() != static_cast<size_t>(embedding_dim_)) {
    return absl::InternalError(campplus_->path() + " returned " + std::to_string(embedding.size()) +
                               " values, expected " + std::to_string(embedding_dim_));
  }
  return embedding;
}

absl::StatusOr<std::vector<int32_t>> PromptEncoder::SpeechTokens(
    std::span<const float> logmel) const {
  if (logmel.empty() || logmel.size() % static_cast<size_t>(logmel_bins_) != 0) {
    return core::InvalidArgument("speech tokens: log-mel of " + std::to_string(logmel.size()) +
                                 " values is not a non-empty [" + std::to_string(logmel_bins_) +
                                 ", frames] array");
  }
  int64_t frames = static_cast<int64_t>(logmel.size()) / logmel_bins_;
  if (frames > max_logmel_frames_) {
    return absl::OutOfRangeError("prompt recording is " + std::to_string(frames / 100.0) +
                                 " s long; the limit is " +
                                 std::to_string(max_logmel_frames_ / 100) + " s");
  }
  auto outputs = tokenizer_->Run(
      {{tokenizer_feats_, onnx::Tensor::Floats({1, logmel_bins_, frames},
                                               std::vector<float>(logmel.begin(), logmel.end()))},
       {tokenizer_length_, onnx::Tensor::Int32s({1}, {static_cast<int32_t>(frames)})}});
  if (!outputs.ok()) return outputs.status();
  std::vector<int32_t> tokens;
  for (int64_t id : outputs->at(0).ToInt64s()) {
    if (id < 0 || id >= speech_token_size_) {
      return absl::InternalError(tokenizer_->path() + " returned token " + std::to_string(id) +
                                 ", outside [0, " + std::to_string(speech_token_size_) + ")");
    }
    tokens.push_back(static_cast<int32_t>(id));
  }
  return tokens;
}

}  // namespace voxserve::engine::cosyvoice
