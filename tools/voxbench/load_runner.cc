#include "load_runner.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

namespace voxserve::voxbench {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string ErrorName(const absl::Status& status) {
  client::ErrorInfo info = client::ErrorInfoOf(status);
  if (info.kind == client::ErrorKind::kHttp) return "http_" + std::to_string(info.http_status);
  return std::string(client::ErrorKindName(info.kind));
}

// Samples of requests that completed inside [window_start, window_end].
class SampleSink {
 public:
  SampleSink(Clock::time_point window_start, Clock::time_point window_end)
      : start_(window_start), end_(window_end) {}
  void Add(Sample sample, Clock::time_point completed) {
    if (completed < start_ || completed > end_) return;
    std::lock_guard lock(mutex_);
    samples_.push_back(std::move(sample));
  }
  std::vector<Sample> Take() {
    std::lock_guard lock(mutex_);
    return std::move(samples_);
  }

 private:
  const Clock::time_point start_, end_;
  std::mutex mutex_;
  std::vector<Sample> samples_;
};

}  // namespace

Sample RunOne(client::Client& client, const LoadSettings& settings, const std::string& text,
              Clock::time_point intended_start) {
  Sample sample;
  Clock::time_point sent = Clock::now();
  double queued = Seconds(sent - intended_start);
  absl::Status status;
  client::CallInfo info;
  if (settings.call == CallKind::kHealthLive) {
    auto health = client.CheckHealth(client::HealthProbe::kLive, &info);
    status = health.ok() && health->http_status != 200
                 ? absl::UnavailableError("HTTP " + std::to_string(health->http_status))
                 : health.status();
    if (health.ok()) sample.bytes = health->body.size();
  } else {
    client::SpeechRequest request = settings.request;
    request.input = text;
    absl::StatusOr<client::SpeechResult> result =
        request.stream == client::StreamFormat::kNone
            ? client.Synthesize(request, &info)
            : client.SynthesizeStream(request, [](std::string_view) {}, &info);
    status = result.status();
    if (result.ok()) {
      sample.ttfa_s = queued + Seconds(result->time_to_first_audio);
      sample.audio_s = result->audio_seconds;
      sample.bytes = result->audio_bytes;
    }
  }
  sample.latency_s = Seconds(Clock::now() - intended_start);
  sample.retries = info.attempts.empty() ? 0 : static_cast<int>(info.attempts.size()) - 1;
  sample.ok = status.ok();
  if (!status.ok()) sample.error = ErrorName(status);
  return sample;
}

std::vector<Sample> RunClosedLoop(client::Client& client, const LoadSettings& settings,
                                  int concurrency) {
  Clock::time_point start = Clock::now();
  Clock::time_point window_start =
      start + std::chrono::duration_cast<Clock::duration>(settings.warmup);
  Clock::time_point end =
      window_start + std::chrono::duration_cast<Clock::duration>(settings.duration);
  SampleSink sink(window_start, end);
  std::vector<std::thread> workers;
  for (int i = 0; i < concurrency; ++i) {
    workers.emplace_back([&, i] {
      std::mt19937_64 rng(settings.seed * 1000003 + static_cast<uint64_t>(i));
      std::uniform_int_distribution<size_t> pick(0, settings.texts.size() - 1);
      while (Clock::now() < end) {
        Clock::time_point begin = Clock::now();
        Sample sample = RunOne(client, settings, settings.texts[pick(rng)], begin);
        sink.Add(std::move(sample), Clock::now());
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  return sink.Take();
}

std::vector<Sample> RunOpenLoop(client::Client& client, const LoadSettings& settings, double rate) {
  Clock::time_point start = Clock::now();
  Clock::time_point window_start =
      start + std::chrono::duration_cast<Clock::duration>(settings.warmup);
  Clock::time_point end =
      window_start + std::chrono::duration_cast<Clock::duration>(settings.duration);
  SampleSink sink(window_start, end);

  struct Arrival {
    Clock::time_point at;
    size_t text;
  };
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<Arrival> queue;
  bool closed = false;
  size_t idle = 0;  // workers waiting for an arrival
  std::vector<std::thread> workers;
  auto worker = [&] {
    while (true) {
      Arrival arrival;
      {
        std::unique_lock lock(mutex);
        ++idle;
        ready.wait(lock, [&] { return closed || !queue.empty(); });
        --idle;
        if (queue.empty()) return;
        arrival = queue.front();
        queue.pop_front();
      }
      Sample sample = RunOne(client, settings, settings.texts[arrival.text], arrival.at);
      sink.Add(std::move(sample), Clock::now());
    }
  };
  std::mt19937_64 rng(settings.seed);
  std::exponential_distribution<double> gap(rate);
  std::uniform_int_distribution<size_t> pick(0, settings.texts.size() - 1);
  Clock::time_point next = start;
  while (next < end) {
    std::this_thread::sleep_until(next);
    bool need_worker = false;
    {
      std::lock_guard lock(mutex);
      queue.push_back({next, pick(rng)});
      need_worker = queue.size() > idle;
    }
    // Threads are started as the backlog needs them, up to max_in_flight.
    if (need_worker && workers.size() < static_cast<size_t>(settings.max_in_flight)) {
      workers.emplace_back(worker);
    }
    ready.notify_one();
    next += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(gap(rng)));
  }
  {
    std::lock_guard lock(mutex);
    closed = true;
    queue.clear();  // arrivals past the window would not count
  }
  ready.notify_all();
  for (std::thread& thread : workers) thread.join();
  return sink.Take();
}

}  // namespace voxserve::voxbench
