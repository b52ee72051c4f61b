#include "transport/wyoming/wyoming_voices.h"

#include <cctype>
#include <map>

#include "core/error.h"
#include "service/voice_filter.h"

namespace voxserve::transport::wyoming {
namespace {

using nlohmann::json;

struct Attribution {
  const char* name;
  const char* url;
};

// Who made each engine's voices (wyoming/info.py Attribution: name, url).
Attribution AttributionOf(std::string_view engine) {
  if (engine == "espeak") return {"eSpeak NG", "https://github.com/espeak-ng/espeak-ng"};
  if (engine == "piper") return {"Piper", "https://github.com/rhasspy/piper"};
  if (engine == "kokoro") return {"Kokoro", "https://huggingface.co/hexgrad/Kokoro-82M"};
  if (engine == "cosyvoice") return {"CosyVoice", "https://github.com/FunAudioLLM/CosyVoice"};
  return {"voxserve", ""};
}

std::string Normalized(std::string_view tag) {
  std::string out;
  for (char c : tag) {
    out += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string PrimaryLanguage(std::string_view tag) {
  std::string normalized = Normalized(tag);
  return normalized.substr(0, normalized.find('-'));
}

absl::Status VoiceNotFound(const std::string& message) {
  return core::NotFound(message, "voice", "voice_not_found");
}

}  // namespace

std::string WyomingLanguage(std::string_view language) {
  const size_t dash = language.find_first_of("-_");
  const bool shaped = dash >= 2 && dash <= 3 && language.size() == dash + 3;
  if (!shaped) return std::string(language);
  std::string out;
  for (size_t i = 0; i < dash; ++i) {
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(language[i])));
  }
  out += '_';
  for (size_t i = dash + 1; i < language.size(); ++i) {
    if (!std::isalpha(static_cast<unsigned char>(language[i]))) return std::string(language);
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(language[i])));
  }
  return out;
}

std::vector<WyomingVoice> WyomingVoices(const std::vector<service::VoiceListing>& listings) {
  std::vector<WyomingVoice> voices;
  std::map<std::string, size_t> speaker_groups;  // model id → index in voices
  std::map<std::string, int> id_count;
  for (const service::VoiceListing& listing : listings) {
    if (listing.alias_of.empty()) ++id_count[listing.id];
  }
  for (const service::VoiceListing& listing : listings) {
    if (!listing.alias_of.empty()) continue;
    const std::string prefix = listing.model + ":";
    if (!listing.cloned && listing.id.size() > prefix.size() && listing.id.starts_with(prefix)) {
      const std::string speaker = listing.id.substr(prefix.size());
      auto [group, added] = speaker_groups.try_emplace(listing.model, voices.size());
      if (added) {
        WyomingVoice voice;
        voice.name = listing.model;
        voice.model = listing.model;
        voice.engine = listing.engine;
        voice.language = listing.language;
        voice.description = listing.model;
        voices.push_back(std::move(voice));
      }
      voices[group->second].speakers.push_back(speaker);
      continue;
    }
    WyomingVoice voice;
    voice.name = id_count[listing.id] > 1 ? listing.model + "/" + listing.id : listing.id;
    voice.model = listing.model;
    voice.voice = listing.id;
    voice.engine = listing.engine;
    voice.language = listing.language;
    voice.description = listing.description.empty() ? listing.id : listing.description;
    voices.push_back(std::move(voice));
  }
  return voices;
}

json InfoData(const std::vector<WyomingVoice>& voices, std::string_view version) {
  json listed = json::array();
  for (const WyomingVoice& voice : voices) {
    const Attribution attribution = AttributionOf(voice.engine);
    json entry = {{"name", voice.name},
                  {"attribution", {{"name", attribution.name}, {"url", attribution.url}}},
                  {"installed", true},
                  {"description", voice.description},
                  // Voices carry no version of their own; the program's is voxserve's.
                  {"version", nullptr},
                  {"languages", json::array({WyomingLanguage(voice.language)})}};
    if (!voice.speakers.empty()) {
      json speakers = json::array();
      for (const std::string& speaker : voice.speakers) speakers.push_back({{"name", speaker}});
      entry["speakers"] = std::move(speakers);
    }
    listed.push_back(std::move(entry));
  }
  json program = {{"name", "voxserve"},
                  {"attribution", {{"name", "voxserve"}, {"url", ""}}},
                  {"installed", true},
                  {"description", "voxserve text to speech"},
                  {"version", std::string(version)},
                  {"voices", std::move(listed)},
                  {"supports_synthesize_streaming", true}};
  return {{"asr", json::array()},    {"tts", json::array({std::move(program)})},
          {"handle", json::array()}, {"intent", json::array()},
          {"wake", json::array()},   {"mic", json::array()},
          {"snd", json::array()}};
}

absl::StatusOr<VoiceChoice> ChooseVoice(const std::vector<WyomingVoice>& voices,
                                        const VoiceRequest& request) {
  if (request.name) {
    for (const WyomingVoice& voice : voices) {
      if (voice.name != *request.name) continue;
      if (!request.speaker) return VoiceChoice{voice.model, voice.voice};
      for (const std::string& speaker : voice.speakers) {
        if (speaker == *request.speaker)
          return VoiceChoice{voice.model, voice.model + ":" + speaker};
      }
      return core::NotFound("voice '" + voice.name + "' has no speaker '" + *request.speaker + "'",
                            "voice", "speaker_not_found");
    }
    // Not a listed name: an alias, an OpenAI name, an espeak-ng variant, or unknown (the
    // service says which).
    if (request.speaker) {
      return core::NotFound("voice '" + *request.name + "' has no speakers", "voice",
                            "speaker_not_found");
    }
    return VoiceChoice{"", *request.name};
  }
  if (request.language) {
    const std::string wanted = Normalized(*request.language);
    const std::string primary = PrimaryLanguage(wanted);
    auto first = [&voices](auto&& matches) -> const WyomingVoice* {
      for (const WyomingVoice& voice : voices) {
        if (matches(voice)) return &voice;
      }
      return nullptr;
    };
    const WyomingVoice* found =
        first([&](const WyomingVoice& v) { return Normalized(v.language) == wanted; });
    if (found == nullptr) {
      found = first(
          [&](const WyomingVoice& v) { return service::LanguageMatches(v.language, wanted); });
    }
    if (found == nullptr && !primary.empty()) {
      found = first([&](const WyomingVoice& v) { return PrimaryLanguage(v.language) == primary; });
    }
    if (found == nullptr)
      return VoiceNotFound("no voice speaks language '" + *request.language + "'");
    return VoiceChoice{found->model, found->voice};
  }
  return VoiceChoice{};
}

}  // namespace voxserve::transport::wyoming
