#include "engine/cosyvoice/cosyvoice_engine.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/numbers.h"
#include "core/error.h"
#include "engine/cosyvoice/bundle_check.h"
#include "engine/cosyvoice/cosyvoice_runner.h"
#include "engine/cosyvoice/llm_decoder.h"
#include "engine/cosyvoice/prompt_audio.h"
#include "engine/cosyvoice/special_tokens.h"
#include "engine/cosyvoice/warmup_prompt.h"
#include "spdlog/spdlog.h"

namespace voxserve::engine::cosyvoice {
namespace {

constexpr const char* kCosyVoiceKeys =
    "path, max_active, llm_capacity, max_prefills_per_step, streaming, stream_first_hop, "
    "stream_max_hop, flow_length_bucket, vocoder_threads, warmup_synthesis, "
    "llm_precision, llm_cuda_graphs, llm_attention";
// No seed in the APIs yet: one fixed seed, so the same request gives the same audio.
constexpr uint64_t kDefaultSeed = 1986;

absl::Status SetInt(const std::string& key, const std::string& value, int min, int max, int* out) {
  int parsed = 0;
  if (!absl::SimpleAtoi(value, &parsed) || parsed < min || parsed > max) {
    return core::InvalidArgument("cosyvoice option " + key + " = '" + value +
                                 "' must be a whole number in " + std::to_string(min) + ".." +
                                 std::to_string(max));
  }
  *out = parsed;
  return absl::OkStatus();
}

ProfileTensor Floats(std::vector<int64_t> shape, std::vector<float> values) {
  ProfileTensor t;
  t.dtype = ProfileTensor::DType::kFloat32;
  t.shape = std::move(shape);
  t.floats = std::move(values);
  return t;
}

}  // namespace

absl::Status CosyVoiceEngineConfig::Set(const std::string& key, const std::string& value) {
  if (key == "path") {
    bundle_path = value;
  } else if (key == "max_active") {
    return SetInt(key, value, 1, 256, &max_active);  // LlmDecoderConfig's range
  } else if (key == "llm_capacity") {
    return SetInt(key, value, 2, 65536, &llm_capacity);
  } else if (key == "max_prefills_per_step") {
    return SetInt(key, value, 1, 256, &max_prefills_per_step);  // <= max_active: Validate
  } else if (key == "stream_first_hop") {
    return SetInt(key, value, 0, 1000, &stream_first_hop);  // against the bundle: Create
  } else if (key == "stream_max_hop") {
    return SetInt(key, value, 0, 1000, &stream_max_hop);
  } else if (key == "flow_length_bucket") {
    return SetInt(key, value, 0, 1000, &flow_length_bucket);
  } else if (key == "vocoder_threads") {
    return SetInt(key, value, 1, 64, &vocoder_threads);  // VocoderPool's range
  } else if (key == "llm_precision" || key == "llm_cuda_graphs" || key == "llm_attention") {
    (key == "llm_precision"     ? llm_runtime.precision
     : key == "llm_cuda_graphs" ? llm_runtime.cuda_graphs
                                : llm_runtime.attention) = value;
    return llm_runtime.Validate();  // names the option and its allowed values
  } else if (key == "warmup_synthesis") {
    if (value != "auto" && value != "on" && value != "off") {
      return core::InvalidArgument("cosyvoice option warmup_synthesis = '" + value +
                                   "' must be auto, on or off");
    }
    warmup_synthesis = value;
  } else if (key == "streaming") {
    if (value != "true" && value != "false") {
      return core::InvalidArgument("cosyvoice option streaming = '" + value +
                                   "' must be true or false");
    }
    streaming = value == "true";
  } else if (absl::Status status = session.Set(key, value); !absl::IsNotFound(status)) {
    return status;
  } else {
    return core::InvalidArgument("unknown cosyvoice option '" + key +
                                 "' (allowed: " + kCosyVoiceKeys + ", " +
                                 onnx::OnnxSessionConfig::KnownKeys() + ")");
  }
  return absl::OkStatus();
}

absl::Status CosyVoiceEngineConfig::Validate() const {
  if (bundle_path.empty()) {
    return core::InvalidArgument(
        "options.path must name a CosyVoice bundle directory "
        "(tools/cosyvoice_export/export.py writes one)");
  }
  if (max_prefills_per_step > max_active) {
    return core::InvalidArgument(
        "cosyvoice option max_prefills_per_step = " + std::to_string(max_prefills_per_step) +
        " must not exceed max_active = " + std::to_string(max_active));
  }
  if (absl::Status s = llm_runtime.Validate(); !s.ok()) {
    return core::InvalidArgument("cosyvoice option " + std::string(s.message()));
  }
  return session.Validate();
}

absl::StatusOr<std::unique_ptr<CosyVoiceEngine>> CosyVoiceEngine::Create(
    const CosyVoiceEngineConfig& config) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  auto manifest = LoadCheckedBundle(config.bundle_path);
  if (!manifest.ok()) return manifest.status();
  std::unique_ptr<CosyVoiceEngine> engine(new CosyVoiceEngine());
  engine->config_ = config;
  engine->manifest_ = std::move(*manifest);
  auto encoder = PromptEncoder::Create(engine->manifest_, config.bundle_path, config.session);
  if (!encoder.ok()) return encoder.status();
  engine->prompt_encoder_ = std::move(*encoder);
  // Upstream's CosyVoice3 tokenizer adds its own special tokens after CosyVoice2's
  // (tokenizer.py:277-308): the ids of CosyVoice2's stay where they were.
  auto tokenizer = LoadTokenizer(config.bundle_path + "/" + engine->manifest_.tokenizer_dir,
                                 engine->manifest_.family == Family::kCosyVoice3
                                     ? TokenizerVersion::kCosyVoice3
                                     : TokenizerVersion::kCosyVoice2);
  if (!tokenizer.ok()) {
    return core::InvalidArgument("bundle " + config.bundle_path +
                                 ": tokenizer: " + std::string(tokenizer.status().message()));
  }
  engine->tokenizer_ = std::move(*tokenizer);
  auto frontend = TextFrontend::Create(engine->tokenizer_.get());
  if (!frontend.ok()) return frontend.status();
  engine->text_frontend_ = std::move(*frontend);
  auto flow = FlowMatcher::Create(engine->manifest_, config.bundle_path, config.session,
                                  config.flow_length_bucket);
  if (!flow.ok()) return flow.status();
  engine->flow_ = std::move(*flow);
  if (config.streaming && !engine->flow_->has_stream_encoder()) {
    // An older export: the hops then run the non-streaming encoder over each prefix.
    spdlog::warn(
        "cosyvoice bundle {} has no flow_encoder_stream graph: streaming hops approximate "
        "upstream's chunk-causal flow (re-export the bundle for the exact one)",
        config.bundle_path);
  }
  auto hift = HiftVocoder::Create(engine->manifest_, config.bundle_path, config.session);
  if (!hift.ok()) return hift.status();
  engine->hift_ = std::move(*hift);
  if (absl::Status schedule = engine->CheckHopSchedule(); !schedule.ok()) return schedule;
  auto vocoder = VocoderPool::Create(config.vocoder_threads, engine->flow_.get());
  if (!vocoder.ok()) return vocoder.status();
  engine->vocoder_ = std::move(*vocoder);
  engine->info_.cloned_voices.family = std::string(FamilyName(engine->manifest_.family));
  engine->info_.cloned_voices.sample_rate = engine->manifest_.audio.sample_rate;
  // Sentence rules only (the service splits by them); CosyVoice2 itself is multilingual.
  engine->info_.cloned_voices.language = "en";
  engine->info_.id = config.model_id;
  engine->info_.engine = "cosyvoice";
  engine->info_.max_batch_size = 1;
  engine->info_.batch_requires_same_voice = false;
  return engine;
}

bool CosyVoiceEngine::AcceptsVoice(std::string_view) const { return false; }

absl::StatusOr<std::shared_ptr<const VoiceProfile>> CosyVoiceEngine::CloneWarmupVoice() {
  const std::string wav = SyntheticPromptWav();
  auto profile =
      CloneVoice({{reinterpret_cast<const uint8_t*>(wav.data()), wav.size()}, kWarmupTranscript});
  if (!profile.ok()) {
    return absl::Status(profile.status().code(),
                        "warm-up: cloning a voice from a synthetic prompt failed: " +
                            std::string(profile.status().message()));
  }
  return std::make_shared<const VoiceProfile>(*std::move(profile));
}

absl::Status CosyVoiceEngine::WarmupCloning() {
  const auto started = std::chrono::steady_clock::now();
  auto voice = CloneWarmupVoice();
  if (!voice.ok()) return voice.status();
  spdlog::info("model {} warm-up of cloning: a voice cloned from a synthetic prompt, {:.0f} ms",
               config_.model_id,
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                   .count());
  return absl::OkStatus();
}

absl::Status CosyVoiceEngine::Warmup(std::span<const std::string> texts) {
  if (texts.empty()) return absl::OkStatus();
  const auto started = std::chrono::steady_clock::now();
  auto cloned = CloneWarmupVoice();
  if (!cloned.ok()) return cloned.status();
  std::shared_ptr<const VoiceProfile> voice = *std::move(cloned);
  WarmupReport report;
  // On the CPU a first request measured no slower without it, and speaking max_active segments
  // costs a minute of startup at real size (bench/RESULTS.md, "CosyVoice warm-up"): there only
  // the prompt encoders run, unless asked.
  const bool speak =
      config_.warmup_synthesis == "on" ||
      (config_.warmup_synthesis == "auto" && config_.session.execution_provider == "cuda");
  if (!speak) {
    report.milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    last_warmup_ = report;
    spdlog::info(
        "model {} warm-up: a voice cloned from a synthetic prompt, {:.0f} ms (no "
        "synthesis: warmup_synthesis {} on {})",
        config_.model_id, report.milliseconds, config_.warmup_synthesis,
        config_.session.execution_provider);
    return absl::OkStatus();
  }
  std::vector<SegmentInput> batch;
  for (const std::string& text : texts) {
    for (int k = 0; k < config_.max_active; ++k) {
      SegmentInput segment{text, "warm-up", 1.0, voice};
      segment.seed = static_cast<uint64_t>(k);
      batch.push_back(segment);
    }
  }
  auto runner = CreateRunner();
  if (!runner.ok()) return runner.status();
  std::vector<absl::StatusOr<audio::PcmAudio>> results =
      SynthesizeByStepping(**runner, batch, config_.max_active);
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].ok()) {
      return absl::Status(results[i].status().code(),
                          "warm-up: speaking '" + std::string(batch[i].text) +
                              "' failed: " + std::string(results[i].status().message()));
    }
    ++report.segments;
    if (results[i]->sample_rate > 0) {
      report.audio_seconds +=
          static_cast<double>(results[i]->samples.size()) / results[i]->sample_rate;
    }
  }
  report.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  last_warmup_ = report;
  spdlog::info(
      "model {} warm-up: a voice cloned from a synthetic prompt, {} segment(s) ({} at once), "
      "{:.2f} s of audio, {:.0f} ms",
      config_.model_id, report.segments, config_.max_active, report.audio_seconds,
      report.milliseconds);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<StreamRunner>> CosyVoiceEngine::CreateRunner() {
  LlmDecoderConfig llm;
  llm.max_active = config_.max_active;
  llm.capacity = config_.llm_capacity;
  llm.max_prefills_per_step = config_.max_prefills_per_step;
  llm.runtime = config_.llm_runtime;
  llm.session = config_.session;
  auto decoder = LlmDecoder::Create(manifest_, config_.bundle_path, llm);
  if (!decoder.ok()) return decoder.status();
  GenerationStages stages;
  stages.manifest = &manifest_;
  stages.text = text_frontend_.get();
  stages.tokenizer = tokenizer_.get();
  stages.flow = flow_.get();
  stages.hift = hift_.get();
  stages.vocoder = vocoder_.get();
  stages.family = info_.cloned_voices.family;
  stages.streaming = config_.streaming;
  stages.first_hop = static_cast<size_t>(config_.stream_first_hop);
  stages.max_hop = static_cast<size_t>(config_.stream_max_hop);
  stages.seed = kDefaultSeed;
  auto runner = CosyVoiceRunner::Create(stages, *std::move(decoder), config_.max_active);
  if (!runner.ok()) return runner.status();
  return std::unique_ptr<StreamRunner>(*std::move(runner));
}

absl::Status CosyVoiceEngine::CheckHopSchedule() const {
  const BundleManifest::Streaming& s = manifest_.streaming;
  // A hop's HiFT holds mel frames back: CosyVoice2's mel_cache_len for its cross-fade,
  // CosyVoice3's its lookaheads and the frame upstream drops (CausalHiftStream::Push). A first
  // hop must make more.
  const int64_t held_back =
      hift_->causal() ? hift_->f0_lookahead() + hift_->conv_pre_lookahead() + 1 : s.mel_cache_len;
  const auto min_first = static_cast<int>(held_back / manifest_.tokens.token_mel_ratio + 1);
  if (config_.stream_first_hop != 0 && config_.stream_first_hop < min_first) {
    return core::InvalidArgument(
        "cosyvoice option stream_first_hop = " + std::to_string(config_.stream_first_hop) +
        " must be 0 or at least " + std::to_string(min_first) + " tokens (HiFT holds back " +
        std::to_string(held_back) + " mel frames)");
  }
  const int first = config_.stream_first_hop > 0 ? config_.stream_first_hop : s.token_hop_len;
  if (config_.stream_max_hop != 0 && config_.stream_max_hop < first) {
    return core::InvalidArgument(
        "cosyvoice option stream_max_hop = " + std::to_string(config_.stream_max_hop) +
        " must be 0 or at least the first hop (" + std::to_string(first) + " tokens)");
  }
  return absl::OkStatus();
}

absl::StatusOr<VoiceProfile> CosyVoiceEngine::CloneVoice(const VoicePrompt& prompt) {
  if (prompt.audio.empty()) return core::InvalidArgument("the prompt recording is empty");
  PromptAudioOptions options;
  options.max_seconds = manifest_.audio.prompt_max_seconds;
  options.prompt_mel_fmax = manifest_.audio.prompt_mel_fmax;
  auto audio = PreparePromptAudio(prompt.audio, options);
  if (!audio.ok()) return audio.status();
  // The transcript first: a bad one fails before the graphs run.
  auto normalized = text_frontend_->NormalizeWhole(prompt.transcript);
  if (!normalized.ok()) return normalized.status();
  auto transcript_tokens = tokenizer_->Encode(*normalized);
  if (!transcript_tokens.ok()) return transcript_tokens.status();

  PromptFeatures features;
  features.fbank = std::move(audio->speaker_fbank.values);
  features.whisper_mel = std::move(audio->speech_tokenizer_mel.values);
  features.prompt_mel = std::move(audio->prompt_mel.values);
  features.seconds = audio->duration_seconds;
  auto profile = ProfileFromFeatures(features);
  if (!profile.ok()) return profile.status();
  ProfileTensor ids;
  ids.dtype = ProfileTensor::DType::kInt32;
  ids.shape = {static_cast<int64_t>(transcript_tokens->size())};
  ids.ints = std::move(*transcript_tokens);
  profile->tensors["transcript_tokens"] = std::move(ids);
  profile->attributes["transcript"] = std::string(prompt.transcript);
  return profile;
}

absl::StatusOr<VoiceProfile> CosyVoiceEngine::ProfileFromFeatures(
    const PromptFeatures& features) const {
  const int bins = manifest_.audio.mel_bins;
  if (features.prompt_mel.empty() || features.prompt_mel.size() % static_cast<size_t>(bins)) {
    return core::InvalidArgument("prompt mel is not a non-empty [frames, " + std::to_string(bins) +
                                 "] array");
  }
  if (features.seconds > manifest_.audio.prompt_max_seconds) {
    return absl::OutOfRangeError("the prompt recording is " + std::to_string(features.seconds) +
                                 " s long; the limit is " +
                                 std::to_string(manifest_.audio.prompt_max_seconds) + " s");
  }
  auto embedding = prompt_encoder_->SpeakerEmbedding(features.fbank);
  if (!embedding.ok()) return embedding.status();
  auto tokens = prompt_encoder_->SpeechTokens(features.whisper_mel);
  if (!tokens.ok()) return tokens.status();
  const int ratio = manifest_.tokens.token_mel_ratio;
  size_t mel_frames = features.prompt_mel.size() / static_cast<size_t>(bins);
  size_t token_len = std::min(mel_frames / static_cast<size_t>(ratio), tokens->size());
  if (token_len == 0) {
    return core::InvalidArgument("the prompt recording is too short to hold any speech token");
  }
  VoiceProfile profile;
  profile.family = std::string(FamilyName(manifest_.family));
  profile.prompt_seconds = features.seconds;
  const auto embedding_dim = static_cast<int64_t>(embedding->size());  // before the move below
  profile.tensors["speaker_embedding"] = Floats({embedding_dim}, std::move(*embedding));
  ProfileTensor ids;
  ids.dtype = ProfileTensor::DType::kInt32;
  ids.shape = {static_cast<int64_t>(token_len)};
  ids.ints.assign(tokens->begin(), tokens->begin() + static_cast<std::ptrdiff_t>(token_len));
  profile.tensors["prompt_speech_tokens"] = std::move(ids);
  size_t keep = token_len * static_cast<size_t>(ratio) * static_cast<size_t>(bins);
  profile.tensors["prompt_mel"] =
      Floats({static_cast<int64_t>(token_len) * ratio, bins},
             std::vector<float>(features.prompt_mel.begin(),
                                features.prompt_mel.begin() + static_cast<std::ptrdiff_t>(keep)));
  return profile;
}

}  // namespace voxserve::engine::cosyvoice
