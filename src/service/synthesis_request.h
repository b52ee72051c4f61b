// What a transport hands TtsService for one synthesis, and how the audio comes back.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "audio/audio_format.h"
#include "audio/pcm.h"
#include "core/request_context.h"
#include "core/structured_log.h"
#include "engine/engine.h"
#include "engine/voice_cloning.h"

namespace voxserve::service {

// What a request asks of the response cache (service/response_cache.h), from its
// `Cache-Control` (RFC 9111 request directives): `no-cache` synthesizes afresh and stores the
// result (kRefresh); `no-store` neither reads nor stores (kBypass).
// Ordered from the most lenient to the strictest (several directives: the strictest wins).
enum class CachePolicy { kUse, kRefresh, kBypass };

// What the response cache did with a request, for the transports' `X-Cache` header (gRPC:
// `x-cache` trailing metadata): kOff when the cache is off; kHit answered from it; kMiss looked
// up, synthesized and stored; kBypass not read (Cache-Control no-cache or no-store, or a request
// whose audio is not a function of what it asks: CosyVoice without a seed, an inline prompt).
enum class CacheResult { kOff, kHit, kMiss, kBypass };

// ElevenLabs' pronunciation_dictionary_locators item: a stored dictionary (service/
// dictionary_store.h) and one of its versions; empty version_id = its latest version.
struct DictionaryLocator {
  std::string id;
  std::string version_id;

  bool operator==(const DictionaryLocator&) const = default;
};

struct SynthesisRequest {
  std::string model;  // as the client named it; empty or an OpenAI model name = the default model
  std::string voice;  // voice id, alias or OpenAI voice name; empty = the model's default voice
  std::string text;
  std::string text_field = "input";  // the request field holding the text, named in errors
  // "ssml", "text", or empty: SSML when the text starts with "<speak" (docs/ssml.md). Checked by
  // the service (IsSsmlRequest).
  std::string input_format;
  double speed = 1.0;  // 0.25 .. 4.0
  // OpenAI's style instructions: a cloned CosyVoice voice follows them (voice mode "instruct");
  // engines without style control (espeak, Piper, Kokoro) accept and ignore them, as OpenAI's
  // tts-1 does. At most kMaxInstructionsChars.
  std::string instructions;
  // How a cloned voice uses its prompt: "zero_shot", "cross_lingual" or "instruct" (the names of
  // every API; ParseVoiceMode); empty = chosen by TtsService (ResolveVoiceMode). Only for cloned
  // voices: with another voice it is an InvalidArgument naming "voice_mode".
  std::string voice_mode;
  audio::AudioFormat format = audio::AudioFormat::kMp3;
  // The output rate asked for (audio::ResolveOutputSampleRate); 0 = the format's own. A voxserve
  // extension for telephony (pcm at 8/16 kHz) and ElevenLabs' output_format (pcm_16000, ...).
  int sample_rate = 0;
  bool streaming = false;  // deliver bytes as each segment finishes
  // A later sentence of a stream already under way (WebSocket, gRPC bidi): none of its segments
  // counts as a request's first, so a new stream's first audio still goes ahead of it in the
  // queue, and admission control does not cut a stream that has started.
  bool continues_stream = false;
  std::optional<std::chrono::milliseconds> timeout;  // capped by limits.max_timeout_ms
  // For the audio bound (ServiceConfig::max_audio_seconds for a whole file, max_stream_audio_
  // seconds for a stream). SpeechSession sets both for each sentence of a stream, so that the
  // bound covers the whole stream: whether the stream's audio is collected into one file, and
  // the audio its earlier sentences made. Unset whole_file: a whole file unless `streaming`.
  std::optional<bool> whole_file;
  double audio_seconds_before = 0;
  // Set by SpeechSession: a sentence of a stream, whose text counts against the stream's own
  // limit (checked there, limits.max_stream_input_chars), not against max_input_chars.
  bool stream_sentence = false;
  // Models the caller may use (from its API key), by model id or by the name it asked for;
  // empty = every model. Another model is refused with PermissionDenied (403).
  std::vector<std::string> allowed_models;
  core::RequestContext context;
  // An inline voice prompt (vLLM-Omni's ref_audio / ref_text), for TtsService::
  // SynthesizeWithPrompt: a recording cloned for this request only, never stored, spoken with
  // instead of `voice` (which is then ignored). Empty prompt_audio = none.
  std::string prompt_audio;  // the recording as sent (WAV, FLAC, Ogg, MP3)
  std::string prompt_text;   // what it says; empty: cross-lingual unless voice_mode says
  // Set by TtsService when `voice` names a cloned voice (its id, or its name within the model):
  // the stored profile, for engines that synthesize with profiles (CosyVoice, issue 12 part 2).
  std::string cloned_voice_id;
  std::shared_ptr<const engine::VoiceProfile> voice_profile;
  // Set by TtsService with voice_profile: the mode the engine speaks the voice in.
  std::optional<engine::VoiceMode> resolved_voice_mode;
  // "seed" (ElevenLabs, OpenAI-style REST, gRPC, WebSocket): the sampling seed of engines that
  // sample (CosyVoice); unset = the engine's fixed default. Either way the same request gives
  // the same audio; engines that do not sample ignore it.
  std::optional<uint64_t> seed;
  CachePolicy cache_policy = CachePolicy::kUse;
  // The versions of what shaped `text` besides the text itself (SSML processing, pronunciation
  // dictionaries: issue 26 parts 1-2), for the response cache's key; empty = none.
  std::string markup_version;
  // Pronunciation dictionaries to speak with, in precedence order (at most
  // kMaxDictionaryLocators); the model's own lexicons (models[].lexicons) come after them.
  std::vector<DictionaryLocator> dictionaries;
  // Text normalization (docs/text-normalization.md) asked for by this request: unset = the
  // server's text.normalize for the engines that read characters (Piper, Kokoro, CosyVoice);
  // true = on for every engine (espeak-ng too); false = off. ElevenLabs' apply_text_normalization.
  std::optional<bool> normalize_text;
};

// The word timings of one segment (sentence) of a request, in the request's audio: the service
// shifts each segment's words by the audio of the segments before it (docs/timings.md).
struct SegmentTimings {
  size_t segment = 0;  // index among the request's segments
  std::string text;    // the segment's text as the engine spoke it; words' offsets index it
  // kExact or kEstimated from the engine; kEstimated by the service (characters spread over the
  // segment's audio) for an engine that reports none.
  audio::TimingsKind kind = audio::TimingsKind::kNone;
  double start_s = 0;  // the segment's audio within the request's
  double end_s = 0;
  std::vector<audio::WordTiming> words;  // times in the request's audio, inside [start_s, end_s]
};

// Figures about a finished request, for logs, metrics and protocol trailers (SSE usage).
struct SynthesisSummary {
  std::string model;
  std::string voice;
  size_t input_chars = 0;
  int segments = 0;
  int output_sample_rate = 0;
  double audio_seconds = 0;
  double queue_wait_seconds = 0;  // summed over segments
  std::optional<double> time_to_first_audio_seconds;
  double total_seconds = 0;

  // Adds one sentence of a stream made of several requests (WebSocket, gRPC bidi): sums the
  // counts, keeps the first sentence's model and voice. Timings are the stream's own to set.
  void AddSentence(const SynthesisSummary& sentence) {
    if (model.empty()) {
      model = sentence.model;
      voice = sentence.voice;
    }
    input_chars += sentence.input_chars;
    audio_seconds += sentence.audio_seconds;
    segments += sentence.segments;
    queue_wait_seconds += sentence.queue_wait_seconds;
  }

  // What a request's log line says of its synthesis, on every transport.
  void AddToLog(core::RequestLogEntry& entry) const {
    entry.model = model;
    entry.voice = voice;
    entry.chars = input_chars;
    entry.audio_seconds = audio_seconds;
    entry.queue_wait_seconds = queue_wait_seconds;
    entry.time_to_first_audio_seconds = time_to_first_audio_seconds;
  }
};

// One sentence of a stream (SpeechSession) has been delivered.
struct SentenceReport {
  int index = 0;     // 0, 1, 2, ... in the order sentences were started (skipped ones have none)
  std::string text;  // as synthesized (trimmed)
  size_t audio_bytes = 0;
  int sample_rate = 0;
  SynthesisSummary summary;             // timings from when the sentence was complete
  double start_seconds = 0;             // where this sentence's audio begins in the stream's
  std::vector<SegmentTimings> timings;  // its segments' words, in the stream's audio
};

// Receives one request's output; implemented by the transport. The service holds it until
// OnComplete. Calls are serialized (never concurrent) and made on service threads, never on the
// thread that called Synthesize.
class SynthesisSink {
 public:
  virtual ~SynthesisSink() = default;
  // Once, just before the first OnAudio: what the bytes will be (the rate depends on the voice,
  // which is only known once the service has resolved it).
  virtual void OnStart(int output_sample_rate) = 0;
  // Once, just before OnStart: what the response cache did (sinks that report it in a header
  // keep it; the others ignore it).
  virtual void OnCacheResult(CacheResult result) { (void)result; }
  // Encoded bytes, in order. Non-streaming requests get the whole file in one call.
  virtual void OnAudio(std::string bytes) = 0;
  // The words of one segment, once per segment in order, after the OnAudio that carried the
  // segment's last audio when streaming; all of them before OnStart for a whole file. Sinks
  // that do not report timings ignore it.
  virtual void OnTimings(const SegmentTimings& timings) { (void)timings; }
  // Exactly once, last. An error after audio was delivered means the stream broke off.
  virtual void OnComplete(const absl::Status& status, const SynthesisSummary& summary) = 0;
  // Bytes delivered but not yet written to the client (safe cross thread). Above the service's
  // stream_buffer_bytes the request pauses until the transport calls SynthesisJob::Resume().
  virtual size_t BufferedBytes() const = 0;
};

}  // namespace voxserve::service
