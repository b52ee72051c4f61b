#include "service/service_config.h"

#include <set>

#include "core/error.h"

namespace voxserve::service {

absl::Status ServiceConfig::Validate() const {
  if (models.empty()) return core::InvalidArgument("models: at least one model must be configured");
  std::set<std::string> ids;
  for (const ModelConfig& model : models) {
    const std::string& id = model.engine.model_id;
    if (id.empty()) return core::InvalidArgument("models[].id must not be empty");
    if (!ids.insert(id).second) return core::InvalidArgument("models: duplicate id '" + id + "'");
    if (absl::Status status = model.scheduling.Validate(id); !status.ok()) return status;
  }
  if (!default_model.empty() && !ids.contains(default_model)) {
    return core::InvalidArgument("default_model '" + default_model + "' is not among the models");
  }
  if (absl::Status status = voices.Validate(); !status.ok()) return status;
  if (absl::Status status = cache.Validate(); !status.ok()) return status;
  if (absl::Status status = dictionaries.Validate(); !status.ok()) return status;
  if (dictionaries.backend == "postgres" && voices.postgres_dsn.empty() &&
      voices.postgres_dsn_env.empty() && voices.postgres_dsn_file.empty()) {
    return core::InvalidArgument(
        "dictionaries.backend is postgres but none of voices.postgres.dsn, voices.postgres.dsn_env "
        "or voices.postgres.dsn_file is set (dictionaries share the voices' database)");
  }
  for (const auto& [name, alias] : voice_aliases) {
    if (alias.voice.empty()) {
      return core::InvalidArgument("voice_aliases." + name + ": the target voice is empty");
    }
    if (!alias.model.empty() && !ids.contains(alias.model)) {
      return core::InvalidArgument("voice_aliases." + name + ": model '" + alias.model +
                                   "' is not among the models");
    }
  }
  const std::map<std::string, std::string> openai_names = DefaultOpenAiVoicesForEspeak();
  for (const auto& [name, voice] : openai_voices) {
    if (!openai_names.contains(name)) {
      std::string known;
      for (const auto& [known_name, unused] : openai_names) {
        known += (known.empty() ? "" : ", ") + known_name;
      }
      return core::InvalidArgument("openai_voices." + name + ": not one of OpenAI's voice names (" +
                                   known + "); a name of your own belongs in voice_aliases");
    }
    if (voice.empty()) {
      return core::InvalidArgument("openai_voices." + name + ": the target voice is empty");
    }
  }
  if (limits.max_input_chars < 1 || limits.max_input_chars > 1'000'000) {
    return core::InvalidArgument("limits.max_input_chars must be within 1..1000000");
  }
  if (limits.max_stream_input_chars < 1 || limits.max_stream_input_chars > 100'000'000) {
    return core::InvalidArgument("limits.max_stream_input_chars must be within 1..100000000");
  }
  if (max_audio_seconds < 1 || max_audio_seconds > 86'400) {
    return core::InvalidArgument("limits.max_audio_seconds must be within 1..86400");
  }
  if (max_stream_audio_seconds < 1 || max_stream_audio_seconds > 604'800) {
    return core::InvalidArgument("limits.max_stream_audio_seconds must be within 1..604800");
  }
  if (default_timeout_ms < 1 || default_timeout_ms > max_timeout_ms) {
    return core::InvalidArgument("limits.request_timeout_ms must be within 1..max_request_timeout_ms");
  }
  if (max_segment_chars < 16) return core::InvalidArgument("limits.max_segment_chars must be >= 16");
  if (pipeline_depth < 1 || pipeline_depth > 64) {
    return core::InvalidArgument("pipeline_depth must be within 1..64");
  }
  return absl::OkStatus();
}

std::map<std::string, std::string> DefaultOpenAiVoicesForEspeak() {
  // Distinct espeak-ng voice variants (pitch, formants, accent) so each name sounds different.
  return {
      {"alloy", "en-us+f2"},   {"ash", "en-us+m1"},     {"ballad", "en-gb+m2"},
      {"cedar", "en-us+m4"},   {"coral", "en-us+f3"},   {"echo", "en-us+m3"},
      {"fable", "en-gb+f2"},   {"marin", "en-us+f4"},   {"nova", "en-us+f1"},
      {"onyx", "en-us+m7"},    {"sage", "en-gb+f3"},    {"shimmer", "en-us+f5"},
      {"verse", "en-gb+m5"},
  };
}

std::map<std::string, std::string> BuiltInVoiceAliasesForEspeak() {
  // Language names as locales write them ('_'), and the gendered names of common client SDKs and
  // sample documents. The variants are espeak-ng's voices/!v: f3 and m3 are its clearest.
  return {
      {"en", "en-us"},           {"en_us", "en-us"},      {"en_gb", "en-gb"},
      {"en_female", "en-us+f3"}, {"en_male", "en-us+m3"}, {"female", "en-us+f3"},
      {"male", "en-us+m3"},      {"zh", "cmn"},           {"zh_cn", "cmn"},
      {"zh_tw", "cmn"},          {"zh_hk", "yue"},        {"zh_female", "cmn+f3"},
      {"zh_male", "cmn+m3"},
  };
}

}  // namespace voxserve::service
