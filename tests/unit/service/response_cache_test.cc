// ResponseCache on its own: what it keeps, what it evicts first (segmented LRU), its bounds,
// invalidation, its metrics; the Cache-Control directives it honours; and the key.
#include "service/response_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "service/response_cache_key.h"

namespace voxserve::service {
namespace {

std::shared_ptr<const CachedResponse> Response(size_t audio_bytes, char fill = 'a') {
  auto response = std::make_shared<CachedResponse>();
  response->events.emplace_back(std::string(audio_bytes, fill));
  response->audio_bytes = audio_bytes;
  response->output_sample_rate = 16000;
  return response;
}

ResponseCacheConfig Config(size_t max_entries, size_t max_bytes = 64ull << 20) {
  ResponseCacheConfig config;
  config.enabled = true;
  config.max_entries = max_entries;
  config.max_bytes = max_bytes;
  config.max_entry_bytes = std::min<size_t>(max_bytes, 16ull << 20);
  return config;
}

double Metric(const core::MetricsRegistry& registry, const std::string& series) {
  const std::string text = registry.RenderText();
  const std::string prefix = series + " ";
  size_t at = text.find("\n" + prefix);
  if (at == std::string::npos) return 0;
  return std::stod(text.substr(at + 1 + prefix.size()));
}

TEST(ResponseCache, ReturnsWhatWasStoredAndCountsHitsAndMisses) {
  core::MetricsRegistry registry;
  ResponseCache cache(Config(10), registry);
  EXPECT_EQ(cache.Lookup("k", "espeak"), nullptr);
  auto stored = Response(1000);
  cache.Insert("k", {}, stored, cache.Generation());
  EXPECT_EQ(cache.Lookup("k", "espeak"), stored);  // the same object: nothing was copied
  EXPECT_EQ(cache.Lookup("other", "espeak"), nullptr);
  EXPECT_EQ(Metric(registry, "voxserve_response_cache_hits_total{model=\"espeak\"}"), 1);
  EXPECT_EQ(Metric(registry, "voxserve_response_cache_misses_total{model=\"espeak\"}"), 2);
  EXPECT_EQ(Metric(registry, "voxserve_response_cache_entries"), 1);
  EXPECT_EQ(Metric(registry, "voxserve_response_cache_bytes"),
            static_cast<double>(stored->CostBytes(1)));
  EXPECT_EQ(cache.Bytes(), stored->CostBytes(1));
}

TEST(ResponseCache, StoringAKeyAgainReplacesItsEntry) {
  core::MetricsRegistry registry;
  ResponseCache cache(Config(10), registry);
  cache.Insert("k", {}, Response(1000), cache.Generation());
  auto newer = Response(2000, 'b');
  cache.Insert("k", {}, newer, cache.Generation());
  EXPECT_EQ(cache.Entries(), 1u);
  EXPECT_EQ(cache.Bytes(), newer->CostBytes(1));
  EXPECT_EQ(cache.Lookup("k", "m"), newer);
}

TEST(ResponseCache, TheLeastRecentlyUsedGoesFirstWhenTheEntryBoundIsReached) {
  core::MetricsRegistry registry;
  ResponseCache cache(Config(3), registry);
  for (const char* key : {"a", "b", "c"}) cache.Insert(key, {}, Response(100), cache.Generation());
  cache.Insert("d", {}, Response(100), cache.Generation());
  EXPECT_EQ(cache.Entries(), 3u);
  EXPECT_EQ(cache.Lookup("a", "m"), nullptr);
  for (const char* key : {"b", "c", "d"}) EXPECT_NE(cache.Lookup(key, "m"), nullptr) << key;
  EXPECT_EQ(Metric(registry, "voxserve_response_cache_evictions_total"), 1);
}

TEST(ResponseCache, NeverHoldsMoreBytesThanItsBound) {
  core::MetricsRegistry registry;
  const size_t max_bytes = 1 << 20;
  ResponseCache cache(Config(1000, max_bytes), registry);
  for (int i = 0; i < 200; ++i) {
    cache.Insert("key" + std::to_string(i), {}, Response(100'000 + i), cache.Generation());
    ASSERT_LE(cache.Bytes(), max_bytes) << i;
  }
  EXPECT_LE(cache.Entries(), 10u);  // ten 100 kB answers fill 1 MiB
  EXPECT_GE(cache.Entries(), 9u);
  EXPECT_NE(cache.Lookup("key199", "m"), nullptr);  // the newest stays
}

// The reason for two segments: one-off texts (a stream of unique LLM answers) pass through the
// probation segment and cannot push out what is asked for again and again.
TEST(ResponseCache, AFloodOfDistinctTextsDoesNotEvictThePhrasesAskedForAgain) {
  core::MetricsRegistry registry;
  ResponseCache cache(Config(100), registry);
  for (int i = 0; i < 20; ++i) {
    const std::string key = "popular" + std::to_string(i);
    cache.Insert(key, {}, Response(500), cache.Generation());
    ASSERT_NE(cache.Lookup(key, "m"), nullptr);  // asked for a second time
  }
  for (int i = 0; i < 10'000; ++i) {
    cache.Insert("once" + std::to_string(i), {}, Response(500), cache.Generation());
    ASSERT_LE(cache.Entries(), 100u);
  }
  for (int i = 0; i < 20; ++i) {
    EXPECT_NE(cache.Lookup("popular" + std::to_string(i), "m"), nullptr) << i;
  }
  EXPECT_EQ(Metric(registry, "voxserve_response_cache_evictions_total"), 10'000 - 80);
}

TEST(ResponseCache, TheProtectedSegmentGivesWayWhenEverythingIsPopular) {
  core::MetricsRegistry registry;
  ResponseCache cache(Config(10), registry);
  for (int i = 0; i < 30; ++i) {
    const std::string key = "k" + std::to_string(i);
    cache.Insert(key, {}, Response(100), cache.Generation());
    ASSERT_NE(cache.Lookup(key, "m"), nullptr);
    ASSERT_LE(cache.Entries(), 10u);
  }
  EXPECT_NE(cache.Lookup("k29", "m"), nullptr);
  EXPECT_EQ(cache.Lookup("k0", "m"), nullptr);
}

TEST(ResponseCache, AResponseLargerThanMaxEntryBytesIsNotStored) {
  core::MetricsRegistry registry;
  ResponseCacheConfig config = Config(10);
  config.max_entry_bytes = 10'000;
  ResponseCache cache(config, registry);
  cache.Insert("small", {}, Response(5'000), cache.Generation());
  cache.Insert("large", {}, Response(20'000), cache.Generation());
  EXPECT_NE(cache.Lookup("small", "m"), nullptr);
  EXPECT_EQ(cache.Lookup("large", "m"), nullptr);
  EXPECT_EQ(Metric(registry, "voxserve_response_cache_too_large_total"), 1);
}

TEST(ResponseCache, InvalidateDropsTheEntriesOfOneTagOnly) {
  core::MetricsRegistry registry;
  ResponseCache cache(Config(10), registry);
  cache.Insert("v1-a", {"voice:v1"}, Response(100), cache.Generation());
  cache.Insert("v1-b", {"voice:v1"}, Response(100), cache.Generation());
  ASSERT_NE(cache.Lookup("v1-b", "m"), nullptr);  // in the protected segment too
  cache.Insert("v2", {"voice:v2"}, Response(100), cache.Generation());
  cache.Insert("plain", {}, Response(100), cache.Generation());
  EXPECT_EQ(cache.Invalidate("voice:v1"), 2u);
  EXPECT_EQ(cache.Lookup("v1-a", "m"), nullptr);
  EXPECT_EQ(cache.Lookup("v1-b", "m"), nullptr);
  EXPECT_NE(cache.Lookup("v2", "m"), nullptr);
  EXPECT_NE(cache.Lookup("plain", "m"), nullptr);
  EXPECT_EQ(cache.Entries(), 2u);
  EXPECT_EQ(Metric(registry, "voxserve_response_cache_invalidations_total"), 2);
  EXPECT_EQ(cache.Invalidate("voice:unknown"), 0u);
}

// A voice deleted while one of its requests was being synthesized: that answer must not be
// stored when the request ends.
TEST(ResponseCache, AnAnswerBegunBeforeAnInvalidationIsNotStoredIfItHasTags) {
  core::MetricsRegistry registry;
  ResponseCache cache(Config(10), registry);
  const uint64_t before = cache.Generation();
  cache.Invalidate("voice:v1");
  cache.Insert("tagged", {"voice:v1"}, Response(100), before);
  cache.Insert("untagged", {}, Response(100), before);
  EXPECT_EQ(cache.Lookup("tagged", "m"), nullptr);
  EXPECT_NE(cache.Lookup("untagged", "m"), nullptr);
}

TEST(ResponseCache, StaysConsistentUnderConcurrentUse) {
  core::MetricsRegistry registry;
  ResponseCache cache(Config(50, 1 << 20), registry);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::string key = "k" + std::to_string((i * 7 + t) % 120);
        if (cache.Lookup(key, "m") == nullptr) {
          cache.Insert(key, {i % 3 == 0 ? "voice:x" : ""}, Response(1000 + t), cache.Generation());
        }
        if (i % 500 == 0) cache.Invalidate("voice:x");
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(cache.Entries(), 50u);
  EXPECT_LE(cache.Bytes(), 1u << 20);
  size_t found = 0;
  for (int i = 0; i < 120; ++i) found += cache.Lookup("k" + std::to_string(i), "m") != nullptr;
  EXPECT_EQ(found, cache.Entries());
}

TEST(ResponseCacheConfig, RefusesBoundsOutOfRange) {
  ResponseCacheConfig config;
  EXPECT_TRUE(config.Validate().ok());
  config.max_entries = 0;
  EXPECT_NE(config.Validate().message().find("cache.max_entries"), std::string::npos);
  config = {};
  config.max_bytes = 1000;
  EXPECT_NE(config.Validate().message().find("cache.max_bytes"), std::string::npos);
  config = {};
  config.max_entry_bytes = 100;
  EXPECT_NE(config.Validate().message().find("cache.max_entry_bytes"), std::string::npos);
  config = {};
  config.max_bytes = 1 << 20;  // below the default max_entry_bytes: that one is cut to it
  EXPECT_TRUE(config.Validate().ok());
}

TEST(ParseCacheControl, ReadsTheRequestDirectives) {
  struct Case {
    const char* header;
    CachePolicy policy;
  };
  for (const Case& c : {
           Case{"", CachePolicy::kUse},
           Case{"max-age=60", CachePolicy::kUse},
           Case{"no-transform", CachePolicy::kUse},
           Case{"no-cache", CachePolicy::kRefresh},
           Case{"No-Cache", CachePolicy::kRefresh},
           Case{"  no-cache  ", CachePolicy::kRefresh},
           Case{"max-age=0", CachePolicy::kRefresh},
           Case{"max-age = 0", CachePolicy::kRefresh},
           Case{"max-age=\"0\"", CachePolicy::kRefresh},
           Case{"max-age=00x", CachePolicy::kUse},
           Case{"no-store", CachePolicy::kBypass},
           Case{"NO-STORE", CachePolicy::kBypass},
           Case{"no-cache, no-store", CachePolicy::kBypass},
           Case{"no-store,no-cache", CachePolicy::kBypass},
           Case{"private, no-cache", CachePolicy::kRefresh},
           Case{"no-cachex", CachePolicy::kUse},
           Case{",,,", CachePolicy::kUse},
       }) {
    EXPECT_EQ(ParseCacheControl(c.header), c.policy) << '"' << c.header << '"';
  }
}

ResponseCacheKey BaseKey() {
  ResponseCacheKey key;
  key.model_id = "piper";
  key.model_fingerprint = "piper\nen_US-amy\nnoise_scale=0.667";
  key.voice_id = "amy";
  key.segments = {"Hello there.", "How are you?"};
  key.speed = 1.0;
  key.format = audio::AudioFormat::kMp3;
  key.sample_rate = 22050;
  return key;
}

TEST(ResponseCacheKey, EveryFieldThatChangesTheBytesChangesTheKey) {
  const std::string base = BaseKey().Serialize();
  EXPECT_EQ(BaseKey().Serialize(), base);
  const std::vector<std::pair<const char*, std::function<void(ResponseCacheKey&)>>> changes = {
      {"model", [](ResponseCacheKey& k) { k.model_id = "piper2"; }},
      {"options", [](ResponseCacheKey& k) { k.model_fingerprint += "\nlength_scale=1.1"; }},
      {"voice", [](ResponseCacheKey& k) { k.voice_id = "ryan"; }},
      {"voice version", [](ResponseCacheKey& k) { k.voice_version = "1764700000"; }},
      {"voice mode", [](ResponseCacheKey& k) { k.voice_mode = "1"; }},
      {"instructions", [](ResponseCacheKey& k) { k.instructions = "Whisper."; }},
      {"text", [](ResponseCacheKey& k) { k.segments[1] = "How are you!"; }},
      {"segmentation", [](ResponseCacheKey& k) { k.segments = {"Hello there. How are you?"}; }},
      {"boundary",
       [](ResponseCacheKey& k) {
         k.segments = {"Hello there. How", " are you?"};
       }},
      {"markup", [](ResponseCacheKey& k) { k.markup_version = "lexicon:abc@3"; }},
      {"speed", [](ResponseCacheKey& k) { k.speed = 1.0000001; }},
      {"format", [](ResponseCacheKey& k) { k.format = audio::AudioFormat::kWav; }},
      {"rate", [](ResponseCacheKey& k) { k.sample_rate = 16000; }},
      {"streaming", [](ResponseCacheKey& k) { k.streaming = true; }},
      {"seed", [](ResponseCacheKey& k) { k.seed = 0; }},
  };
  std::set<std::string> seen = {base};
  for (const auto& [name, change] : changes) {
    ResponseCacheKey key = BaseKey();
    change(key);
    EXPECT_TRUE(seen.insert(key.Serialize()).second) << name;
  }
}

TEST(ResponseCacheKey, FieldsCannotRunIntoEachOther) {
  ResponseCacheKey a = BaseKey();
  ResponseCacheKey b = BaseKey();
  a.voice_id = "amy";
  a.voice_version = "1";
  b.voice_id = "amy1";
  b.voice_version = "";
  EXPECT_NE(a.Serialize(), b.Serialize());
}

TEST(EngineOutputIsDeterministic, SamplingEnginesOnlyWithASeed) {
  EXPECT_TRUE(EngineOutputIsDeterministic("espeak", std::nullopt));
  EXPECT_TRUE(EngineOutputIsDeterministic("piper", std::nullopt));
  EXPECT_TRUE(EngineOutputIsDeterministic("kokoro", std::nullopt));
  EXPECT_FALSE(EngineOutputIsDeterministic("cosyvoice", std::nullopt));
  EXPECT_TRUE(EngineOutputIsDeterministic("cosyvoice", 42));
}

}  // namespace
}  // namespace voxserve::service
