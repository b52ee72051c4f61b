// The owner of a SpeechSession in tests: its serialized context is the test thread, and it
// records what the session reports.
#pragma once

#include <deque>
#include <functional>

#include "service/speech_session.h"
#include "service_test_support.h"

namespace voxserve::service {

using std::chrono::milliseconds;

// The owner's serialized context is the test thread: completions the session posts wait in a
// queue until the test runs them, so the test decides when the session may go on.
class Owner : public SpeechSession::Listener {
 public:
  SessionPost Post() {
    return [this](absl::AnyInvocable<void() &&> task) {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
      changed_.notify_all();
    };
  }

  // Runs posted completions until `done` holds. False on timeout (a safety net, not a speed
  // claim).
  bool RunUntil(const std::function<bool()>& done, milliseconds timeout = milliseconds(5000)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
      absl::AnyInvocable<void() &&> task;
      {
        std::unique_lock lock(mutex_);
        if (!changed_.wait_until(lock, deadline, [&] { return !tasks_.empty(); })) return false;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      std::move(task)();
    }
    return true;
  }
  bool RunUntilEnded() {
    return RunUntil([&] { return !ends.empty(); });
  }
  // Runs the completions posted so far; returns how many.
  int RunPosted() {
    int ran = 0;
    for (;;) {
      absl::AnyInvocable<void() &&> task;
      {
        std::lock_guard lock(mutex_);
        if (tasks_.empty()) return ran;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      std::move(task)();
      ++ran;
    }
  }
  // Waits, without running it, until a completion has been posted.
  bool WaitForPostedTask(milliseconds timeout = milliseconds(5000)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return !tasks_.empty(); });
  }

  // Service threads.
  void OnAudio(std::string bytes, int sample_rate) override {
    std::lock_guard lock(mutex_);
    EXPECT_EQ(sample_rate, voice_rate);  // WAV keeps the voice's rate
    current_audio_ += bytes;
    log_.push_back("audio");
  }
  size_t QueuedAudioBytes() const override { return 0; }

  // The test thread.
  void OnSentenceDone(const SentenceReport& report) override {
    std::lock_guard lock(mutex_);
    reports.push_back(report);
    sentence_audio.push_back(std::move(current_audio_));
    current_audio_.clear();
    log_.push_back("done " + std::to_string(report.index));
  }
  void OnEnd(const SessionEnd& end) override {
    std::lock_guard lock(mutex_);
    ends.push_back(end);
    log_.push_back("end");
  }

  // What happened, with runs of audio chunks counted as one "audio".
  std::vector<std::string> Log() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> log;
    for (const std::string& entry : log_) {
      if (entry == "audio" && !log.empty() && log.back() == "audio") continue;
      log.push_back(entry);
    }
    return log;
  }

  int voice_rate = 16000;  // FakeEngineOptions::sample_rate
  std::vector<SentenceReport> reports;
  std::vector<std::string> sentence_audio;  // each sentence's bytes (a streamed WAV each)
  std::vector<SessionEnd> ends;

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<absl::AnyInvocable<void() &&>> tasks_;
  std::string current_audio_;
  std::vector<std::string> log_;
};

class SpeechSessionTest : public ServiceTest {
 protected:
  SessionOptions Options() {
    SessionOptions options;
    options.request.model = "fake";
    options.request.voice = "alice";
    options.request.format = audio::AudioFormat::kWav;  // 16 kHz as the voice: levels survive
    options.request.context.request_id = "stream";
    return options;
  }

  std::unique_ptr<SpeechSession> Open(SessionOptions options) {
    auto session = SpeechSession::Create(*service_, std::move(options), owner_, owner_.Post());
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? *std::move(session) : nullptr;
  }
  std::unique_ptr<SpeechSession> Open() { return Open(Options()); }

  Owner owner_;
};

}  // namespace voxserve::service
