// A deterministic engine::StreamingEngine for tests of the scheduler's step loop and the service:
// one chunk per word of a segment's text, chunk k of a segment holding `chunk_samples` samples of
// value k (so tests read the chunk order from the audio), and a step gate: each Step() waits at
// its start until the test allows it, so tests place joins, cancellations and deadlines between
// precise steps without sleeping. Records every step's active set, and every Begin and Release.
//
// Safe cross thread: runners step on scheduler threads while the test works the gate and reads
// the record. Owned by the test (through a shared_ptr it also hands to the scheduler).
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/streaming_engine.h"

namespace voxserve::test_support {

struct FakeStreamingOptions {
  std::string model_id = "fake-stream";
  std::vector<std::string> voices = {"alice", "bob"};
  int max_active = 64;
  int sample_rate = 16000;
  size_t chunk_samples = 10;
  bool gated = true;  // false: steps run freely
  // A word that ends its segment with Internal at that word's step.
  std::string fail_word = "FAIL";
  // Every sample of a segment's chunks is its text's first byte / 256 instead of the chunk's
  // index, so a delivered file shows which segment each stretch of audio came from.
  bool level_from_text = false;
};

class FakeStreamingEngine : public engine::StreamingEngine {
 public:
  // A safety net for waits on scheduler threads (as scheduler_test_support.h's kWaitLimit).
  static constexpr std::chrono::seconds kWaitLimit{5};

  explicit FakeStreamingEngine(FakeStreamingOptions options = {}) : options_(std::move(options)) {
    info_.id = options_.model_id;
    info_.engine = "fake-stream";
    info_.default_voice = options_.voices.front();
    info_.batch_requires_same_voice = false;
    for (const std::string& voice : options_.voices) {
      info_.voices.push_back({voice, "en-us", options_.sample_rate, voice});
    }
    gate_open_ = !options_.gated;
  }

  const engine::ModelInfo& info() const override { return info_; }
  bool AcceptsVoice(std::string_view voice) const override {
    return std::find(options_.voices.begin(), options_.voices.end(), voice) !=
           options_.voices.end();
  }
  absl::Status Warmup(std::span<const std::string>) override { return absl::OkStatus(); }
  int max_active() const override { return options_.max_active; }
  absl::StatusOr<std::unique_ptr<engine::StreamRunner>> CreateRunner() override {
    return std::unique_ptr<engine::StreamRunner>(new Runner(*this));
  }

  // Lets `count` more steps start (each waiting Step() takes one).
  void AllowSteps(int count) {
    std::lock_guard lock(mutex_);
    allowed_ += count;
    changed_.notify_all();
  }
  void OpenGate() {
    std::lock_guard lock(mutex_);
    gate_open_ = true;
    changed_.notify_all();
  }
  // Waits until a Step() is waiting at the gate having begun `steps_started` steps before it,
  // i.e. the loop has made its admission decisions for step number steps_started + 1.
  bool WaitUntilWaitingAtStep(size_t step_number) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kWaitLimit,
                             [&] { return waiting_ && steps_.size() + 1 == step_number; });
  }
  // Waits until `count` steps have finished.
  bool WaitForSteps(size_t count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kWaitLimit, [&] { return steps_.size() >= count; });
  }
  // The texts active in each step so far, in join order.
  std::vector<std::vector<std::string>> steps() const {
    std::lock_guard lock(mutex_);
    return steps_;
  }
  // Waits until `count` sequences have been released.
  bool WaitForReleased(size_t count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kWaitLimit, [&] { return released_.size() >= count; });
  }
  std::vector<std::string> released() const {
    std::lock_guard lock(mutex_);
    return released_;
  }
  size_t max_active_seen() const {
    std::lock_guard lock(mutex_);
    size_t most = 0;
    for (const auto& step : steps_) most = std::max(most, step.size());
    return most;
  }

 private:
  struct Sequence {
    std::string text;
    std::vector<std::string> words;
    size_t next = 0;
  };

  class Runner : public engine::StreamRunner {
   public:
    explicit Runner(FakeStreamingEngine& engine) : engine_(engine) {}
    absl::Status Begin(engine::SequenceId id, const engine::SegmentInput& input) override {
      if (sequences_.size() >= static_cast<size_t>(engine_.options_.max_active)) {
        return absl::ResourceExhaustedError("runner is full");
      }
      if (!engine_.AcceptsVoice(input.voice_id)) return absl::InvalidArgumentError("no voice");
      Sequence sequence{std::string(input.text), {}, 0};
      size_t start = 0;
      while (start <= sequence.text.size()) {
        size_t end = sequence.text.find(' ', start);
        if (end == std::string::npos) end = sequence.text.size();
        if (end > start) sequence.words.push_back(sequence.text.substr(start, end - start));
        start = end + 1;
      }
      if (sequence.words.empty()) sequence.words.push_back(sequence.text);
      sequences_.emplace(id, std::move(sequence));
      return absl::OkStatus();
    }
    std::vector<engine::SequenceStep> Step() override {
      std::vector<std::string> texts;
      for (const auto& [id, sequence] : sequences_) texts.push_back(sequence.text);
      {
        std::unique_lock lock(engine_.mutex_);
        engine_.waiting_ = true;
        engine_.changed_.notify_all();
        engine_.changed_.wait(lock, [&] { return engine_.gate_open_ || engine_.allowed_ > 0; });
        if (!engine_.gate_open_) --engine_.allowed_;
        engine_.waiting_ = false;
      }
      std::vector<engine::SequenceStep> out;
      for (auto it = sequences_.begin(); it != sequences_.end();) {
        Sequence& sequence = it->second;
        engine::SequenceStep step;
        step.id = it->first;
        const size_t index = sequence.next++;
        if (sequence.words[index] == engine_.options_.fail_word) {
          step.end = absl::InternalError("fake engine failed at word " + std::to_string(index));
        } else {
          step.chunk.sample_rate = engine_.options_.sample_rate;
          float value = engine_.options_.level_from_text
                            ? static_cast<unsigned char>(sequence.text[0]) / 256.0f
                            : static_cast<float>(index);
          step.chunk.samples.assign(engine_.options_.chunk_samples, value);
          if (sequence.next == sequence.words.size()) step.end = absl::OkStatus();
        }
        it = step.end ? sequences_.erase(it) : std::next(it);
        out.push_back(std::move(step));
      }
      {
        std::lock_guard lock(engine_.mutex_);
        engine_.steps_.push_back(std::move(texts));
        engine_.changed_.notify_all();
      }
      return out;
    }
    void Release(engine::SequenceId id) override {
      auto it = sequences_.find(id);
      if (it == sequences_.end()) return;
      std::lock_guard lock(engine_.mutex_);
      engine_.released_.push_back(it->second.text);
      engine_.changed_.notify_all();
      sequences_.erase(it);
    }
    size_t Active() const override { return sequences_.size(); }

   private:
    FakeStreamingEngine& engine_;
    std::map<engine::SequenceId, Sequence> sequences_;  // ids grow: join order
  };

  const FakeStreamingOptions options_;
  engine::ModelInfo info_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool gate_open_ = false;                       // guarded by mutex_
  int allowed_ = 0;                              // guarded by mutex_
  bool waiting_ = false;                         // guarded by mutex_
  std::vector<std::vector<std::string>> steps_;  // guarded by mutex_
  std::vector<std::string> released_;            // guarded by mutex_
};

}  // namespace voxserve::test_support
