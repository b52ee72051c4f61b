#include "engine/onnx/piper_config.h"

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "core/read_file.h"
#include "engine/onnx/code_points.h"
#include "nlohmann/json.hpp"

namespace voxserve::engine::onnx {
namespace {

using Json = nlohmann::json;

// "en_US" → "en-us": the form espeak-ng and voxserve's other voices use.
std::string LanguageTag(std::string code) {
  std::replace(code.begin(), code.end(), '_', '-');
  std::transform(code.begin(), code.end(), code.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return code;
}

absl::Status ReadPhonemeIdMap(const Json& json, PhonemeIdMap& out) {
  if (!json.is_object()) return core::InvalidArgument("phoneme_id_map: expected an object");
  for (const auto& [key, ids] : json.items()) {
    std::u32string phoneme = DecodeUtf8(key);
    // Piper's C++ insists on one code point per key; libpiper takes the first. Multi-code-point
    // keys (piper1-gpl's merged diphthongs) are skipped: espeak never produces them alone.
    if (phoneme.size() != 1) continue;
    if (!ids.is_array() || ids.empty()) {
      return core::InvalidArgument("phoneme_id_map['" + key + "']: expected a list of ids");
    }
    std::vector<int64_t>& target = out[phoneme[0]];
    for (const Json& id : ids) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0) {
        return core::InvalidArgument("phoneme_id_map['" + key + "']: ids must be integers >= 0");
      }
      target.push_back(id.get<int64_t>());
    }
  }
  return absl::OkStatus();
}

absl::Status ReadPhonemeMap(const Json& json, PhonemeMap& out) {
  if (!json.is_object()) return core::InvalidArgument("phoneme_map: expected an object");
  for (const auto& [key, values] : json.items()) {
    std::u32string from = DecodeUtf8(key);
    if (from.size() != 1 || !values.is_array()) {
      return core::InvalidArgument("phoneme_map['" + key +
                                   "']: expected one code point mapped to a list");
    }
    std::u32string to;
    for (const Json& value : values) {
      if (value.is_string()) to += DecodeUtf8(value.get<std::string>());
    }
    out[from[0]] = to;
  }
  return absl::OkStatus();
}

// A number of `object`, left as it is when absent. One outside T's range (a sample rate of
// 22050222222222.2, found by the fuzzer) is an error: converting it is undefined behaviour.
template <typename T>
absl::Status ReadNumber(const Json& object, const char* key, T& out) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) {
    return absl::OkStatus();
  }
  const double value = object[key].get<double>();
  if (!(value >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
        value <= static_cast<double>(std::numeric_limits<T>::max()))) {
    return core::InvalidArgument(std::string(key) + " is out of range");
  }
  out = static_cast<T>(value);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PiperVoiceConfig> PiperVoiceConfig::Parse(const std::string& json_text,
                                                         const std::string& path) {
  auto fail = [&](const absl::Status& status) {
    return core::InvalidArgument("voice config " + path + ": " + std::string(status.message()));
  };
  Json json = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return fail(core::InvalidArgument("not valid JSON"));
  if (!json.is_object()) return fail(core::InvalidArgument("expected a JSON object"));

  PiperVoiceConfig config;
  if (json.contains("dataset") && json["dataset"].is_string()) config.dataset = json["dataset"];
  if (const Json& audio = json.value("audio", Json::object()); audio.is_object()) {
    if (auto s = ReadNumber(audio, "sample_rate", config.sample_rate); !s.ok()) return fail(s);
    if (audio.contains("quality") && audio["quality"].is_string())
      config.quality = audio["quality"];
  }
  if (const Json& espeak = json.value("espeak", Json::object());
      espeak.is_object() && espeak.contains("voice") && espeak["voice"].is_string()) {
    config.espeak_voice = espeak["voice"];
  }
  if (const Json& language = json.value("language", Json::object());
      language.is_object() && language.contains("code") && language["code"].is_string()) {
    config.language = LanguageTag(language["code"]);
  }
  if (config.language.empty()) config.language = config.espeak_voice;
  if (json.contains("phoneme_type") && json["phoneme_type"].is_string()) {
    config.phoneme_type = json["phoneme_type"];
  }
  if (!json.contains("phoneme_id_map"))
    return fail(core::InvalidArgument("phoneme_id_map is missing"));
  if (auto s = ReadPhonemeIdMap(json["phoneme_id_map"], config.phoneme_id_map); !s.ok()) {
    return fail(s);
  }
  if (json.contains("phoneme_map")) {
    if (auto s = ReadPhonemeMap(json["phoneme_map"], config.phoneme_map); !s.ok()) return fail(s);
  }
  if (config.phoneme_map.empty() && config.espeak_voice == "pt-br") {
    config.phoneme_map[U'c'] = U"k";  // Piper's built-in default map for Brazilian Portuguese
  }
  const Json inference = json.value("inference", Json::object());
  for (absl::Status s : {ReadNumber(inference, "noise_scale", config.noise_scale),
                         ReadNumber(inference, "length_scale", config.length_scale),
                         ReadNumber(inference, "noise_w", config.noise_w),
                         ReadNumber(json, "num_speakers", config.num_speakers),
                         ReadNumber(json, "hop_length", config.hop_length)}) {
    if (!s.ok()) return fail(s);
  }
  if (json.contains("speaker_id_map") && json["speaker_id_map"].is_object()) {
    for (const auto& [name, id] : json["speaker_id_map"].items()) {
      if (!id.is_number_integer()) {
        return fail(core::InvalidArgument("speaker_id_map['" + name + "']: expected an integer"));
      }
      config.speaker_id_map[name] = id.get<int64_t>();
    }
  }
  if (auto s = config.Validate(); !s.ok()) return fail(s);
  return config;
}

absl::StatusOr<PiperVoiceConfig> PiperVoiceConfig::Load(const std::string& path) {
  auto text = core::ReadFile(path);
  if (!text) return absl::NotFoundError("voice config " + path + " cannot be read");
  return Parse(*text, path);
}

absl::Status PiperVoiceConfig::Validate() const {
  if (sample_rate < 1000 || sample_rate > 192000) {
    return core::InvalidArgument("audio.sample_rate must be within 1000..192000");
  }
  for (char32_t symbol : {kPiperPad, kPiperBos, kPiperEos}) {
    if (!phoneme_id_map.contains(symbol)) {
      return core::InvalidArgument(std::string("phoneme_id_map has no '") +
                                   EncodeUtf8(std::u32string(1, symbol)) +
                                   "' (Piper's pad _, bos ^ and eos $ are required)");
    }
  }
  if (phoneme_type != "espeak" && phoneme_type != "text") {
    return core::InvalidArgument("phoneme_type '" + phoneme_type +
                                 "' is not supported (supported: espeak, text)");
  }
  if (num_speakers < 1) return core::InvalidArgument("num_speakers must be >= 1");
  for (const auto& [name, id] : speaker_id_map) {
    if (id < 0 || id >= num_speakers) {
      return core::InvalidArgument("speaker_id_map['" + name + "'] = " + std::to_string(id) +
                                   " is outside 0..num_speakers-1");
    }
  }
  if (hop_length < 1) return core::InvalidArgument("hop_length must be >= 1");
  if (!(length_scale > 0) || !(noise_scale >= 0) || !(noise_w >= 0)) {
    return core::InvalidArgument("inference scales must be positive (length_scale > 0)");
  }
  return absl::OkStatus();
}

}  // namespace voxserve::engine::onnx
