// A Piper (VITS) graph: checks its interface once at load and turns batches of phoneme ids into
// audio. Interface (rhasspy/piper export_onnx.py): inputs `input` int64 [batch, phonemes],
// `input_lengths` int64 [batch], `scales` float32 [3] = [noise, length, noise_w], and `sid`
// int64 [1] only in multi-speaker graphs; output `output` float32 whose last dimension is the
// sample count (declared [batch, 1, time] but really [batch, 1, 1, samples]). Voices patched
// with piper1-gpl's alignment script have a second output: frames per phoneme id.
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

struct PiperScales {
  float noise = 0.667f;
  float length = 1.0f;  // > 1 slows speech down
  float noise_w = 0.8f;
};

// Immutable after Create; Infer is safe cross thread (the session is shared, see OnnxSession).
class PiperModel {
 public:
  static absl::StatusOr<std::unique_ptr<PiperModel>> Create(const std::string& model_path,
                                                            const OnnxSessionConfig& session);

  bool has_speaker_input() const { return has_sid_; }
  // The batch dimension of `input` is dynamic AND the graph reports per-id durations, so each
  // item of a padded batch can be cut to its own length. Only then does Piper batch: without
  // durations, a padded item's audio cannot be told apart from the padding's.
  bool can_batch() const { return dynamic_batch_ && durations_output_.has_value(); }

  // One Run over `batch` (each a full id sequence; padded with id 0 = PAD to the longest).
  // Returns each item's samples: cut to sum(durations) × hop_length when the graph reports
  // durations, else the whole output (a batch of more than one then fails: see can_batch).
  // With `frames` (and a graph that reports durations) each item's frames per id come back too;
  // otherwise it is left empty.
  absl::StatusOr<std::vector<std::vector<float>>> Infer(
      std::span<const std::vector<int64_t>> batch, const PiperScales& scales,
      std::optional<int64_t> speaker_id, int hop_length,
      std::vector<std::vector<float>>* frames = nullptr) const;

  bool has_durations() const { return durations_output_.has_value(); }

  const OnnxSession& session() const { return *session_; }

 private:
  explicit PiperModel(std::unique_ptr<OnnxSession> session) : session_(std::move(session)) {}

  std::unique_ptr<OnnxSession> session_;
  bool has_sid_ = false;
  bool dynamic_batch_ = false;
  std::string audio_output_;
  std::optional<std::string> durations_output_;
};

}  // namespace voxserve::engine::onnx
