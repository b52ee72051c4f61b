#include "engine/espeak/espeak_engine.h"

#include <espeak-ng/speak_lib.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>
#include <unordered_map>

#include "audio/time_stretch.h"
#include "core/error.h"
#include "engine/espeak/espeak_library.h"
#include "engine/espeak/espeak_word_events.h"

namespace voxserve::engine {
namespace {

// The globals below are guarded by the library's lock (see EspeakLibrary).
bool g_espeak_in_use = false;
bool g_synth_callback_set = false;
// espeak id → name espeak_SetVoiceByName understands (its voice file identifier).
std::unordered_map<std::string, std::string> g_voice_files;

// espeak-ng's rate is in words per minute: 175 is its natural rate, 80 its floor. Above 450 it
// speeds up with its built-in sonic stage (checked: 700 wpm is 4.1x faster than 175).
constexpr double kNaturalRateWpm = 175.0;
constexpr double kMinRateWpm = 80.0;
// Silence after each segment at speed 1: without it a request's sentences run into each other
// with no breath between them. espeak-ng's own end pause (espeakENDPAUSE, 0.29 s measured) is not
// used: with it the library's output length varies by a few samples from call to call, so the
// same text would no longer give the same audio. 0.2 s is Piper's sentence_silence default.
constexpr double kSentencePauseSeconds = 0.2;

// What one espeak_Synth call delivers to CollectSamples (its user_data).
struct SynthOutput {
  std::vector<float> samples;
  std::vector<EspeakWordEvent> words;
};

// Receives audio and events from espeak_Synth (called on the synthesizing thread, under the
// library lock). `events` is a list ended by espeakEVENT_LIST_TERMINATED, which also carries
// user_data when the list is otherwise empty.
int CollectSamples(short* samples, int count, espeak_EVENT* events) {
  auto* out = static_cast<SynthOutput*>(events->user_data);
  for (const espeak_EVENT* event = events; event->type != espeakEVENT_LIST_TERMINATED; ++event) {
    if (event->type == espeakEVENT_WORD) {
      out->words.push_back({event->text_position, event->length, event->audio_position});
    }
  }
  if (samples == nullptr || count <= 0) return 0;
  // insert grows geometrically; an exact reserve per callback would make long texts quadratic.
  out->samples.insert(out->samples.end(), samples, samples + count);
  std::for_each(out->samples.end() - count, out->samples.end(), [](float& s) { s /= 32768.0f; });
  return 0;  // 0 = continue synthesis
}

// Voice ids are the voice's first language ("en-us", "cmn"); a second voice claiming the same
// language gets its file name instead ("yue-latn-jyutping"), lowercased like the others.
std::string VoiceIdFor(const espeak_VOICE& voice, const std::set<std::string>& taken) {
  std::string id = voice.languages + 1;  // languages = priority byte, then the name
  if (!taken.contains(id)) return id;
  std::string file = voice.identifier;
  id = file.substr(file.find('/') + 1);
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return std::tolower(c); });
  return id;
}

}  // namespace

EspeakEngine::EspeakEngine(ModelInfo info, std::vector<std::string> variants,
                           EspeakLibrary* library)
    : info_(std::move(info)), variants_(std::move(variants)), library_(library) {}

absl::StatusOr<std::unique_ptr<EspeakEngine>> EspeakEngine::Create(const EspeakConfig& config) {
  auto library = EspeakLibrary::Acquire(config.data_path);
  if (!library.ok()) return library.status();
  auto lock = (*library)->Lock();
  if (g_espeak_in_use) {
    return core::Internal("espeak-ng keeps global state: only one espeak model may be loaded");
  }
  if (!g_synth_callback_set) {
    espeak_SetSynthCallback(CollectSamples);
    g_synth_callback_set = true;
  }
  const int sample_rate = (*library)->sample_rate();

  ModelInfo info;
  info.id = config.model_id;
  info.engine = "espeak";
  info.max_batch_size = 1;  // serialized by the library's global state: batching buys nothing
  info.batch_requires_same_voice = true;
  std::set<std::string> taken;
  g_voice_files.clear();
  for (const espeak_VOICE** voice = espeak_ListVoices(nullptr); *voice != nullptr; ++voice) {
    std::string id = VoiceIdFor(**voice, taken);
    taken.insert(id);
    g_voice_files[id] = (*voice)->identifier;
    info.voices.push_back({id, (*voice)->languages + 1, sample_rate, (*voice)->name});
  }
  std::vector<std::string> variants;
  espeak_VOICE variant_spec{};
  variant_spec.languages = "variant";
  for (const espeak_VOICE** v = espeak_ListVoices(&variant_spec); *v != nullptr; ++v) {
    std::string file = (*v)->identifier;  // "!v/f3"
    variants.push_back(file.substr(file.find('/') + 1));
  }
  if (!taken.contains(config.default_voice)) {
    return core::InvalidArgument("espeak default voice '" + config.default_voice +
                                 "' is not installed");
  }
  info.default_voice = config.default_voice;
  g_espeak_in_use = true;
  return std::unique_ptr<EspeakEngine>(
      new EspeakEngine(std::move(info), std::move(variants), *library));
}

EspeakEngine::~EspeakEngine() {
  auto lock = library_->Lock();
  g_espeak_in_use = false;  // the library stays initialized (see EspeakLibrary)
}

bool EspeakEngine::AcceptsVoice(std::string_view voice_id) const {
  std::string_view base = voice_id.substr(0, voice_id.find('+'));
  bool known_base = std::any_of(info_.voices.begin(), info_.voices.end(),
                                [&](const VoiceInfo& v) { return v.id == base; });
  if (!known_base) return false;
  if (base.size() == voice_id.size()) return true;
  std::string_view variant = voice_id.substr(base.size() + 1);
  return std::find(variants_.begin(), variants_.end(), variant) != variants_.end();
}

absl::Status EspeakEngine::Warmup(std::span<const std::string> texts) {
  for (const std::string& text : texts) {
    auto audio = SynthesizeOne({text, info_.default_voice, 1.0});
    if (!audio.ok()) return audio.status();
  }
  return absl::OkStatus();
}

std::vector<absl::StatusOr<audio::PcmAudio>> EspeakEngine::Synthesize(
    std::span<const SegmentInput> batch) {
  std::vector<absl::StatusOr<audio::PcmAudio>> results;
  results.reserve(batch.size());
  for (const SegmentInput& input : batch) results.push_back(SynthesizeOne(input));
  return results;
}

absl::StatusOr<audio::PcmAudio> EspeakEngine::SynthesizeOne(const SegmentInput& input) {
  if (!AcceptsVoice(input.voice_id)) {
    return core::NotFound("espeak has no voice '" + std::string(input.voice_id) + "'", "voice",
                          "voice_not_found");
  }
  double rate = kNaturalRateWpm * input.speed;
  // Below espeak's floor, synthesize at the floor and slow the rest down without changing pitch.
  double remaining_speed = rate < kMinRateWpm ? rate / kMinRateWpm : 1.0;
  rate = std::max(rate, kMinRateWpm);

  audio::PcmAudio pcm;
  {
    auto lock = library_->Lock();
    std::string_view voice = input.voice_id;
    size_t plus = voice.find('+');
    std::string file = g_voice_files.at(std::string(voice.substr(0, plus)));
    if (plus != std::string_view::npos) file += voice.substr(plus);
    if (espeak_SetVoiceByName(file.c_str()) != EE_OK) {
      return core::Internal("espeak-ng could not select voice '" + std::string(voice) + "'");
    }
    espeak_SetParameter(espeakRATE, static_cast<int>(std::lround(rate)), 0);
    std::string text(input.text);  // espeak wants a NUL-terminated buffer
    SynthOutput output;
    espeak_ERROR error = espeak_Synth(text.c_str(), text.size() + 1, 0, POS_CHARACTER, 0,
                                      espeakCHARS_UTF8, nullptr, &output);
    if (error != EE_OK) {
      return core::Internal("espeak-ng synthesis failed with code " + std::to_string(error));
    }
    pcm.sample_rate = library_->sample_rate();
    pcm.samples = std::move(output.samples);
    pcm.words = WordTimingsFromEvents(input.text, output.words, pcm.samples, pcm.sample_rate);
    pcm.timings = TimingsKind::kExact;  // espeak-ng's own clock (speak_lib.h audio_position)
  }
  if (remaining_speed < 1.0) {
    auto stretched = audio::TimeStretch(pcm, remaining_speed);
    if (!stretched.ok()) return stretched.status();
    pcm = *std::move(stretched);
  }
  pcm.samples.resize(
      pcm.samples.size() +
          static_cast<size_t>(std::lround(kSentencePauseSeconds / input.speed * pcm.sample_rate)),
      0.0f);
  return pcm;
}

}  // namespace voxserve::engine
