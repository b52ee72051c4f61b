#include "service/openai_voices.h"

#include <algorithm>
#include <optional>

namespace voxserve::service {
namespace {

struct OpenAiVoice {
  std::string_view name;
  char gender;  // 'f', 'm', or 0 for either (as the voices are commonly described)
};

// OpenAI's order (its API reference lists them so), with the voices' usual gender.
constexpr OpenAiVoice kOpenAiVoices[] = {
    {"alloy", 0},   {"ash", 'm'},   {"ballad", 'm'}, {"coral", 'f'}, {"echo", 'm'},
    {"fable", 'm'}, {"onyx", 'm'},  {"nova", 'f'},   {"sage", 'f'},  {"shimmer", 'f'},
    {"verse", 'm'}, {"marin", 'f'}, {"cedar", 'm'}};

// Kokoro's ids say language and gender first: "af_heart" (American female), "bm_lewis".
std::optional<char> GenderOf(std::string_view id) {
  if (id.size() > 3 && id[2] == '_' && (id[1] == 'f' || id[1] == 'm')) return id[1];
  return std::nullopt;
}

bool NamedFor(std::string_view id, std::string_view name) {
  return id == name ||
         (id.size() > name.size() && id.ends_with(name) && id[id.size() - name.size() - 1] == '_');
}

}  // namespace

std::map<std::string, std::string, std::less<>> OpenAiVoicesFor(
    const std::vector<engine::VoiceInfo>& voices, std::string_view default_voice) {
  std::map<std::string, std::string, std::less<>> mapping;
  if (voices.empty()) return mapping;
  for (const OpenAiVoice& openai : kOpenAiVoices) {
    for (const engine::VoiceInfo& voice : voices) {
      if (NamedFor(voice.id, openai.name)) {
        mapping.emplace(openai.name, voice.id);
        break;
      }
    }
  }
  const auto default_info = std::find_if(
      voices.begin(), voices.end(), [&](const auto& voice) { return voice.id == default_voice; });
  if (!mapping.contains("alloy") && default_info != voices.end()) {
    mapping.emplace("alloy", default_info->id);
  }
  // The voices to spread the rest over: the default voice's language when it has any.
  std::vector<const engine::VoiceInfo*> pool;
  for (const engine::VoiceInfo& voice : voices) {
    if (default_info == voices.end() || voice.language == default_info->language) {
      pool.push_back(&voice);
    }
  }
  std::map<std::string_view, int> uses;  // how many names each voice of the pool serves
  for (const auto& [name, id] : mapping) ++uses[id];
  for (const OpenAiVoice& openai : kOpenAiVoices) {
    if (mapping.contains(openai.name)) continue;
    // The least used voice of the name's gender (unknown genders fit), else the least used;
    // the first in the list among equals.
    const engine::VoiceInfo* chosen = nullptr;
    for (bool by_gender : {true, false}) {
      for (const engine::VoiceInfo* voice : pool) {
        const std::optional<char> gender = GenderOf(voice->id);
        if (by_gender && openai.gender != 0 && gender && *gender != openai.gender) continue;
        if (chosen == nullptr || uses[voice->id] < uses[chosen->id]) chosen = voice;
      }
      if (chosen != nullptr) break;
    }
    mapping.emplace(openai.name, chosen->id);
    ++uses[chosen->id];
  }
  return mapping;
}

}  // namespace voxserve::service
