// The interface every synthesis backend implements (espeak-ng, ONNX Runtime, ...): the
// whole-segment contract. Engines know nothing of HTTP, audio formats or clients: text and a
// voice in, PCM out. Streaming engines (chunks per segment, a step loop over many active
// segments) extend it: engine/streaming_engine.h; docs/engines.md describes both kinds.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "audio/pcm.h"
#include "engine/voice_cloning.h"

namespace voxserve::engine {

class StreamingEngine;

// Word timings (audio/pcm.h): an engine may set PcmAudio::words and ::timings on its result,
// offsets in SegmentInput::text and seconds in that result's audio, with speed already applied
// (the times are those of the audio returned). docs/timings.md says what each engine reports.
using WordTiming = audio::WordTiming;
using TimingsKind = audio::TimingsKind;

struct VoiceInfo {
  std::string id;           // what clients put in "voice"; unique within the model
  std::string language;     // e.g. "en-us", "cmn"; picks sentence rules and is listed to clients
  int sample_rate = 0;      // of the PCM this voice produces
  std::string description;  // human-readable, e.g. "English (America)"
};

struct ModelInfo {
  std::string id;      // model id clients name, e.g. "espeak"
  std::string engine;  // backend name, e.g. "espeak"
  std::vector<VoiceInfo> voices;
  std::string default_voice;
  // Largest batch Synthesize accepts; 1 = no batching.
  int max_batch_size = 1;
  // True when every segment of a batch must use the same voice.
  bool batch_requires_same_voice = true;
  // True when calls from several threads run at once, each on a core of its own (espeak-ng: a
  // speaker process per call), so `instances: auto` in-process means one instance per core.
  // False: the engine spreads one call over the cores itself (ONNX Runtime), or serializes.
  bool parallel_calls = false;
  // SSML support beyond text and speed (docs/ssml.md): the engine speaks SegmentInput::phonemes
  // (IPA), and follows SegmentInput::pitch. Engines without them are never sent either.
  bool speaks_ipa = false;
  bool controls_pitch = false;
  // Cloned voices this engine speaks with (SegmentInput::voice_profile): profiles of this family
  // (VoiceProfile::family), at this rate and listed under this language. Empty family: none.
  struct ClonedVoices {
    std::string family;
    int sample_rate = 0;
    std::string language;
  } cloned_voices;
};

// How an engine that clones voices uses a cloned voice's prompt recording (CosyVoice2's
// inference modes, upstream cosyvoice/cli/frontend.py:168-213; docs/cosyvoice-generation.md,
// "Modes"). The flow (timbre) takes the prompt in every mode; what differs is the LLM's input.
enum class VoiceMode {
  kZeroShot,      // the prompt's transcript and speech tokens lead the LLM's input
  kCrossLingual,  // neither: the text may be in another language than the prompt
  kInstruct,      // the instructions (+ <|endofprompt|>) stand in the transcript's place; no
                  // prompt speech tokens
};

// One unit of synthesis, usually a sentence. Views stay valid for the duration of the call.
struct SegmentInput {
  std::string_view text;      // valid UTF-8, not empty
  std::string_view voice_id;  // a voice the engine accepts (see AcceptsVoice)
  double speed = 1.0;         // 0.25 .. 4.0; 1.0 is the voice's natural rate
  // Set by the service when voice_id names a cloned voice (then voice_id is its stored id), for
  // engines whose info().cloned_voices.family is the profile's; null otherwise. Shared,
  // immutable: an engine that keeps it past the call keeps the pointer.
  std::shared_ptr<const VoiceProfile> voice_profile;
  // The request's sampling seed, for engines that sample (CosyVoice); unset = their default.
  std::optional<uint64_t> seed;
  // With voice_profile: the mode the service resolved (unset = the engine's rule for the
  // profile alone). Engines without cloned voices ignore both fields.
  std::optional<VoiceMode> voice_mode;
  // Style instructions (OpenAI's "instructions"); read in VoiceMode::kInstruct, ignored by
  // engines that cannot follow them (espeak, Piper, Kokoro: docs say so).
  std::string_view instructions;
  // IPA to speak instead of `text` (SSML <phoneme>, a lexicon's IPA entry), for engines whose
  // info().speaks_ipa; `text` is then the graphemes, for word timings. Empty: speak `text`.
  std::string_view phonemes;
  // Base pitch factor (SSML <prosody pitch>), for engines whose info().controls_pitch; 1 = the
  // voice's own.
  double pitch = 1.0;
};

// A loaded model. Threading: Synthesize and Warmup may be called concurrently from the
// scheduler's instance workers (one call per worker at a time); an engine whose library keeps
// global state serializes internally and says so. Owned by the model registry; shared with the
// schedulers that drive it.
class Engine {
 public:
  virtual ~Engine() = default;

  virtual const ModelInfo& info() const = 0;

  // True for listed voices and for other ids the engine understands (e.g. espeak "en-us+f3").
  virtual bool AcceptsVoice(std::string_view voice_id) const = 0;

  // Runs a short synthesis so the first real request does not pay one-time costs.
  virtual absl::Status Warmup(std::span<const std::string> texts) = 0;

  // One result per input, in order; batch.size() <= info().max_batch_size. A failure of one
  // segment does not fail the others.
  virtual std::vector<absl::StatusOr<audio::PcmAudio>> Synthesize(
      std::span<const SegmentInput> batch) = 0;

  // The engine's voice cloning frontend, or null when it clones no voices. Owned by the engine.
  virtual VoiceCloner* voice_cloner() { return nullptr; }

  // This engine as a streaming engine (streaming_engine.h), or null for a whole-segment engine:
  // the scheduler then runs its step loop instead of its batcher. Owned by the engine.
  virtual StreamingEngine* AsStreaming() { return nullptr; }
};

}  // namespace voxserve::engine
