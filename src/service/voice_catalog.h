// Turns what a client wrote in "model" and "voice" into a model and one of its voices: model ids,
// OpenAI's model names, voice ids, configured aliases, OpenAI's voice names, the built-in names
// (BuiltInVoiceAliasesForEspeak) and "default" (the model's default voice), in that order.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "service/model_host.h"
#include "service/service_config.h"

namespace voxserve::service {

struct ResolvedVoice {
  ModelHost* model = nullptr;
  std::string voice_id;  // as the engine knows it
  std::string language;
  int sample_rate = 0;  // of the PCM the engine produces for this voice
};

struct VoiceListing {
  std::string id;
  std::string model;
  std::string engine;
  std::string language;
  int sample_rate = 0;
  std::string description;
  std::string alias_of;  // the voice id an alias or OpenAI name stands for; empty for engine voices
  bool cloned = false;   // a voice registered through the voice API (VoiceRegistry); then
  std::string name;      // the name its owner gave it
};

// Immutable after construction; safe cross thread. The hosts are owned by TtsService.
class VoiceCatalog {
 public:
  VoiceCatalog(const ServiceConfig& config, std::vector<ModelHost*> models, ModelHost* default_model);

  // NotFound (param "model" or "voice") for unknown names, Unavailable while the model loads.
  absl::StatusOr<ResolvedVoice> Resolve(std::string_view model, std::string_view voice) const;
  // Voices of ready models, then aliases, OpenAI names, built-in names and "default" that
  // resolve to one of them.
  std::vector<VoiceListing> List() const;
  // The model a filter's model name stands for: its id, or the default model's for OpenAI's
  // model names and empty. Unknown names come back as they are (they match no voice).
  std::string ModelIdFor(std::string_view name) const;

  // tts-1, tts-1-hd, gpt-4o-mini-tts and dated variants: all mean the default model.
  static bool IsOpenAiModelName(std::string_view name);

  // The model a request's "model" names (empty and OpenAI's names: the default); NotFound
  // (param "model") otherwise. The model may still be loading.
  absl::StatusOr<ModelHost*> FindModel(std::string_view name) const;

 private:
  // The engine voice a name stands for within `model`, or empty when it stands for none.
  std::string Translate(const ModelHost& model, std::string_view voice) const;

  std::vector<ModelHost*> models_;
  ModelHost* default_model_;
  std::map<std::string, VoiceAlias, std::less<>> aliases_;
  std::map<std::string, std::string, std::less<>> openai_voices_;
  std::map<std::string, std::string, std::less<>> builtin_names_;  // minus configured aliases
};

}  // namespace voxserve::service
