// A Kokoro-82M graph. Exports differ (see shared/reference/model-interfaces.md §2.2): token ids
// come as `input_ids` (onnx-community, kokoro-onnx ≥ 1.0) or `tokens` (v0.19), int64 [1, T+2];
// `style` float32 [1, 256]; `speed` float32 [1], or int32 in some re-exports; the waveform is
// the first output, 24 kHz, whatever its rank. Names and types are read from the session, as
// kokoro-onnx does, so every export runs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/onnx/onnx_session.h"

namespace voxserve::engine::onnx {

inline constexpr int kKokoroSampleRate = 24000;
// One duration frame: 600 samples at 24 kHz (hexgrad/kokoro pipeline.py join_timestamps).
inline constexpr int kKokoroFrameSamples = 600;

// Immutable after Create; Infer is safe cross thread (the session is shared).
class KokoroModel {
 public:
  static absl::StatusOr<std::unique_ptr<KokoroModel>> Create(const std::string& model_path,
                                                             const OnnxSessionConfig& session);

  // One Run: `tokens` without pads (≤ 510), the voice's style row for that length, speed > 0.
  // Kokoro exports have a fixed batch of 1 (style and speed are per utterance), so there is no
  // batched variant.
  // With `frames` and a graph that has the `duration` output (kokoro-onnx ≥ 1.1, hexgrad's
  // export), each token's frames come back too (one frame = kKokoroFrameSamples); otherwise it
  // is left empty.
  absl::StatusOr<std::vector<float>> Infer(std::span<const int64_t> tokens,
                                           std::span<const float> style, double speed,
                                           std::vector<float>* frames = nullptr) const;

  bool integer_speed() const { return speed_type_ == ElementType::kInt32; }
  const OnnxSession& session() const { return *session_; }

 private:
  explicit KokoroModel(std::unique_ptr<OnnxSession> session) : session_(std::move(session)) {}

  std::unique_ptr<OnnxSession> session_;
  std::string ids_input_;
  std::string style_input_;
  std::string speed_input_;
  ElementType speed_type_ = ElementType::kFloat;
  std::string audio_output_;
  std::optional<std::string> duration_output_;
};

}  // namespace voxserve::engine::onnx
