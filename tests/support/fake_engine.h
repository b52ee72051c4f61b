// A deterministic engine::Engine for tests of the layers above engines (scheduler, service):
// no model, no audio library, just text.size() silent samples per segment, with knobs for
// latency, batching limits and failures, a record of every call, and a gate that holds calls
// until the test releases them so tests order events without sleeping.
//
// Safe cross thread: Synthesize runs on the scheduler's workers while the test thread inspects
// calls and works the gate. Owned by the test (usually through a shared_ptr it also hands to the
// scheduler).
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "audio/pcm.h"
#include "core/request_context.h"
#include "engine/engine.h"

namespace voxserve::test_support {

struct FakeEngineOptions {
  std::string model_id = "fake";
  std::vector<std::string> voices = {"alice", "bob"};
  int max_batch_size = 1;
  bool batch_requires_same_voice = false;
  int sample_rate = 16000;
  // Time each call takes after the gate lets it through.
  std::chrono::milliseconds latency{0};
  // A segment whose text contains fail_marker gets its own InvalidArgument result; the other
  // segments of its batch succeed. Empty: never.
  std::string fail_marker;
  // A batch with a text containing throw_marker throws std::runtime_error. Empty: never.
  std::string throw_marker;
  // A batch with a text containing short_result_marker returns one result too few. Empty: never.
  std::string short_result_marker;
  // A call with a text containing slow_marker takes slow_latency on top of `latency`.
  std::string slow_marker;
  std::chrono::milliseconds slow_latency{0};
  // When true, every sample of a segment is its text's first byte / 256 (instead of silence),
  // so tests can tell segments apart in the encoded output.
  bool fill_from_first_byte = false;
  // When true, each result reports exact word timings: a word (a run of non-spaces) at bytes
  // [b, e) of its text sounds over samples [b, e), i.e. [b, e) / sample_rate seconds.
  bool report_words = false;
  // Non-empty: the engine speaks cloned voices of this profile family (ModelInfo::cloned_voices),
  // as silence like its other voices.
  std::string cloned_voice_family;
  // ModelInfo's SSML capabilities (engine.h): speaks SegmentInput::phonemes, follows pitch.
  bool speaks_ipa = false;
  bool controls_pitch = false;
};

// One Synthesize call as the engine saw it.
struct EngineCall {
  std::vector<std::string> texts;
  std::vector<std::string> voice_ids;
  std::vector<double> speeds;
  std::vector<std::string> phonemes;
  std::vector<double> pitches;
  core::Clock::time_point started;  // when the call entered the engine, before the gate
};

class FakeEngine : public engine::Engine {
 public:
  explicit FakeEngine(FakeEngineOptions options = {}) : options_(std::move(options)) {
    info_.id = options_.model_id;
    info_.engine = "fake";
    for (const std::string& voice : options_.voices) {
      info_.voices.push_back({voice, "en-us", options_.sample_rate, "fake voice " + voice});
    }
    info_.default_voice = options_.voices.empty() ? std::string() : options_.voices.front();
    info_.max_batch_size = options_.max_batch_size;
    info_.batch_requires_same_voice = options_.batch_requires_same_voice;
    info_.cloned_voices = {options_.cloned_voice_family, options_.sample_rate, "en-us"};
    info_.speaks_ipa = options_.speaks_ipa;
    info_.controls_pitch = options_.controls_pitch;
  }

  const engine::ModelInfo& info() const override { return info_; }

  bool AcceptsVoice(std::string_view voice_id) const override {
    return std::find(options_.voices.begin(), options_.voices.end(), voice_id) !=
           options_.voices.end();
  }

  absl::Status Warmup(std::span<const std::string> texts) override {
    std::lock_guard lock(mutex_);
    warmup_texts_ += texts.size();
    return absl::OkStatus();
  }

  std::vector<absl::StatusOr<audio::PcmAudio>> Synthesize(
      std::span<const engine::SegmentInput> batch) override {
    EngineCall call;
    call.started = core::Clock::now();
    for (const engine::SegmentInput& input : batch) {
      call.texts.emplace_back(input.text);
      call.voice_ids.emplace_back(input.voice_id);
      call.speeds.push_back(input.speed);
      call.phonemes.emplace_back(input.phonemes);
      call.pitches.push_back(input.pitch);
    }
    {
      std::unique_lock lock(mutex_);
      calls_.push_back(call);
      ++in_flight_;
      changed_.notify_all();
      changed_.wait(lock, [&] { return !gate_closed_ || permits_ > 0; });
      if (gate_closed_) --permits_;
    }
    if (options_.latency.count() > 0) std::this_thread::sleep_for(options_.latency);
    if (Contains(call.texts, options_.slow_marker)) std::this_thread::sleep_for(options_.slow_latency);
    {
      std::lock_guard lock(mutex_);
      --in_flight_;
      ++finished_calls_;
      changed_.notify_all();
    }

    if (Contains(call.texts, options_.throw_marker)) {
      throw std::runtime_error("fake engine asked to throw");
    }
    std::vector<absl::StatusOr<audio::PcmAudio>> results;
    for (const std::string& text : call.texts) {
      if (!options_.fail_marker.empty() && text.find(options_.fail_marker) != std::string::npos) {
        results.push_back(absl::InvalidArgumentError("fake engine asked to fail"));
      } else {
        float level = options_.fill_from_first_byte && !text.empty()
                          ? static_cast<unsigned char>(text[0]) / 256.0f
                          : 0.0f;
        audio::PcmAudio pcm{std::vector<float>(text.size(), level), options_.sample_rate};
        if (options_.report_words) ReportWords(text, pcm);
        results.push_back(std::move(pcm));
      }
    }
    if (Contains(call.texts, options_.short_result_marker)) results.pop_back();
    return results;
  }

  static void ReportWords(std::string_view text, audio::PcmAudio& pcm) {
    pcm.timings = audio::TimingsKind::kExact;
    const double rate = pcm.sample_rate;
    for (size_t at = 0; at < text.size();) {
      if (text[at] == ' ') {
        ++at;
        continue;
      }
      size_t end = text.find(' ', at);
      if (end == std::string_view::npos) end = text.size();
      pcm.words.push_back({at, end, at / rate, end / rate});
      at = end;
    }
  }

  // The gate. While closed, each call records itself and then blocks until a permit is
  // released for it or the gate opens. Open by default.
  void CloseGate() {
    std::lock_guard lock(mutex_);
    gate_closed_ = true;
    permits_ = 0;
  }
  void OpenGate() {
    {
      std::lock_guard lock(mutex_);
      gate_closed_ = false;
    }
    changed_.notify_all();
  }
  // Lets exactly one blocked (or future) call through a closed gate.
  void ReleaseOne() {
    {
      std::lock_guard lock(mutex_);
      ++permits_;
    }
    changed_.notify_all();
  }

  // Waits until at least `count` calls have entered Synthesize (blocked at the gate or not).
  // False on timeout; the timeout is a safety net against a hung test, not a speed claim.
  bool WaitForCalls(size_t count, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return calls_.size() >= count; });
  }
  // Waits until at least `count` calls have returned (or are about to return) from Synthesize.
  bool WaitForFinishedCalls(size_t count,
                            std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return finished_calls_ >= count; });
  }

  std::vector<EngineCall> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  // Every text that reached the engine, in call order.
  std::vector<std::string> texts() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> all;
    for (const EngineCall& call : calls_)
      all.insert(all.end(), call.texts.begin(), call.texts.end());
    return all;
  }
  // Batch sizes in call order.
  std::vector<size_t> batch_sizes() const {
    std::lock_guard lock(mutex_);
    std::vector<size_t> sizes;
    for (const EngineCall& call : calls_) sizes.push_back(call.texts.size());
    return sizes;
  }
  size_t in_flight() const {
    std::lock_guard lock(mutex_);
    return in_flight_;
  }
  size_t warmup_texts() const {
    std::lock_guard lock(mutex_);
    return warmup_texts_;
  }

 private:
  static bool Contains(const std::vector<std::string>& texts, const std::string& marker) {
    if (marker.empty()) return false;
    return std::any_of(texts.begin(), texts.end(), [&](const std::string& text) {
      return text.find(marker) != std::string::npos;
    });
  }

  const FakeEngineOptions options_;
  engine::ModelInfo info_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<EngineCall> calls_;  // guarded by mutex_
  size_t in_flight_ = 0;           // guarded by mutex_
  size_t finished_calls_ = 0;      // guarded by mutex_
  size_t warmup_texts_ = 0;        // guarded by mutex_
  bool gate_closed_ = false;       // guarded by mutex_
  size_t permits_ = 0;             // guarded by mutex_
};

}  // namespace voxserve::test_support
