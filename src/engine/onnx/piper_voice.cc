#include "engine/onnx/piper_voice.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/error.h"
#include "core/options.h"
#include "engine/onnx/phoneme_timings.h"
#include "engine/onnx/piper_phonemes.h"

namespace voxserve::engine::onnx {
namespace {

// The phonemes of one sentence as the graph spoke them, for word timings: ids are laid out as
// PiperPhonemeIds lays them out (^ _ (p _)* $), so with the graph's frames per id each phoneme
// gets its own ids' frames and the pad after it; without them, an even share of `samples`.
void AppendSpokenPhonemes(std::u32string_view phonemes, const PhonemeIdMap& id_map,
                          const std::vector<float>* frames, size_t samples, int hop_length,
                          std::vector<TimedPhoneme>& out) {
  const size_t first = out.size();
  const size_t pad = id_map.at(kPiperPad).size();
  size_t at = 0;
  auto take = [&](size_t ids) {
    double sum = 0;
    for (size_t end = at + ids; frames != nullptr && at < end && at < frames->size(); ++at) {
      sum += (*frames)[at];
    }
    if (frames == nullptr) at += ids;
    return sum * hop_length;
  };
  out.push_back({U' ', take(id_map.at(kPiperBos).size() + pad)});
  for (char32_t phoneme : phonemes) {
    auto it = id_map.find(phoneme);
    if (it == id_map.end()) continue;  // skipped by PiperPhonemeIds too
    out.push_back({phoneme, take(it->second.size() + pad)});
  }
  out.push_back({U' ', take(id_map.at(kPiperEos).size())});
  if (frames == nullptr) {
    ShareEvenly(std::span(out).subspan(first), static_cast<double>(samples));
  }
}

constexpr const char* kPiperKeys =
    "model, config, espeak_data_path, sentence_silence, normalize_audio, noise_scale, "
    "length_scale, noise_w, max_batch_size";

absl::Status Keyed(const std::string& key, absl::Status status) {
  if (status.ok()) return status;
  return core::InvalidArgument("options." + key + ": " + std::string(status.message()));
}

absl::Status SetFloat(const std::string& key, const std::string& value, double min, double max,
                      std::optional<float>& out) {
  double parsed = 0;
  absl::Status status = core::ParseDouble(value, min, max, &parsed);
  if (status.ok()) out = static_cast<float>(parsed);
  return Keyed(key, status);
}

// Python Piper's normalize_audio: divide by the peak (silence stays silence), then clip.
void NormalizePeak(std::vector<float>& samples) {
  float peak = 0;
  for (float s : samples) peak = std::max(peak, std::fabs(s));
  if (peak < 1e-8f) {
    std::fill(samples.begin(), samples.end(), 0.0f);
    return;
  }
  for (float& s : samples) s = std::clamp(s / peak, -1.0f, 1.0f);
}

}  // namespace

absl::Status PiperEngineConfig::Set(const std::string& key, const std::string& value) {
  if (key == "model") {
    model_path = value;
  } else if (key == "config") {
    config_path = value;
  } else if (key == "espeak_data_path") {
    espeak_data_path = value;
  } else if (key == "sentence_silence") {
    return Keyed(key, core::ParseDouble(value, 0.0, 10.0, &sentence_silence_seconds));
  } else if (key == "normalize_audio") {
    return Keyed(key, core::ParseBool(value, &normalize_audio));
  } else if (key == "noise_scale") {
    return SetFloat(key, value, 0.0, 10.0, noise_scale);
  } else if (key == "length_scale") {
    return SetFloat(key, value, 0.01, 100.0, length_scale);
  } else if (key == "noise_w") {
    return SetFloat(key, value, 0.0, 10.0, noise_w);
  } else if (key == "max_batch_size") {
    long long n = 0;
    absl::Status status = core::ParseInt(value, 1, 256, &n);
    if (status.ok()) max_batch_size = static_cast<int>(n);
    return Keyed(key, status);
  } else if (absl::Status status = session.Set(key, value); !absl::IsNotFound(status)) {
    return status;
  } else {
    return core::InvalidArgument("unknown piper option '" + key + "' (allowed: " + kPiperKeys +
                                 ", " + OnnxSessionConfig::KnownKeys() + ")");
  }
  return absl::OkStatus();
}

absl::Status PiperEngineConfig::Validate() const {
  if (model_path.empty()) {
    return core::InvalidArgument("options.model must name the voice's .onnx file");
  }
  return session.Validate();
}

absl::StatusOr<std::unique_ptr<PiperVoice>> PiperVoice::Create(const PiperEngineConfig& config) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  std::error_code error;
  if (!std::filesystem::is_regular_file(config.model_path, error)) {
    return absl::NotFoundError("model file " + config.model_path + " does not exist");
  }
  std::unique_ptr<PiperVoice> voice(new PiperVoice());
  voice->config_ = config;
  std::string config_path =
      config.config_path.empty() ? config.model_path + ".json" : config.config_path;
  auto parsed = PiperVoiceConfig::Load(config_path);
  if (!parsed.ok()) return parsed.status();
  voice->voice_ = std::move(*parsed);
  const PiperVoiceConfig& vc = voice->voice_;

  auto model = PiperModel::Create(config.model_path, config.session);
  if (!model.ok()) return model.status();
  voice->model_ = std::move(*model);
  if (vc.num_speakers > 1 && !voice->model_->has_speaker_input()) {
    return core::InvalidArgument(config_path + " declares " + std::to_string(vc.num_speakers) +
                                 " speakers but model " + config.model_path +
                                 " has no 'sid' input");
  }
  if (vc.phoneme_type == "espeak") {
    auto phonemizer = EspeakPhonemizer::Create(config.espeak_data_path);
    if (!phonemizer.ok()) return phonemizer.status();
    if (absl::Status status = (*phonemizer)->CheckVoice(vc.espeak_voice); !status.ok()) {
      return core::InvalidArgument("voice config " + config_path +
                                   ": espeak.voice: " + std::string(status.message()));
    }
    voice->phonemizer_ = std::move(*phonemizer);
  }

  ModelInfo& info = voice->info_;
  info.id = config.model_id;
  info.engine = "piper";
  // Piper batches only when the graph can cut each item to its own length (see PiperModel).
  info.max_batch_size = voice->model_->can_batch() ? config.max_batch_size : 1;
  info.batch_requires_same_voice = true;  // `sid` is one value per Run
  // espeak-type voices map IPA symbols to ids (SSML <phoneme>); "text" voices map letters.
  info.speaks_ipa = vc.phoneme_type == "espeak";
  std::string description = "Piper " + (vc.dataset.empty() ? config.model_id : vc.dataset) +
                            (vc.quality.empty() ? "" : " (" + vc.quality + ")");
  if (vc.num_speakers > 1) {
    std::vector<std::pair<int64_t, std::string>> speakers;
    for (const auto& [name, id] : vc.speaker_id_map) speakers.emplace_back(id, name);
    for (int64_t id = 0; id < vc.num_speakers; ++id) {  // unnamed speakers go by their number
      bool named = std::any_of(speakers.begin(), speakers.end(),
                               [&](const auto& s) { return s.first == id; });
      if (!named) speakers.emplace_back(id, std::to_string(id));
    }
    std::sort(speakers.begin(), speakers.end());
    for (const auto& [id, name] : speakers) {
      std::string voice_id = config.model_id + ":" + name;
      voice->speaker_ids_[voice_id] = id;
      info.voices.push_back(
          {voice_id, vc.language, vc.sample_rate, description + ", speaker " + name});
    }
  } else {
    voice->speaker_ids_[config.model_id] = 0;
    info.voices.push_back({config.model_id, vc.language, vc.sample_rate, description});
  }
  info.default_voice = config.default_voice.empty() ? info.voices.front().id : config.default_voice;
  if (!voice->AcceptsVoice(info.default_voice)) {
    return core::InvalidArgument("default voice '" + info.default_voice +
                                 "' is not one of its voices");
  }
  return voice;
}

bool PiperVoice::AcceptsVoice(std::string_view voice_id) const {
  return speaker_ids_.find(voice_id) != speaker_ids_.end();
}

absl::StatusOr<std::vector<std::vector<int64_t>>> PiperVoice::TextToIds(
    std::string_view text) const {
  auto sentences = TextToPhonemes(text);
  if (!sentences.ok()) return sentences.status();
  std::vector<std::vector<int64_t>> ids;
  for (const std::u32string& sentence : *sentences) {
    ids.push_back(PiperPhonemeIds(sentence, voice_.phoneme_id_map).ids);
  }
  return ids;
}

absl::StatusOr<std::vector<std::u32string>> PiperVoice::TextToPhonemes(
    std::string_view text) const {
  std::vector<std::u32string> sentences;
  if (phonemizer_) {
    auto clauses = phonemizer_->Phonemize(text, voice_.espeak_voice);
    if (!clauses.ok()) return clauses.status();
    sentences = PiperSentences(*clauses, voice_.phoneme_map);
  } else {
    sentences.push_back(PiperTextPhonemes(text, voice_.phoneme_map));
  }
  return sentences;
}

absl::Status PiperVoice::Warmup(std::span<const std::string> texts) {
  for (const std::string& text : texts) {
    SegmentInput input{text, info_.default_voice, 1.0};
    auto results = Synthesize({&input, 1});
    if (!results[0].ok()) return results[0].status();
  }
  return absl::OkStatus();
}

std::vector<absl::StatusOr<audio::PcmAudio>> PiperVoice::Synthesize(
    std::span<const SegmentInput> batch) {
  std::vector<absl::StatusOr<audio::PcmAudio>> results(batch.size(),
                                                       core::Internal("not synthesized"));
  // One Run takes one sid and one length_scale, so segments are grouped by voice and speed.
  std::vector<bool> done(batch.size(), false);
  for (size_t first = 0; first < batch.size(); ++first) {
    if (done[first]) continue;
    std::vector<size_t> members;
    std::vector<const SegmentInput*> group;
    for (size_t i = first; i < batch.size(); ++i) {
      if (!done[i] && batch[i].voice_id == batch[first].voice_id &&
          batch[i].speed == batch[first].speed) {
        members.push_back(i);
        group.push_back(&batch[i]);
        done[i] = true;
      }
    }
    auto group_results = SynthesizeGroup(group);
    for (size_t k = 0; k < members.size(); ++k) results[members[k]] = std::move(group_results[k]);
  }
  return results;
}

std::vector<absl::StatusOr<audio::PcmAudio>> PiperVoice::SynthesizeGroup(
    std::span<const SegmentInput* const> group) {
  std::vector<absl::StatusOr<audio::PcmAudio>> results;
  auto sid = speaker_ids_.find(group.front()->voice_id);
  if (sid == speaker_ids_.end()) {
    for (size_t i = 0; i < group.size(); ++i) {
      results.push_back(core::NotFound(
          "model " + info_.id + " has no voice '" + std::string(group.front()->voice_id) + "'",
          "voice", "voice_not_found"));
    }
    return results;
  }
  // Every sentence of every segment, in order; segments usually hold one sentence.
  struct Sentence {
    size_t segment;
    std::u32string phonemes;
    std::vector<int64_t> ids;
  };
  std::vector<Sentence> sentences;
  for (size_t i = 0; i < group.size(); ++i) {
    // IPA given (SSML <phoneme>): one sentence of its own code points, as Piper's "text"
    // phoneme type reads its input.
    auto phonemes = group[i]->phonemes.empty()
                        ? TextToPhonemes(group[i]->text)
                        : absl::StatusOr<std::vector<std::u32string>>(std::vector<std::u32string>{
                              PiperTextPhonemes(group[i]->phonemes, voice_.phoneme_map)});
    results.push_back(audio::PcmAudio{{}, voice_.sample_rate});
    if (!phonemes.ok()) {
      results.back() = phonemes.status();
      continue;
    }
    for (auto& sentence : *phonemes) {
      std::vector<int64_t> ids = PiperPhonemeIds(sentence, voice_.phoneme_id_map).ids;
      sentences.push_back({i, std::move(sentence), std::move(ids)});
    }
  }
  // What each segment spoke, for its word timings.
  std::vector<std::vector<TimedPhoneme>> spoken(group.size());
  std::vector<bool> timed_exactly(group.size(), true);  // every sentence had its frames

  PiperScales scales;
  scales.noise = config_.noise_scale.value_or(voice_.noise_scale);
  scales.length =
      static_cast<float>(config_.length_scale.value_or(voice_.length_scale) / group.front()->speed);
  scales.noise_w = config_.noise_w.value_or(voice_.noise_w);
  const auto silence =
      static_cast<size_t>(std::lround(config_.sentence_silence_seconds * voice_.sample_rate));
  const size_t per_run = static_cast<size_t>(std::max(1, info_.max_batch_size));

  for (size_t start = 0; start < sentences.size(); start += per_run) {
    size_t end = std::min(sentences.size(), start + per_run);
    std::vector<std::vector<int64_t>> run;
    for (size_t k = start; k < end; ++k) run.push_back(sentences[k].ids);
    std::vector<std::vector<float>> frames;
    auto audio = model_->Infer(run, scales, sid->second, voice_.hop_length, &frames);
    for (size_t k = start; k < end; ++k) {
      absl::StatusOr<audio::PcmAudio>& result = results[sentences[k].segment];
      if (!result.ok()) continue;
      if (!audio.ok()) {
        result = audio.status();
        continue;
      }
      std::vector<float>& samples = (*audio)[k - start];
      const size_t item = k - start;
      const bool timed = item < frames.size() && !frames[item].empty();
      if (!timed) timed_exactly[sentences[k].segment] = false;
      AppendSpokenPhonemes(sentences[k].phonemes, voice_.phoneme_id_map,
                           timed ? &frames[item] : nullptr, samples.size(), voice_.hop_length,
                           spoken[sentences[k].segment]);
      spoken[sentences[k].segment].push_back({U' ', static_cast<double>(silence)});
      if (config_.normalize_audio) NormalizePeak(samples);
      // Silence after every sentence, the segment's last too: the engine cannot tell whether
      // another segment of the request follows, and a pause there is what a reader makes.
      samples.resize(samples.size() + silence, 0.0f);
      result->samples.insert(result->samples.end(), samples.begin(), samples.end());
    }
  }
  // Exact when the graph reports durations (piper1-gpl's alignment output; hop_length samples
  // per frame), else estimated by phoneme counts. Length scale (speed) is in the frames already.
  for (size_t i = 0; i < group.size(); ++i) {
    if (!results[i].ok()) continue;
    PhonemeWordTimings timings =
        WordTimingsFromPhonemes(group[i]->text, spoken[i], voice_.sample_rate, timed_exactly[i]);
    results[i]->words = std::move(timings.words);
    results[i]->timings = timings.kind;
  }
  return results;
}

}  // namespace voxserve::engine::onnx
