// A prompt recording made up for CosyVoiceEngine::Warmup: a bundle holds no voice, yet every
// stage must run once before the model counts as ready. Three seconds of a voiced, syllable-like
// signal (a gliding fundamental with harmonics, four "syllables" a second) as a 24 kHz 16-bit
// WAV: enough for the prompt encoders (campplus, the speech tokenizer) and the features, never
// heard by anyone. Deterministic.
#pragma once

#include <string>

namespace voxserve::engine::cosyvoice {

inline constexpr char kWarmupTranscript[] = "This is a warm-up.";

std::string SyntheticPromptWav();

}  // namespace voxserve::engine::cosyvoice
