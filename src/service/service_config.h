// Settings of the service layer: which models to load, how names resolve, request limits.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/engine_factory.h"
#include "scheduler/scheduler_config.h"
#include "service/response_cache.h"
#include "store/dictionary_backend.h"
#include "store/voice_backend.h"
#include "text/input_limits.h"

namespace voxserve::service {

struct ModelConfig {
  engine::EngineSpec engine;
  scheduler::SchedulerConfig scheduling;
  std::vector<std::string> warmup = {"Hello."};  // synthesized before the model counts as ready
  // PLS or JSON lexicon files every request of this model speaks with, after the dictionaries
  // the request names (docs/pronunciation-dictionaries.md). Read at startup.
  std::vector<std::string> lexicons;
};

// A name clients may use for a voice of some model.
struct VoiceAlias {
  std::string model;  // empty = the default model
  std::string voice;
};

struct ServiceConfig {
  std::vector<ModelConfig> models;
  std::string default_model;  // empty = the first model
  // A model that fails to load is skipped with a warning (listed as failed in /v1/models and
  // /health) instead of keeping the server not ready.
  bool skip_broken_models = false;
  std::map<std::string, VoiceAlias> voice_aliases;
  // OpenAI's voice names → voices of the default model (defaults cover espeak; see voice_catalog).
  // Only OpenAI's names (the keys of DefaultOpenAiVoicesForEspeak): a name of one's own is a
  // voice_aliases entry, so a misspelled "allloy" is refused, not added as a new voice.
  std::map<std::string, std::string> openai_voices;
  // The names among them the config set (not the built-in defaults, which name espeak voices a
  // non-espeak default model lacks): their targets must be voices of the default model, checked
  // once it has loaded as voice_aliases are (TtsService::LoadModels).
  std::set<std::string> configured_openai_voices;
  text::InputLimits limits;
  int default_timeout_ms = 60'000;  // a request's deadline when it names none
  int max_timeout_ms = 600'000;     // the most a request may ask for
  int max_segment_chars = 400;      // longer sentences are cut at clause punctuation or spaces
  // Segments of one request in the scheduler at once: 2 overlaps encoding and synthesis.
  int pipeline_depth = 2;
  size_t stream_buffer_bytes = 1 << 20;  // encoded audio a slow streaming client may hold back
  // The audio one request may make, checked as it is made (SynthesisJob): past it the rest is
  // cancelled and the request ends with OutputTooLong (413 `output_too_long`). A whole file is
  // held in memory until it is sent: 15 minutes is all 4096 characters of English at speed 0.3,
  // or of Chinese at espeak-ng's slow pace, and ~43 MB of 24 kHz WAV. A stream is written as it
  // goes, so it may run longer; the bound covers all its sentences together.
  int max_audio_seconds = 900;
  int max_stream_audio_seconds = 3600;
  int encode_threads = 0;                     // 0 = number of cores
  store::VoiceStoreConfig voices;             // cloned voices (voices.*; docs/voice-cloning.md)
  ResponseCacheConfig cache;                  // cache.*; docs/response-cache.md
  store::DictionaryStoreConfig dictionaries;  // dictionaries.*; docs/pronunciation-dictionaries.md
  // Numbers, dates, times, currency, units and abbreviations written out as words for the
  // engines that read characters (Piper, Kokoro, CosyVoice); YAML text.normalize. A request may
  // override it (SynthesisRequest::normalize_text).
  bool normalize_text = true;

  absl::Status Validate() const;
};

// The built-in mapping of OpenAI's 13 voice names to distinct espeak-ng voices.
std::map<std::string, std::string> DefaultOpenAiVoicesForEspeak();

// Built-in voice names that clients written for other servers send ("zh_female", "en_us", ...),
// mapped to espeak-ng voices. They stand for a voice of any model that has it (espeak models);
// `voice_aliases` and `openai_voices` override them. "default" (each model's default voice) is
// not in this map: the catalog handles it.
std::map<std::string, std::string> BuiltInVoiceAliasesForEspeak();

}  // namespace voxserve::service
