// The response cache through TtsService: a repeated deterministic request is answered with the
// same bytes, timings and chunks without reaching the engine; anything that changes the audio
// misses; Cache-Control's no-cache and no-store; sampling engines without a seed, failed
// requests and inline prompts are never stored; a deleted cloned voice loses its entries; a
// stream from the cache still waits for a slow client.
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <future>

#include "service_test_support.h"
#include "support/temp_dir.h"
#include "support/wav_bytes.h"

namespace voxserve::service {
namespace {

// Signals each BufferedBytes call, so a test knows the job has looked at its client's backlog.
class WatchedSink : public RecordingSink {
 public:
  size_t BufferedBytes() const override {
    {
      std::lock_guard lock(mutex_);
      ++asked_;
    }
    asked_changed_.notify_all();
    return RecordingSink::BufferedBytes();
  }
  bool WaitAsked(int count) {
    std::unique_lock lock(mutex_);
    return asked_changed_.wait_for(lock, std::chrono::seconds(5), [&] { return asked_ >= count; });
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable asked_changed_;
  mutable int asked_ = 0;
};

class ResponseCacheServiceTest : public ServiceTest {
 protected:
  void StartCached(ServiceOptions options = {}) {
    options.cache.enabled = true;
    options.engine.report_words = true;
    Start(options);
    ASSERT_TRUE(load_status_.ok()) << load_status_;
  }

  double Metric(const std::string& series) const {
    const std::string text = registry_.RenderText();
    const std::string prefix = "\n" + series + " ";
    size_t at = text.find(prefix);
    return at == std::string::npos ? 0.0 : std::stod(text.substr(at + prefix.size()));
  }
  double Hits() const { return Metric("voxserve_response_cache_hits_total{model=\"fake\"}"); }
  double Misses() const { return Metric("voxserve_response_cache_misses_total{model=\"fake\"}"); }
};

void ExpectSameTimings(const std::vector<SegmentTimings>& a, const std::vector<SegmentTimings>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].segment, b[i].segment);
    EXPECT_EQ(a[i].text, b[i].text);
    EXPECT_EQ(a[i].kind, b[i].kind);
    EXPECT_DOUBLE_EQ(a[i].start_s, b[i].start_s);
    EXPECT_DOUBLE_EQ(a[i].end_s, b[i].end_s);
    ASSERT_EQ(a[i].words.size(), b[i].words.size());
    for (size_t w = 0; w < a[i].words.size(); ++w) {
      EXPECT_EQ(a[i].words[w].text_begin, b[i].words[w].text_begin);
      EXPECT_DOUBLE_EQ(a[i].words[w].start_s, b[i].words[w].start_s);
    }
  }
}

TEST_F(ResponseCacheServiceTest, ARepeatedRequestGetsTheSameBytesWithoutTheEngine) {
  StartCached();
  auto fresh = Run(Request("Alpha one. Bravo two."));
  ASSERT_TRUE(fresh->status().ok()) << fresh->status();
  ASSERT_EQ(engine_->texts().size(), 2u);

  auto cached = Run(Request("Alpha one. Bravo two."));
  ASSERT_TRUE(cached->status().ok()) << cached->status();
  EXPECT_EQ(engine_->texts().size(), 2u) << "the engine was asked again";
  EXPECT_EQ(cached->bytes(), fresh->bytes());
  EXPECT_EQ(cached->chunks().size(), 1u);  // a whole file, in one piece
  EXPECT_EQ(cached->start_rate(), fresh->start_rate());
  ExpectSameTimings(cached->timings(), fresh->timings());
  EXPECT_EQ(cached->timings_after_chunks(), fresh->timings_after_chunks());  // all before audio
  EXPECT_EQ(cached->summary().segments, 2);
  EXPECT_DOUBLE_EQ(cached->summary().audio_seconds, fresh->summary().audio_seconds);
  EXPECT_EQ(cached->summary().input_chars, fresh->summary().input_chars);
  EXPECT_EQ(cached->completions(), 1);
  EXPECT_EQ(Hits(), 1);
  EXPECT_EQ(Misses(), 1);

  // And what the cache gave is what a fresh synthesis gives.
  SynthesisRequest again = Request("Alpha one. Bravo two.");
  again.cache_policy = CachePolicy::kRefresh;
  auto refreshed = Run(std::move(again));
  EXPECT_EQ(engine_->texts().size(), 4u);
  EXPECT_EQ(refreshed->bytes(), cached->bytes());
}

TEST_F(ResponseCacheServiceTest, AStreamFromTheCacheComesInTheSameChunksWithItsTimings) {
  StartCached();
  const std::string text = "Alpha one. Bravo two. Charlie three.";
  auto fresh = Run(Request(text, /*streaming=*/true));
  ASSERT_TRUE(fresh->status().ok()) << fresh->status();
  auto cached = Run(Request(text, /*streaming=*/true));
  ASSERT_TRUE(cached->status().ok()) << cached->status();
  EXPECT_EQ(engine_->texts().size(), 3u);
  ASSERT_GE(fresh->chunks().size(), 3u);
  EXPECT_EQ(cached->chunks(), fresh->chunks());
  ExpectSameTimings(cached->timings(), fresh->timings());
  EXPECT_EQ(cached->timings_after_chunks(), fresh->timings_after_chunks());
  EXPECT_EQ(Hits(), 1);
}

TEST_F(ResponseCacheServiceTest, StreamedAndWholeFileAnswersAreStoredApart) {
  StartCached();
  Run(Request("Alpha one.", /*streaming=*/true));
  auto file = Run(Request("Alpha one."));
  EXPECT_EQ(engine_->texts().size(), 2u);
  EXPECT_EQ(file->bytes().substr(0, 4), "RIFF");
  EXPECT_EQ(Hits(), 0);
}

TEST_F(ResponseCacheServiceTest, AnythingThatChangesTheAudioMisses) {
  StartCached();
  Run(Request("Alpha one."));
  const std::vector<std::pair<const char*, std::function<void(SynthesisRequest&)>>> changes = {
      {"text", [](SynthesisRequest& r) { r.text = "Alpha two."; }},
      {"voice", [](SynthesisRequest& r) { r.voice = "bob"; }},
      {"speed", [](SynthesisRequest& r) { r.speed = 1.25; }},
      {"format", [](SynthesisRequest& r) { r.format = audio::AudioFormat::kPcm; }},
      {"sample rate", [](SynthesisRequest& r) { r.sample_rate = 8000; }},
      {"instructions", [](SynthesisRequest& r) { r.instructions = "Slowly."; }},
      {"markup", [](SynthesisRequest& r) { r.markup_version = "lexicon:1"; }},
  };
  size_t calls = engine_->texts().size();
  for (const auto& [name, change] : changes) {
    SynthesisRequest request = Request("Alpha one.");
    change(request);
    auto sink = Run(std::move(request));
    EXPECT_TRUE(sink->status().ok()) << name << ": " << sink->status();
    EXPECT_EQ(engine_->texts().size(), ++calls) << name << " was answered from the cache";
  }
  EXPECT_EQ(Hits(), 0);
  // An alias of the same voice is the same request.
  SynthesisRequest alias = Request("Alpha one.");
  alias.voice = "narrator";  // → bob, asked for above
  Run(std::move(alias));
  EXPECT_EQ(engine_->texts().size(), calls);
  EXPECT_EQ(Hits(), 1);
}

TEST_F(ResponseCacheServiceTest, NoStoreNeitherReadsNorStores) {
  StartCached();
  SynthesisRequest bypass = Request("Alpha one.");
  bypass.cache_policy = CachePolicy::kBypass;
  Run(bypass);
  Run(bypass);
  EXPECT_EQ(engine_->texts().size(), 2u);
  EXPECT_EQ(service_->response_cache().Entries(), 0u);
  Run(Request("Alpha one."));
  EXPECT_EQ(engine_->texts().size(), 3u);
  EXPECT_EQ(Hits() + Misses(), 1);  // bypassing requests are neither
}

TEST_F(ResponseCacheServiceTest, NoCacheSynthesizesAfreshAndStoresTheResult) {
  StartCached();
  SynthesisRequest refresh = Request("Alpha one.");
  refresh.cache_policy = CachePolicy::kRefresh;
  Run(refresh);
  Run(refresh);
  EXPECT_EQ(engine_->texts().size(), 2u);
  EXPECT_EQ(service_->response_cache().Entries(), 1u);
  Run(Request("Alpha one."));
  EXPECT_EQ(engine_->texts().size(), 2u);
  EXPECT_EQ(Hits(), 1);
}

TEST_F(ResponseCacheServiceTest, TheSinkIsToldWhatTheCacheDidBeforeItsFirstAudio) {
  ServiceOptions options;
  options.engine_name = "cosyvoice";
  StartCached(options);
  SynthesisRequest seeded = Request("Alpha one.");
  seeded.seed = 7;
  auto miss = Run(seeded);
  auto hit = Run(seeded);
  SynthesisRequest refresh = seeded;
  refresh.cache_policy = CachePolicy::kRefresh;
  auto refreshed = Run(refresh);
  auto sampling = Run(Request("Alpha one."));  // no seed: not a function of the request
  using ::testing::ElementsAre;
  EXPECT_THAT(miss->cache_results(), ElementsAre(CacheResult::kMiss));
  EXPECT_THAT(hit->cache_results(), ElementsAre(CacheResult::kHit));
  EXPECT_THAT(refreshed->cache_results(), ElementsAre(CacheResult::kBypass));
  EXPECT_THAT(sampling->cache_results(), ElementsAre(CacheResult::kBypass));
}

TEST_F(ResponseCacheServiceTest, IsOffUnlessConfigured) {
  Start();
  Run(Request("Alpha one."));
  Run(Request("Alpha one."));
  EXPECT_EQ(engine_->texts().size(), 2u);
  EXPECT_EQ(service_->response_cache().Entries(), 0u);
  EXPECT_EQ(Hits() + Misses(), 0);
  EXPECT_THAT(Run(Request("Alpha one."))->cache_results(),
              ::testing::ElementsAre(CacheResult::kOff));
}

TEST_F(ResponseCacheServiceTest, ASamplingEngineIsCachedOnlyWithASeed) {
  ServiceOptions options;
  options.engine_name = "cosyvoice";
  StartCached(options);
  Run(Request("Alpha one."));
  Run(Request("Alpha one."));
  EXPECT_EQ(engine_->texts().size(), 2u) << "a seedless sampling request was cached";
  EXPECT_EQ(Hits() + Misses(), 0);

  SynthesisRequest seeded = Request("Alpha one.");
  seeded.seed = 7;
  Run(seeded);
  Run(seeded);
  EXPECT_EQ(engine_->texts().size(), 3u);
  seeded.seed = 8;
  Run(seeded);
  EXPECT_EQ(engine_->texts().size(), 4u);
  EXPECT_EQ(Hits(), 1);
}

TEST_F(ResponseCacheServiceTest, AFailedRequestIsNotStored) {
  ServiceOptions options;
  options.engine.fail_marker = "FAIL";
  StartCached(options);
  auto first = Run(Request("Alpha FAIL."));
  EXPECT_FALSE(first->status().ok());
  auto second = Run(Request("Alpha FAIL."));
  EXPECT_FALSE(second->status().ok());
  EXPECT_EQ(engine_->texts().size(), 2u);
  EXPECT_EQ(service_->response_cache().Entries(), 0u);
}

TEST_F(ResponseCacheServiceTest, AFloodOfDistinctTextsStaysWithinTheBounds) {
  ServiceOptions options;
  options.cache.max_entries = 5;
  options.cache.max_bytes = 1 << 20;
  StartCached(options);
  for (int i = 0; i < 40; ++i) {
    Run(Request("Sentence number " + std::to_string(i) + "."));
    ASSERT_LE(service_->response_cache().Entries(), 5u);
    ASSERT_LE(service_->response_cache().Bytes(), 1u << 20);
  }
  EXPECT_EQ(Metric("voxserve_response_cache_evictions_total"), 35);
  Run(Request("Sentence number 39."));
  EXPECT_EQ(Hits(), 1);
}

// The replay is a stream like any other: it stops while the client is behind and goes on when
// the transport says it has caught up.
TEST_F(ResponseCacheServiceTest, AStreamFromTheCacheWaitsForASlowClient) {
  ServiceOptions options;
  options.stream_buffer_bytes = 1024;
  StartCached(options);
  const std::string text = "Alpha one. Bravo two. Charlie three.";
  auto fresh = Run(Request(text, /*streaming=*/true));
  ASSERT_TRUE(fresh->status().ok());

  auto sink = std::make_shared<WatchedSink>();
  sink->buffered = 1 << 20;  // the client reads nothing
  auto job = Accept(Request(text, /*streaming=*/true), sink);
  ASSERT_TRUE(sink->WaitAsked(1));
  EXPECT_TRUE(sink->chunks().empty());
  EXPECT_EQ(sink->completions(), 0);

  sink->buffered = 0;
  job->Resume();
  ASSERT_TRUE(sink->WaitComplete());
  EXPECT_TRUE(sink->status().ok());
  EXPECT_EQ(sink->chunks(), fresh->chunks());
  EXPECT_EQ(engine_->texts().size(), 3u);
}

TEST_F(ResponseCacheServiceTest, ACancelledReplayEndsOnceAsCancelled) {
  ServiceOptions options;
  options.stream_buffer_bytes = 1024;
  StartCached(options);
  Run(Request("Alpha one. Bravo two.", /*streaming=*/true));
  auto sink = std::make_shared<WatchedSink>();
  sink->buffered = 1 << 20;
  auto job = Accept(Request("Alpha one. Bravo two.", /*streaming=*/true), sink);
  ASSERT_TRUE(sink->WaitAsked(1));
  job->Cancel();
  ASSERT_TRUE(sink->WaitComplete());
  EXPECT_EQ(sink->status().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(service_->WaitIdle(std::chrono::seconds(5)));
  EXPECT_EQ(sink->completions(), 1);
}

class ClonedVoiceCacheTest : public ResponseCacheServiceTest {
 protected:
  void StartWithVoices() {
    ServiceOptions options;
    options.voices.dir = dir_.path() + "/voices";
    options.voices.test_cloner = true;
    options.engine.cloned_voice_family = "test";
    StartCached(options);
  }

  absl::StatusOr<store::StoredVoice> Register(std::string name) {
    VoiceRegistration registration;
    registration.model = "fake";
    registration.name = std::move(name);
    registration.transcript = "hello world";
    registration.audio = test_support::WavBytes(1.0);
    std::promise<absl::StatusOr<store::StoredVoice>> promise;
    service_->voices().Register(std::move(registration),
                                [&promise](auto stored) { promise.set_value(std::move(stored)); });
    auto future = promise.get_future();
    EXPECT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    return future.get();
  }

  SynthesisRequest WithVoice(std::string voice) {
    SynthesisRequest request = Request("Alpha one.");
    request.voice = std::move(voice);
    return request;
  }

  test_support::TempDir dir_;
};

TEST_F(ClonedVoiceCacheTest, ADeletedVoiceLosesItsEntriesAndANewOneOfTheSameNameMisses) {
  StartWithVoices();
  auto voice = Register("Narrator Two");
  ASSERT_TRUE(voice.ok()) << voice.status();
  auto first = Run(WithVoice("narrator two"));
  ASSERT_TRUE(first->status().ok()) << first->status();
  Run(WithVoice(voice->metadata.id));  // by id: the same voice, the same answer
  EXPECT_EQ(engine_->texts().size(), 1u);
  Run(Request("Alpha one."));  // a built-in voice's entry, which the deletion leaves alone
  EXPECT_EQ(service_->response_cache().Entries(), 2u);

  ASSERT_TRUE(service_->voices().Delete(voice->metadata.id).ok());
  EXPECT_EQ(service_->response_cache().Entries(), 1u);
  EXPECT_EQ(Metric("voxserve_response_cache_invalidations_total"), 1);

  auto again = Register("Narrator Two");
  ASSERT_TRUE(again.ok()) << again.status();
  const size_t calls = engine_->texts().size();
  auto second = Run(WithVoice("narrator two"));
  ASSERT_TRUE(second->status().ok()) << second->status();
  EXPECT_EQ(engine_->texts().size(), calls + 1) << "the old voice's audio was served";
}

TEST_F(ClonedVoiceCacheTest, AnInlinePromptIsNeverCached) {
  StartWithVoices();
  for (int i = 0; i < 2; ++i) {
    SynthesisRequest request = Request("Alpha one.");
    request.voice.clear();
    request.prompt_audio = test_support::WavBytes(1.0);
    request.prompt_text = "hello world";
    auto sink = std::make_shared<RecordingSink>();
    auto pending = service_->SynthesizeWithPrompt(request, sink);
    ASSERT_TRUE(sink->WaitComplete());
    EXPECT_TRUE(sink->status().ok()) << sink->status();
    EXPECT_TRUE(service_->WaitIdle(std::chrono::seconds(5)));
  }
  EXPECT_EQ(engine_->texts().size(), 2u);
  EXPECT_EQ(service_->response_cache().Entries(), 0u);
}

}  // namespace
}  // namespace voxserve::service
