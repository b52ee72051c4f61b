#include "engine/tone/tone_engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numbers>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "core/error.h"

namespace voxserve::engine {
namespace {

struct ToneVoice {
  std::string_view id;
  double frequency;
};
// A4 and C5 of equal temperament: two voices, so voice routing and same-voice rules are testable.
constexpr ToneVoice kVoices[] = {{"a4", 440.0}, {"c5", 523.25}};
// Well below full scale, so any encoder's resampling or gain never clips it.
constexpr float kAmplitude = 0.3f;

absl::Status SetInt(const std::string& key, const std::string& value, int min, int max, int* out) {
  int parsed = 0;
  if (!absl::SimpleAtoi(value, &parsed) || parsed < min || parsed > max) {
    return core::InvalidArgument("tone option " + key + " = '" + value +
                                 "' must be a whole number in " + std::to_string(min) + ".." +
                                 std::to_string(max));
  }
  *out = parsed;
  return absl::OkStatus();
}

// Owned by the instance that created it; one thread calls it (streaming_engine.h).
class ToneRunner : public StreamRunner {
 public:
  explicit ToneRunner(const ToneConfig& config) : config_(config) {}

  absl::Status Begin(SequenceId id, const SegmentInput& input) override {
    if (sequences_.size() >= static_cast<size_t>(config_.max_active)) {
      return absl::ResourceExhaustedError("tone runner holds max_active (" +
                                          std::to_string(config_.max_active) + ") sequences");
    }
    double frequency = ToneEngine::FrequencyOf(input.voice_id);
    if (frequency == 0) {
      return core::InvalidArgument("tone engine has no voice '" + std::string(input.voice_id) +
                                   "'");
    }
    if (input.speed <= 0) return core::InvalidArgument("speed must be positive");
    if (sequences_.count(id) != 0) {
      return core::InvalidArgument("sequence " + std::to_string(id) + " is already active");
    }
    Sequence sequence;
    sequence.order = next_order_++;
    sequence.frequency = frequency;
    sequence.chunk_samples = static_cast<size_t>(
        std::max(1.0, config_.sample_rate * config_.chunk_ms / 1000.0 / input.speed));
    // One chunk per word: whitespace-separated pieces of the text, at least one.
    std::string_view text = input.text;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find_first_of(" \t\n\r", start);
      if (end == std::string_view::npos) end = text.size();
      if (end > start) sequence.words.emplace_back(text.substr(start, end - start));
      start = end + 1;
    }
    if (sequence.words.empty()) sequence.words.emplace_back(text);
    sequences_.emplace(id, std::move(sequence));
    return absl::OkStatus();
  }

  std::vector<SequenceStep> Step() override {
    std::vector<SequenceStep> out;
    if (sequences_.empty()) return out;
    // The step's cost: one step advances every active sequence, so this is paid once per step
    // however many are active (what batching buys).
    if (config_.step_ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(config_.step_ms));
    std::vector<std::pair<uint64_t, SequenceId>> order;
    for (const auto& [id, sequence] : sequences_) order.emplace_back(sequence.order, id);
    std::sort(order.begin(), order.end());
    for (const auto& [unused, id] : order) {
      Sequence& sequence = sequences_.at(id);
      SequenceStep step;
      step.id = id;
      const std::string& word = sequence.words[sequence.next_word++];
      if (word.find(kToneFailWord) != std::string::npos) {
        step.end = core::Internal("tone engine: segment asked to fail at word " +
                                  std::to_string(sequence.next_word));
      } else {
        step.chunk.sample_rate = config_.sample_rate;
        step.chunk.samples.resize(sequence.chunk_samples);
        const double increment = 2 * std::numbers::pi * sequence.frequency / config_.sample_rate;
        for (float& sample : step.chunk.samples) {
          sample = kAmplitude * static_cast<float>(std::sin(sequence.phase));
          sequence.phase = std::fmod(sequence.phase + increment, 2 * std::numbers::pi);
        }
        if (sequence.next_word == sequence.words.size()) step.end = absl::OkStatus();
      }
      if (step.end) sequences_.erase(id);
      out.push_back(std::move(step));
    }
    return out;
  }

  void Release(SequenceId id) override { sequences_.erase(id); }
  size_t Active() const override { return sequences_.size(); }

 private:
  struct Sequence {
    uint64_t order = 0;  // when it began: steps report in this order
    double frequency = 0;
    double phase = 0;  // carried across chunks, so the tone has no clicks between them
    size_t chunk_samples = 0;
    std::vector<std::string> words;
    size_t next_word = 0;
  };

  const ToneConfig config_;
  std::map<SequenceId, Sequence> sequences_;
  uint64_t next_order_ = 0;
};

}  // namespace

absl::Status ToneConfig::Set(const std::string& key, const std::string& value) {
  if (key == "sample_rate") return SetInt(key, value, 8000, 48000, &sample_rate);
  if (key == "chunk_ms") return SetInt(key, value, 10, 2000, &chunk_ms);
  if (key == "step_ms") return SetInt(key, value, 0, 1000, &step_ms);
  if (key == "max_active") return SetInt(key, value, 1, 1024, &max_active);
  return core::InvalidArgument("unknown tone option '" + key +
                               "' (allowed: sample_rate, chunk_ms, step_ms, max_active)");
}

double ToneEngine::FrequencyOf(std::string_view voice_id) {
  for (const ToneVoice& voice : kVoices) {
    if (voice.id == voice_id) return voice.frequency;
  }
  return 0;
}

ToneEngine::ToneEngine(const ToneConfig& config) : config_(config) {
  info_.id = config.model_id;
  info_.engine = "tone";
  info_.default_voice = config.default_voice;
  info_.max_batch_size = 1;
  info_.batch_requires_same_voice = false;
  for (const ToneVoice& voice : kVoices) {
    info_.voices.push_back(
        {std::string(voice.id), "en-us", config.sample_rate,
         "Sine tone at " + std::to_string(static_cast<int>(voice.frequency)) + " Hz (diagnostic)"});
  }
}

absl::StatusOr<std::unique_ptr<ToneEngine>> ToneEngine::Create(const ToneConfig& config) {
  if (FrequencyOf(config.default_voice) == 0) {
    return core::InvalidArgument("tone engine has no voice '" + config.default_voice +
                                 "' (voices: a4, c5)");
  }
  return std::unique_ptr<ToneEngine>(new ToneEngine(config));
}

bool ToneEngine::AcceptsVoice(std::string_view voice_id) const {
  return FrequencyOf(voice_id) != 0;
}

absl::Status ToneEngine::Warmup(std::span<const std::string> texts) {
  std::vector<SegmentInput> inputs;
  for (const std::string& text : texts) inputs.push_back({text, info_.default_voice, 1.0});
  for (auto& result : Synthesize(inputs)) {
    if (!result.ok()) return result.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<StreamRunner>> ToneEngine::CreateRunner() {
  return std::unique_ptr<StreamRunner>(new ToneRunner(config_));
}

}  // namespace voxserve::engine
