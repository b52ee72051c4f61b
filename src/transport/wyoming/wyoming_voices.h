// voxserve's voices as Wyoming sees them (wyoming/info.py TtsVoice): the `info` answer to
// `describe`, and the choice of a voice for a SynthesizeVoice {name, speaker, language}, as
// wyoming-piper makes it (a name from info, a speaker of it, else the first voice of a language).
//
// Names: a voice's id, or "<model>/<id>" when another model has a voice of the same id. A Piper
// file with several speakers (voices "<model>:<speaker>") is one Wyoming voice named after the
// model, with its speakers listed. Aliases are not listed (they are not voices) but a name that
// is none of the listed ones is handed to the service as it is, so aliases, OpenAI's names and
// espeak-ng variants ("en-us+f3") still work.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "service/voice_catalog.h"
#include "transport/wyoming/wyoming_events.h"

namespace voxserve::transport::wyoming {

struct WyomingVoice {
  std::string name;   // unique among the listed voices
  std::string model;  // the model id
  std::string voice;  // the voice id for the service; empty: the model's default voice
  std::string engine;
  std::string language;  // voxserve's tag, e.g. "en-us"
  std::string description;
  std::vector<std::string> speakers;  // a multi-speaker Piper file's; voice "<model>:<speaker>"
};

// From TtsService::ListVoices (aliases are skipped), in its order.
std::vector<WyomingVoice> WyomingVoices(const std::vector<service::VoiceListing>& listings);

// "en-us" → "en_US" (wyoming-piper's and Piper's spelling); tags of another shape as they are.
std::string WyomingLanguage(std::string_view language);

// The `info` event's data: one tts program "voxserve" of `version` with every voice
// (supports_synthesize_streaming: true); the other program lists empty.
nlohmann::json InfoData(const std::vector<WyomingVoice>& voices, std::string_view version);

// What to ask the service for: a model (empty: the default model) and a voice (empty: the
// model's default voice).
struct VoiceChoice {
  std::string model;
  std::string voice;
};

// By name (a listed one, else handed on as it is), then its speaker; else by language (the
// same tag, then a narrower one, then the same primary language; the first such voice as listed,
// models in their configured order); else the default. NotFound (code voice_not_found /
// speaker_not_found) for a language no voice speaks or a speaker the voice does not have.
absl::StatusOr<VoiceChoice> ChooseVoice(const std::vector<WyomingVoice>& voices,
                                        const VoiceRequest& request);

}  // namespace voxserve::transport::wyoming
