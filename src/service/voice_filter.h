// Which voices a listing request (REST GET /v1/voices, gRPC ListVoices) asks for. One rule for
// every transport.
#pragma once

#include <string>
#include <string_view>

namespace voxserve::service {

struct VoiceFilter {
  // A model id, or one of OpenAI's model names (tts-1, ...: the default model). Empty = any.
  std::string model;
  // A language tag (BCP-47 or ISO 639, '-' or '_', any case). Empty = any. See LanguageMatches.
  std::string language;
};

// True when a voice of language `voice_language` answers a filter for `wanted`: compared
// case-insensitively with '_' read as '-', the voice's language is `wanted` or a narrower tag of
// it ("en" → "en-us", "en-gb-x-rp"), or its primary language is one of the individual languages
// of the ISO 639 macrolanguage `wanted` names ("zh" → "cmn", "yue", "cmn-latn-pinyin"; "ar" →
// "arb"; "no" → "nb", "nn").
bool LanguageMatches(std::string_view voice_language, std::string_view wanted);

}  // namespace voxserve::service
