#include "engine/onnx/kokoro_voice.h"

#include <filesystem>
#include <optional>
#include <set>

#include "core/error.h"
#include "core/read_file.h"
#include "engine/onnx/code_points.h"
#include "engine/onnx/phoneme_timings.h"

namespace voxserve::engine::onnx {
namespace {

constexpr const char* kKokoroKeys = "model, voices, config, espeak_data_path, espeak_voice";

std::string Describe(const std::string& name) {
  static const std::map<char, std::string> kLanguages = {{'a', "American English"},
                                                         {'b', "British English"},
                                                         {'e', "Spanish"},
                                                         {'f', "French"},
                                                         {'h', "Hindi"},
                                                         {'i', "Italian"},
                                                         {'j', "Japanese"},
                                                         {'p', "Brazilian Portuguese"},
                                                         {'z', "Mandarin Chinese"}};
  std::string text = "Kokoro " + name;
  if (name.size() >= 2 && kLanguages.contains(name[0])) {
    text += " (" + kLanguages.at(name[0]) +
            (name[1] == 'f'   ? ", female"
             : name[1] == 'm' ? ", male"
                              : "") +
            ")";
  }
  return text;
}

absl::StatusOr<KokoroVocab> LoadVocab(const KokoroModel& model, const KokoroEngineConfig& config) {
  if (std::optional<std::string> metadata = model.session().Metadata("kokoro_config")) {
    return ParseKokoroVocab(*metadata,
                            "model file " + config.model_path + " metadata kokoro_config");
  }
  if (!config.config_path.empty()) {
    std::optional<std::string> text = core::ReadFile(config.config_path);
    if (!text)
      return absl::NotFoundError("Kokoro config " + config.config_path + " cannot be read");
    return ParseKokoroVocab(*text, "Kokoro config " + config.config_path);
  }
  // Beside the model, else one folder up (onnx-community's repository keeps the graphs in onnx/
  // and config.json, tokenizer.json at its root): the first of these that holds a vocabulary.
  const std::filesystem::path folder = std::filesystem::path(config.model_path).parent_path();
  std::string passed_over;  // files found that hold none, and why: the error says them
  for (const auto& candidate :
       {folder / "config.json", folder.parent_path() / "config.json", folder / "tokenizer.json",
        folder.parent_path() / "tokenizer.json"}) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(candidate, error)) continue;
    std::optional<std::string> text = core::ReadFile(candidate);
    absl::StatusOr<KokoroVocab> vocab =
        text ? ParseKokoroVocab(*text, candidate.string())
             : absl::NotFoundError(candidate.string() + " cannot be read");
    if (vocab.ok()) return vocab;
    passed_over += "; " + std::string(vocab.status().message());
  }
  return core::InvalidArgument("model file " + config.model_path +
                               " has no kokoro_config metadata and no config.json or "
                               "tokenizer.json with a vocabulary beside it or one folder up: "
                               "set options.config to the Kokoro config.json (its \"vocab\")" +
                               passed_over);
}

}  // namespace

absl::Status KokoroEngineConfig::Set(const std::string& key, const std::string& value) {
  if (key == "model") {
    model_path = value;
  } else if (key == "voices") {
    voices_path = value;
  } else if (key == "config") {
    config_path = value;
  } else if (key == "espeak_data_path") {
    espeak_data_path = value;
  } else if (key == "espeak_voice") {
    espeak_voice = value;
  } else if (absl::Status status = session.Set(key, value); !absl::IsNotFound(status)) {
    return status;
  } else {
    return core::InvalidArgument("unknown kokoro option '" + key + "' (allowed: " + kKokoroKeys +
                                 ", " + OnnxSessionConfig::KnownKeys() + ")");
  }
  return absl::OkStatus();
}

absl::Status KokoroEngineConfig::Validate() const {
  if (model_path.empty()) {
    return core::InvalidArgument("options.model must name the Kokoro .onnx file");
  }
  if (voices_path.empty()) {
    return core::InvalidArgument(
        "options.voices must name the voices file (voices-v1.0.bin) "
        "or a folder of <voice>.bin files");
  }
  return session.Validate();
}

absl::StatusOr<std::unique_ptr<KokoroVoice>> KokoroVoice::Create(const KokoroEngineConfig& config) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  std::unique_ptr<KokoroVoice> voice(new KokoroVoice());
  voice->config_ = config;
  auto voices = KokoroVoices::Load(config.voices_path);
  if (!voices.ok()) return voices.status();
  voice->voices_ = std::move(*voices);
  auto model = KokoroModel::Create(config.model_path, config.session);
  if (!model.ok()) return model.status();
  voice->model_ = std::move(*model);
  auto vocab = LoadVocab(*voice->model_, config);
  if (!vocab.ok()) return vocab.status();
  voice->vocab_ = std::move(*vocab);
  for (const auto& [symbol, token] : voice->vocab_) voice->symbols_[token] = symbol;
  auto phonemizer = EspeakPhonemizer::Create(config.espeak_data_path);
  if (!phonemizer.ok()) return phonemizer.status();
  voice->phonemizer_ = std::move(*phonemizer);

  ModelInfo& info = voice->info_;
  info.id = config.model_id;
  info.engine = "kokoro";
  info.max_batch_size = 1;  // exports fix the batch to 1: style and speed are per utterance
  info.batch_requires_same_voice = true;
  info.speaks_ipa = true;  // its vocabulary is IPA symbols (SSML <phoneme>)
  std::set<std::string> espeak_voices;
  for (const std::string& name : voice->voices_.Names()) {
    std::string espeak =
        config.espeak_voice.empty() ? KokoroEspeakVoice(name) : config.espeak_voice;
    espeak_voices.insert(espeak);
    info.voices.push_back({name, espeak, kKokoroSampleRate, Describe(name)});
  }
  for (const std::string& espeak : espeak_voices) {
    // A language espeak-ng lacks (e.g. ja without its data) only fails that language's voices.
    if (absl::Status status = voice->phonemizer_->CheckVoice(espeak); !status.ok()) {
      if (!config.espeak_voice.empty()) return status;
    }
  }
  info.default_voice = config.default_voice;
  if (info.default_voice.empty()) {
    info.default_voice = voice->voices_.Contains("af_heart") ? "af_heart" : info.voices.front().id;
  }
  if (!voice->AcceptsVoice(info.default_voice)) {
    return core::InvalidArgument("default voice '" + info.default_voice + "' is not in " +
                                 config.voices_path);
  }
  return voice;
}

bool KokoroVoice::AcceptsVoice(std::string_view voice_id) const {
  return voices_.Contains(voice_id);
}

absl::StatusOr<std::vector<std::vector<int64_t>>> KokoroVoice::TextToTokens(
    std::string_view text, std::string_view voice) const {
  std::string espeak =
      config_.espeak_voice.empty() ? KokoroEspeakVoice(voice) : config_.espeak_voice;
  auto clauses = phonemizer_->Phonemize(text, espeak);
  if (!clauses.ok()) return clauses.status();
  return KokoroTokenChunks(KokoroPhonemeString(*clauses, espeak == "en-us"), vocab_);
}

absl::Status KokoroVoice::Warmup(std::span<const std::string> texts) {
  for (const std::string& text : texts) {
    auto audio = SynthesizeOne({text, info_.default_voice, 1.0});
    if (!audio.ok()) return audio.status();
  }
  return absl::OkStatus();
}

std::vector<absl::StatusOr<audio::PcmAudio>> KokoroVoice::Synthesize(
    std::span<const SegmentInput> batch) {
  std::vector<absl::StatusOr<audio::PcmAudio>> results;
  results.reserve(batch.size());
  for (const SegmentInput& input : batch) results.push_back(SynthesizeOne(input));
  return results;
}

absl::StatusOr<audio::PcmAudio> KokoroVoice::SynthesizeOne(const SegmentInput& input) const {
  if (!AcceptsVoice(input.voice_id)) {
    return core::NotFound(
        "model " + info_.id + " has no voice '" + std::string(input.voice_id) + "'", "voice",
        "voice_not_found");
  }
  // IPA given (SSML <phoneme>): its symbols are the vocabulary's; those it lacks are dropped, as
  // for espeak's.
  auto chunks = input.phonemes.empty() ? TextToTokens(input.text, input.voice_id)
                                       : absl::StatusOr<std::vector<std::vector<int64_t>>>(
                                             KokoroTokenChunks(DecodeUtf8(input.phonemes), vocab_));
  if (!chunks.ok()) return chunks.status();
  audio::PcmAudio pcm{{}, kKokoroSampleRate};
  std::vector<TimedPhoneme> spoken;  // for word timings
  bool exact = true;
  for (const std::vector<int64_t>& tokens : *chunks) {
    std::vector<float> frames;
    auto samples =
        model_->Infer(tokens, voices_.Style(input.voice_id, tokens.size()), input.speed, &frames);
    if (!samples.ok()) return samples.status();
    pcm.samples.insert(pcm.samples.end(), samples->begin(), samples->end());
    // Chunks join with no pause between them: a word boundary all the same.
    spoken.push_back({U' ', 0});
    const size_t first = spoken.size();
    for (size_t i = 0; i < tokens.size(); ++i) {
      auto symbol = symbols_.find(tokens[i]);
      double length = i < frames.size() ? frames[i] * kKokoroFrameSamples : 0;
      spoken.push_back({symbol == symbols_.end() ? U' ' : symbol->second, length});
    }
    if (frames.size() != tokens.size()) {
      exact = false;  // no duration output: phoneme counts share the chunk's audio
      ShareEvenly(std::span(spoken).subspan(first), static_cast<double>(samples->size()));
    }
  }
  PhonemeWordTimings timings =
      WordTimingsFromPhonemes(input.text, spoken, kKokoroSampleRate, exact);
  pcm.words = std::move(timings.words);
  pcm.timings = timings.kind;
  return pcm;
}

}  // namespace voxserve::engine::onnx
