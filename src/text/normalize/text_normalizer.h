// Text normalization for engines that read characters, not words (Piper, Kokoro, CosyVoice):
// numbers, decimals, ordinals, dates, times, currency, units, percentages and common
// abbreviations written out as words, by rules of ours (docs/text-normalization.md), in
// English and Chinese. espeak-ng normalizes its input itself and gets the text as it came.
#pragma once

#include <string>
#include <string_view>

namespace voxserve::text::normalize {

enum class NormalizationLanguage { kNone, kEnglish, kChinese };

// The rules for a voice's language tag: "en", "en-us", "en-gb" → English; "zh", "zh-cn", "cmn",
// "yue" → Chinese; kNone for every other language (its text is left alone).
NormalizationLanguage NormalizationLanguageForVoice(std::string_view language);

// For engines that speak several languages with one voice (CosyVoice): text holding a Han
// character is Chinese, other text English.
NormalizationLanguage NormalizationLanguageOfText(std::string_view utf8);

// `utf8` (valid UTF-8) with what the language's rules recognize written out; everything else
// (words, punctuation, other scripts) is copied unchanged. kNone: unchanged.
std::string NormalizeText(std::string_view utf8, NormalizationLanguage language);

std::string NormalizeEnglish(std::string_view utf8);
std::string NormalizeChinese(std::string_view utf8);

}  // namespace voxserve::text::normalize
