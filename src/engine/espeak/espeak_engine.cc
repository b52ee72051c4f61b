#include "engine/espeak/espeak_engine.h"

#include <espeak-ng/speak_lib.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include "audio/time_stretch.h"
#include "core/error.h"
#include "engine/espeak/espeak_library.h"
#include "engine/espeak/espeak_synth_process.h"
#include "engine/espeak/espeak_word_events.h"

namespace voxserve::engine {
namespace {

// Guarded by the library's lock (see EspeakLibrary): one espeak model per process.
bool g_espeak_in_use = false;

// espeak-ng's rate is in words per minute: 175 is its natural rate, 80 its floor. Above 450 it
// speeds up with its built-in sonic stage (checked: 700 wpm is 4.1x faster than 175).
constexpr double kNaturalRateWpm = 175.0;
constexpr double kMinRateWpm = 80.0;
// Silence after each segment at speed 1: without it a request's sentences run into each other
// with no breath between them. espeak-ng's own end pause (espeakENDPAUSE, 0.29 s measured) is not
// used: ours scales with the speed like the speech does. 0.2 s is Piper's sentence_silence
// default.
constexpr double kSentencePauseSeconds = 0.2;

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

// espeakPITCH is 0-100 with 50 the voice's own base pitch; the factor scales around it. A
// factor of 1 leaves the parameter alone (-1), so a plain request's audio is unchanged.
int EspeakPitch(double factor) {
  if (factor == 1.0) return -1;
  return static_cast<int>(std::clamp(std::lround(50.0 * factor), 0L, 100L));
}

}  // namespace

EspeakEngine::EspeakEngine(ModelInfo info, std::vector<std::string> variants,
                           std::unordered_map<std::string, std::string> voice_files,
                           EspeakLibrary* library, std::unique_ptr<EspeakSynthProcess> synth)
    : info_(std::move(info)),
      variants_(std::move(variants)),
      voice_files_(std::move(voice_files)),
      library_(library),
      synth_(std::move(synth)) {}

absl::StatusOr<std::unique_ptr<EspeakEngine>> EspeakEngine::Create(const EspeakConfig& config) {
  auto library = EspeakLibrary::Acquire(config.data_path);
  if (!library.ok()) return library.status();
  ModelInfo info;
  std::vector<std::string> variants;
  std::unordered_map<std::string, std::string> voice_files;
  {
    auto lock = (*library)->Lock();
    if (g_espeak_in_use) {
      return core::Internal("espeak-ng keeps global state: only one espeak model may be loaded");
    }
    const int sample_rate = (*library)->sample_rate();
    info.id = config.model_id;
    info.engine = "espeak";
    // A synthesis per call, each in a speaker process: calls run in parallel, batching buys
    // nothing.
    info.max_batch_size = 1;
    info.parallel_calls = true;
    info.batch_requires_same_voice = true;
    info.controls_pitch = true;  // espeakPITCH; phonemes: docs/ssml.md says why not
    std::set<std::string> taken;
    for (const espeak_VOICE** voice = espeak_ListVoices(nullptr); *voice != nullptr; ++voice) {
      std::string id = VoiceIdFor(**voice, taken);
      taken.insert(id);
      voice_files[id] = (*voice)->identifier;
      info.voices.push_back({id, (*voice)->languages + 1, sample_rate, (*voice)->name});
    }
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
  }
  // The listing above is all this process's library is asked for; synthesis runs in the
  // template's speakers, each from its voice's checkpoint (espeak_synth_process.h).
  auto synth = EspeakSynthProcess::Start(config.data_path, config.synthesis_timeout);
  if (!synth.ok()) {
    auto lock = (*library)->Lock();
    g_espeak_in_use = false;
    return synth.status();
  }
  return std::unique_ptr<EspeakEngine>(new EspeakEngine(
      std::move(info), std::move(variants), std::move(voice_files), *library, *std::move(synth)));
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
  if (!input.phonemes.empty()) {
    // Its [[...]] input takes espeak's own ASCII phoneme names, not IPA (docs/ssml.md).
    return core::InvalidArgument("espeak-ng does not speak IPA phonemes (SSML <phoneme>)",
                                 "phonemes", "ssml_unsupported");
  }
  double rate = kNaturalRateWpm * input.speed;
  // Below espeak's floor, synthesize at the floor and slow the rest down without changing pitch.
  double remaining_speed = rate < kMinRateWpm ? rate / kMinRateWpm : 1.0;
  rate = std::max(rate, kMinRateWpm);

  std::string_view voice = input.voice_id;
  const size_t plus = voice.find('+');
  std::string file = voice_files_.at(std::string(voice.substr(0, plus)));
  if (plus != std::string_view::npos) file += voice.substr(plus);
  const int sample_rate = library_->sample_rate();
  const auto pause =
      static_cast<size_t>(std::lround(kSentencePauseSeconds / input.speed * sample_rate));
  const bool stretch = remaining_speed < 1.0;
  // The pause comes with the samples (one allocation and no copy of the speech), unless the
  // speech is stretched first.
  absl::StatusOr<EspeakSynthProcess::Output> output =
      synth_->Synthesize(file, static_cast<int>(std::lround(rate)), EspeakPitch(input.pitch),
                         input.text, stretch ? 0 : pause);
  if (!output.ok()) return output.status();
  audio::PcmAudio pcm;
  pcm.sample_rate = sample_rate;
  pcm.samples = std::move(output->samples);
  std::span<const float> speech(pcm.samples.data(), pcm.samples.size() - (stretch ? 0 : pause));
  pcm.words = WordTimingsFromEvents(input.text, output->words, speech, pcm.sample_rate);
  pcm.timings = TimingsKind::kExact;  // espeak-ng's own clock (speak_lib.h audio_position)
  if (stretch) {
    auto stretched = audio::TimeStretch(pcm, remaining_speed);
    if (!stretched.ok()) return stretched.status();
    pcm = *std::move(stretched);
    pcm.samples.resize(pcm.samples.size() + pause, 0.0f);
  }
  return pcm;
}

}  // namespace voxserve::engine
