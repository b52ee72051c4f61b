// OpenAI's voice names ("alloy" ... "verse") for a default model that is not espeak-ng: Piper,
// Kokoro, a CosyVoice with voices of its own. Clients written for OpenAI send these names; the
// built-in mapping (service_config.h) names espeak-ng voices, which such a model lacks. As
// Kokoro-FastAPI does, each name then stands for a voice of the model, chosen from its list:
//  1. a voice named for it ("af_nova", "am_onyx", "bm_fable": Kokoro's namesakes);
//  2. "alloy", OpenAI's usual default, the model's default voice;
//  3. the others, in OpenAI's order, each the least used voice (first in the list among
//     equals) in the default voice's language, of the name's gender where the id says it
//     (Kokoro's "af_" / "am_"); so every voice serves before any serves twice.
// `openai_voices` in the config overrides any of them.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"

namespace voxserve::service {

// Name → voice id; empty when the model has no voices.
std::map<std::string, std::string, std::less<>> OpenAiVoicesFor(
    const std::vector<engine::VoiceInfo>& voices, std::string_view default_voice);

}  // namespace voxserve::service
