#include "service/voice_catalog.h"

#include <algorithm>

#include "core/error.h"
#include "service/openai_voices.h"

namespace voxserve::service {
namespace {

// What clients send for "whatever this model speaks by default".
constexpr std::string_view kDefaultVoiceName = "default";

const engine::VoiceInfo* FindVoiceInfo(const engine::Engine& engine, std::string_view voice_id) {
  // "en-us+f3" is a variant of the listed "en-us": it shares its language and rate.
  std::string_view base = voice_id.substr(0, voice_id.find('+'));
  for (const engine::VoiceInfo& info : engine.info().voices) {
    if (info.id == voice_id || info.id == base) return &info;
  }
  return nullptr;
}

}  // namespace

VoiceCatalog::VoiceCatalog(const ServiceConfig& config, std::vector<ModelHost*> models,
                           ModelHost* default_model)
    : models_(std::move(models)), default_model_(default_model) {
  aliases_.insert(config.voice_aliases.begin(), config.voice_aliases.end());
  openai_voices_.insert(config.openai_voices.begin(), config.openai_voices.end());
  for (auto& [name, voice_id] : BuiltInVoiceAliasesForEspeak()) {
    if (!aliases_.contains(name) && !openai_voices_.contains(name)) {
      builtin_names_.emplace(name, voice_id);
    }
  }
}

std::string VoiceCatalog::ModelIdFor(std::string_view name) const {
  if (name.empty() || IsOpenAiModelName(name)) return default_model_->id();
  return std::string(name);
}

bool VoiceCatalog::IsOpenAiModelName(std::string_view name) {
  return name == "tts-1" || name == "tts-1-hd" || name == "gpt-4o-mini-tts" ||
         name.starts_with("gpt-4o-mini-tts-") || name.starts_with("tts-1-");
}

absl::StatusOr<ModelHost*> VoiceCatalog::FindModel(std::string_view name) const {
  if (name.empty() || IsOpenAiModelName(name)) return default_model_;
  for (ModelHost* model : models_) {
    if (model->id() == name) return model;
  }
  std::string known;
  for (ModelHost* model : models_) known += (known.empty() ? "" : ", ") + model->id();
  return core::NotFound("model " + core::Quoted(name) + " does not exist; available: " + known +
                            " (or tts-1, tts-1-hd, gpt-4o-mini-tts for the default)",
                        "model", "model_not_found");
}

std::string VoiceCatalog::Translate(const ModelHost& model, std::string_view voice) const {
  if (model.engine().AcceptsVoice(voice)) return std::string(voice);
  if (&model == default_model_) {
    if (auto it = openai_voices_.find(voice); it != openai_voices_.end()) {
      if (model.engine().AcceptsVoice(it->second)) return it->second;
      // The built-in targets are espeak-ng's: another default model gets voices of its own.
      const engine::ModelInfo& info = model.engine().info();
      auto automatic = OpenAiVoicesFor(info.voices, info.default_voice);
      if (auto pick = automatic.find(voice); pick != automatic.end()) return pick->second;
    }
  }
  if (auto it = builtin_names_.find(voice); it != builtin_names_.end()) {
    if (model.engine().AcceptsVoice(it->second)) return it->second;
  }
  if (voice == kDefaultVoiceName) return model.engine().info().default_voice;
  return {};
}

absl::StatusOr<ResolvedVoice> VoiceCatalog::Resolve(std::string_view model_name,
                                                    std::string_view voice) const {
  auto model = FindModel(model_name);
  if (!model.ok()) return model.status();
  ModelHost* host = *model;
  std::string_view voice_name = voice;
  const bool generic_model = model_name.empty() || IsOpenAiModelName(model_name);
  // An alias may point into another model; it wins when the client named no specific model.
  if (auto alias = aliases_.find(voice); alias != aliases_.end()) {
    if (!alias->second.model.empty() && generic_model) {
      auto aliased = FindModel(alias->second.model);
      if (!aliased.ok()) return aliased.status();
      host = *aliased;
    }
    voice_name = alias->second.voice;
  } else if (generic_model && !voice_name.empty()) {
    // Without a specific model, a voice of any model will do ({"model": "tts-1", "voice":
    // "en_US-lessac-medium"}): the default model's voices first, then the others' in order.
    bool default_has_it =
        host->state() == ModelState::kReady && !Translate(*host, voice_name).empty();
    if (!default_has_it) {
      for (ModelHost* other : models_) {
        if (other->state() == ModelState::kReady && voice_name != kDefaultVoiceName &&
            !Translate(*other, voice_name).empty()) {
          host = other;
          break;
        }
      }
    }
  }
  if (host->state() != ModelState::kReady) {
    return core::WithModel(core::MakeError(absl::StatusCode::kUnavailable,
                                           "model '" + host->id() + "' is " +
                                               std::string(ModelStateName(host->state())),
                                           "model", "model_not_ready"),
                           host->id());
  }
  if (voice_name.empty()) voice_name = host->engine().info().default_voice;
  std::string voice_id = Translate(*host, voice_name);
  if (voice_id.empty()) {
    // Tagged so the rejection is counted against the model that lacks the voice.
    return core::WithModel(
        core::NotFound("voice " + core::Quoted(voice) + " does not exist for model '" + host->id() +
                           "'; GET /v1/voices lists the voices",
                       "voice", "voice_not_found"),
        host->id());
  }
  const engine::VoiceInfo* info = FindVoiceInfo(host->engine(), voice_id);
  if (info == nullptr) return core::Internal("voice '" + voice_id + "' has no voice information");
  return ResolvedVoice{host, voice_id, info->language, info->sample_rate};
}

std::vector<VoiceListing> VoiceCatalog::List() const {
  std::vector<VoiceListing> listing;
  auto listing_for = [&](const ModelHost& model, const std::string& id,
                         const std::string& voice_id) -> std::optional<VoiceListing> {
    const engine::VoiceInfo* info = FindVoiceInfo(model.engine(), voice_id);
    if (info == nullptr) return std::nullopt;
    return VoiceListing{id,
                        model.id(),
                        model.engine().info().engine,
                        info->language,
                        info->sample_rate,
                        info->description,
                        id == voice_id ? "" : voice_id};
  };
  for (ModelHost* model : models_) {
    if (model->state() != ModelState::kReady) continue;
    for (const engine::VoiceInfo& info : model->engine().info().voices) {
      listing.push_back({info.id, model->id(), model->engine().info().engine, info.language,
                         info.sample_rate, info.description, ""});
    }
  }
  for (const auto& [name, alias] : aliases_) {
    auto host = FindModel(alias.model);
    if (!host.ok() || (*host)->state() != ModelState::kReady) continue;
    std::string voice_id = Translate(**host, alias.voice);
    if (auto entry = listing_for(**host, name, voice_id)) listing.push_back(*entry);
  }
  if (default_model_->state() == ModelState::kReady) {
    for (const auto& [name, unused] : openai_voices_) {
      if (aliases_.contains(name) || default_model_->engine().AcceptsVoice(name)) continue;
      const std::string voice_id = Translate(*default_model_, name);
      if (voice_id.empty()) continue;
      if (auto entry = listing_for(*default_model_, name, voice_id)) listing.push_back(*entry);
    }
  }
  for (ModelHost* model : models_) {
    if (model->state() != ModelState::kReady) continue;
    for (const auto& [name, voice_id] : builtin_names_) {
      // A name the engine has as a voice of its own is listed (and resolved) as that voice.
      if (model->engine().AcceptsVoice(name) || !model->engine().AcceptsVoice(voice_id)) continue;
      if (auto entry = listing_for(*model, name, voice_id)) listing.push_back(*entry);
    }
    const std::string name(kDefaultVoiceName);
    if (!aliases_.contains(name) && !model->engine().AcceptsVoice(name)) {
      if (auto entry = listing_for(*model, name, model->engine().info().default_voice)) {
        listing.push_back(*entry);
      }
    }
  }
  return listing;
}

}  // namespace voxserve::service
