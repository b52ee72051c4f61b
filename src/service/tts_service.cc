#include "service/tts_service.h"

#include <algorithm>
#include <boost/asio/strand.hpp>
#include <optional>
#include <thread>

#include "core/error.h"
#include "service/request_checks.h"
#include "service/response_cache_key.h"
#include "service/ssml_plan.h"
#include "spdlog/spdlog.h"
#include "text/lexicon/lexicon.h"
#include "text/normalize/text_normalizer.h"
#include "text/speakable_text.h"
#include "text/utf8.h"

namespace voxserve::service {
namespace {

// voice_mode is about a cloned voice's prompt; a built-in voice has none, so asking for a mode
// there is a mistake worth naming (instructions, by contrast, are accepted and ignored).
absl::Status CheckVoiceModeTarget(const SynthesisRequest& request) {
  if (request.voice_profile || request.voice_mode.empty()) return absl::OkStatus();
  return core::InvalidArgument(
      "voice_mode applies to cloned voices only (POST /v1/audio/voices); " +
          core::Quoted(request.voice) + " is not one",
      "voice_mode", "invalid_voice_mode");
}

// A key limited to some models names them by id or by the name the client used (an alias).
absl::Status CheckModelAllowed(const std::vector<std::string>& allowed_models,
                               const std::string& model_id, std::string_view asked) {
  if (allowed_models.empty() ||
      std::find(allowed_models.begin(), allowed_models.end(), model_id) != allowed_models.end() ||
      std::find(allowed_models.begin(), allowed_models.end(), asked) != allowed_models.end()) {
    return absl::OkStatus();
  }
  return core::PermissionDenied("this API key may not use model '" + model_id + "'", "model",
                                "model_not_allowed");
}

// ICU sentence rules by language: Chinese voices ("cmn", "yue") use "zh", others their primary
// subtag ("en-us" → "en").
std::string LocaleForLanguage(const std::string& language) {
  std::string primary = language.substr(0, language.find('-'));
  if (primary == "cmn" || primary == "yue" || primary == "zh" || primary == "hak") return "zh";
  return primary.empty() ? "en" : primary;
}

std::string ReasonLabel(const absl::Status& status) {
  switch (core::DetailOf(status).reason) {
    case core::ErrorReason::kQueueFull:
      return "queue_full";
    case core::ErrorReason::kDraining:
      return "draining";
    default:
      break;
  }
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      return "not_found";
    case absl::StatusCode::kPermissionDenied:
      return "forbidden";
    case absl::StatusCode::kUnavailable:
      return "unavailable";
    default:
      return "invalid";
  }
}

// The engines whose front ends leave dates, times, currency and units as characters: Piper and
// Kokoro phonemize with espeak-ng (digits yes, "2026-12-02", "$12.50" or "kg" no), CosyVoice's
// tokenizer reads characters (and its own rules no Chinese numbers). espeak-ng itself, and the
// test engines, get the text as it came.
bool EngineNeedsNormalizedText(std::string_view engine) {
  return engine == "piper" || engine == "kokoro" || engine == "cosyvoice";
}

// The model's engine and options, in the order of their (sorted) map.
std::string ModelFingerprint(const engine::EngineSpec& spec) {
  std::string fingerprint = spec.engine + '\n' + spec.default_voice;
  for (const auto& [key, value] : spec.options) fingerprint += '\n' + key + '=' + value;
  return fingerprint;
}

}  // namespace

absl::StatusOr<const text::SentenceSplitter*> TtsService::SplitterFor(const std::string& language) {
  std::string locale = LocaleForLanguage(language);
  std::lock_guard lock(splitters_mutex_);
  if (auto it = splitters_.find(locale); it != splitters_.end()) return it->second.get();
  auto created = text::SentenceSplitter::Create(locale);
  if (!created.ok()) {
    // A locale ICU cannot read (an engine's odd language tag): English rules still split at
    // full stops, which most scripts use. Said once per locale, as the result is kept.
    spdlog::warn("sentence rules for '{}' (voice language '{}') unavailable, using English: {}",
                 locale, language, std::string(created.status().message()));
    auto english = text::SentenceSplitter::Create("en");
    if (!english.ok()) {
      return core::Internal("no sentence rules for '" + locale +
                            "' nor for 'en': " + std::string(english.status().message()));
    }
    created = std::move(english);
  }
  const text::SentenceSplitter* splitter = created->get();
  splitters_.emplace(locale, *std::move(created));
  return splitter;
}

std::vector<VoiceListing> TtsService::ListVoices(const VoiceFilter& filter) const {
  const std::string model_id = filter.model.empty() ? "" : catalog_->ModelIdFor(filter.model);
  std::vector<VoiceListing> voices;
  for (VoiceListing& voice : catalog_->List()) {
    if (!model_id.empty() && voice.model != model_id) continue;
    if (!LanguageMatches(voice.language, filter.language)) continue;
    voices.push_back(std::move(voice));
  }
  for (VoiceListing& voice : ClonedVoiceListings()) {
    if (!model_id.empty() && voice.model != model_id) continue;
    if (!LanguageMatches(voice.language, filter.language)) continue;
    voices.push_back(std::move(voice));
  }
  return voices;
}

// A cloned voice speaks in its model's default voice's language and rate (the prompt's own
// language is the engine's business, CosyVoice being multilingual).
std::vector<VoiceListing> TtsService::ClonedVoiceListings() const {
  std::vector<VoiceListing> listings;
  if (!voices_) return listings;
  for (const store::StoredVoice& stored : voices_->List()) {
    for (const auto& model : models_) {
      if (model->id() != stored.metadata.model || model->state() != ModelState::kReady) continue;
      const engine::ModelInfo& info = model->engine().info();
      VoiceListing listing;
      listing.id = stored.metadata.id;
      listing.model = model->id();
      listing.engine = info.engine;
      listing.language = info.cloned_voices.language;
      listing.sample_rate = info.cloned_voices.sample_rate;
      for (const engine::VoiceInfo& voice : info.voices) {
        if (voice.id == info.default_voice || listing.sample_rate == 0) {
          listing.language = voice.language;
          listing.sample_rate = voice.sample_rate;
        }
      }
      listing.description = "cloned voice '" + stored.metadata.name + "'";
      listing.cloned = true;
      listing.name = stored.metadata.name;
      listings.push_back(std::move(listing));
    }
  }
  return listings;
}

absl::Status TtsService::ResolveClonedVoice(SynthesisRequest& request) {
  if (request.voice_profile) {
    // An inline prompt, cloned by SynthesizeWithPrompt with request.model's cloner.
    const ModelHost* host = nullptr;
    for (const auto& model : models_) {
      if (model->id() == request.model) host = model.get();
    }
    if (host == nullptr || host->state() != ModelState::kReady) {
      return core::WithModel(
          core::MakeError(absl::StatusCode::kUnavailable,
                          "model '" + request.model + "' is not ready", "model", "model_not_ready"),
          request.model);
    }
    if (host->engine().info().cloned_voices.family != request.voice_profile->family) {
      return core::WithModel(
          absl::UnimplementedError("model '" + request.model +
                                   "' cannot synthesize with the ref_audio prompt it cloned "
                                   "(profile family '" +
                                   request.voice_profile->family + "')"),
          request.model);
    }
    auto mode = ResolveVoiceMode(request, !request.prompt_text.empty());
    if (!mode.ok()) return core::WithModel(mode.status(), request.model);
    request.resolved_voice_mode = *mode;
    return absl::OkStatus();
  }
  if (!voices_ || !voices_->enabled() || request.voice.empty()) return absl::OkStatus();
  std::optional<store::StoredVoice> stored;
  if (auto by_id = voices_->Get(request.voice); by_id.ok()) {
    // An id is unique across models: with no specific model named, it picks its own.
    const bool generic = request.model.empty() || VoiceCatalog::IsOpenAiModelName(request.model);
    if (generic || by_id->metadata.model == request.model) stored = *by_id;
  }
  if (!stored) {
    auto model = catalog_->FindModel(request.model);
    if (!model.ok()) return absl::OkStatus();  // Resolve reports the unknown model
    stored = voices_->Find((*model)->id(), request.voice);
  }
  if (!stored) return absl::OkStatus();
  auto profile = voices_->LoadProfile(stored->metadata.id);
  if (!profile.ok()) return core::WithModel(profile.status(), stored->metadata.model);
  const ModelHost* host = nullptr;
  for (const auto& model : models_) {
    if (model->id() == stored->metadata.model) host = model.get();
  }
  if (host == nullptr || host->state() != ModelState::kReady) {
    return core::WithModel(
        core::MakeError(absl::StatusCode::kUnavailable,
                        "model '" + stored->metadata.model + "' of cloned voice '" +
                            stored->metadata.id + "' is not ready",
                        "model", "model_not_ready"),
        stored->metadata.model);
  }
  if (host->engine().info().cloned_voices.family != (*profile)->family) {
    return core::WithModel(
        absl::UnimplementedError("model '" + stored->metadata.model +
                                 "' cannot synthesize with cloned voice '" + stored->metadata.id +
                                 "' (profile family '" + (*profile)->family +
                                 "'): its engine speaks " +
                                 (host->engine().info().cloned_voices.family.empty()
                                      ? std::string("no cloned voices")
                                      : "'" + host->engine().info().cloned_voices.family +
                                            "' voices; register the voice again for this model")),
        stored->metadata.model);
  }
  auto mode = ResolveVoiceMode(request, !stored->metadata.transcript.empty());
  if (!mode.ok()) return core::WithModel(mode.status(), stored->metadata.model);
  request.cloned_voice_id = stored->metadata.id;
  request.voice_profile = *std::move(profile);
  request.resolved_voice_mode = *mode;
  return absl::OkStatus();
}

absl::StatusOr<ResolvedVoice> TtsService::ResolveVoice(const SynthesisRequest& request) const {
  if (!request.voice_profile) return catalog_->Resolve(request.model, request.voice);
  if (request.cloned_voice_id.empty()) {  // an inline prompt: its model is request.model
    for (const auto& model : models_) {
      if (model->id() != request.model) continue;
      const engine::ModelInfo::ClonedVoices& cloned = model->engine().info().cloned_voices;
      return ResolvedVoice{model.get(), "ref_audio", cloned.language, cloned.sample_rate};
    }
    return core::NotFound("model '" + request.model + "' is not configured", "model",
                          "model_not_found");
  }
  auto stored = voices_->Get(request.cloned_voice_id);
  if (!stored.ok()) return stored.status();
  for (const auto& model : models_) {
    if (model->id() != stored->metadata.model) continue;
    const engine::ModelInfo::ClonedVoices& cloned = model->engine().info().cloned_voices;
    return ResolvedVoice{model.get(), stored->metadata.id, cloned.language, cloned.sample_rate};
  }
  return core::NotFound("model '" + stored->metadata.model + "' is not configured", "model",
                        "model_not_found");
}

// The one place a refused synthesis request is counted. `model` is empty where none was
// resolved; an error raised after resolving (e.g. the voice catalog's voice_not_found) carries
// its model (core::WithModel).
absl::Status TtsService::Reject(const std::string& model, const absl::Status& status) {
  // The label is a configured model's id or "unknown", never the client's string as is: one
  // series per made-up model name would grow the scrape without bound.
  std::string label = model.empty() ? core::ModelOf(status) : model;
  if (!label.empty() && std::none_of(models_.begin(), models_.end(),
                                     [&](const auto& host) { return host->id() == label; })) {
    label = "unknown";
  }
  metrics_.rejected.WithLabels({label, ReasonLabel(status)}).Increment();
  return status;
}

absl::Status TtsService::RejectUnparsed(const absl::Status& status) { return Reject("", status); }

absl::StatusOr<const text::SentenceSplitter*> TtsService::SplitterForVoice(
    const SynthesisRequest& request) {
  if (draining_.load()) return Reject("", core::Draining("server is shutting down"));
  SynthesisRequest cloned;  // a stream naming a cloned voice gets the same answer as Synthesize
  cloned.model = request.model;
  cloned.voice = request.voice;
  cloned.voice_mode = request.voice_mode;
  cloned.instructions = request.instructions;
  const std::vector<std::string>& allowed_models = request.allowed_models;
  const std::string& model = request.model;
  if (absl::Status status = ResolveClonedVoice(cloned); !status.ok()) return Reject("", status);
  auto resolved = ResolveVoice(cloned);
  if (!resolved.ok()) return Reject("", resolved.status());
  const std::string& model_id = resolved->model->id();
  if (absl::Status allowed = CheckModelAllowed(allowed_models, model_id, model); !allowed.ok()) {
    return Reject(model_id, allowed);
  }
  // A stream naming an unknown dictionary is refused before its first sentence.
  if (auto lexicons = dictionaries_->ForRequest(request.dictionaries, model_id); !lexicons.ok()) {
    return Reject(model_id, lexicons.status());
  }
  if (absl::Status mode = CheckVoiceModeTarget(cloned); !mode.ok()) return Reject(model_id, mode);
  auto splitter = SplitterFor(resolved->language);
  if (!splitter.ok()) return Reject(model_id, splitter.status());
  return *splitter;
}

absl::StatusOr<std::shared_ptr<SynthesisJob>> TtsService::Synthesize(
    SynthesisRequest request, std::shared_ptr<SynthesisSink> sink) {
  const std::string& field = request.text_field;
  if (draining_.load()) return Reject("", core::Draining("server is shutting down"));
  text::InputLimits limits = config_.limits;
  if (request.stream_sentence) limits.max_input_chars = limits.max_stream_input_chars;
  if (absl::Status status = text::CheckInput(request.text, limits, field); !status.ok()) {
    return Reject("", status);
  }
  if (absl::Status status = CheckRequestOptions(request, config_); !status.ok()) {
    return Reject("", status);
  }
  if (absl::Status status = ResolveClonedVoice(request); !status.ok()) return Reject("", status);
  auto voice = ResolveVoice(request);
  if (!voice.ok()) return Reject("", voice.status());
  const std::string& model_id = voice->model->id();
  if (absl::Status allowed = CheckModelAllowed(request.allowed_models, model_id, request.model);
      !allowed.ok()) {
    return Reject(model_id, allowed);
  }
  if (absl::Status mode = CheckVoiceModeTarget(request); !mode.ok()) return Reject(model_id, mode);

  auto timeout = std::chrono::milliseconds(config_.default_timeout_ms);
  if (request.timeout) timeout = *request.timeout;  // in range: CheckRequestOptions
  request.context.deadline = request.context.received_at + timeout;

  auto splitter = SplitterFor(voice->language);
  if (!splitter.ok()) return Reject(model_id, splitter.status());
  JobPlan plan;
  auto ssml = IsSsmlRequest(request);
  if (!ssml.ok()) return Reject(model_id, ssml.status());
  auto lexicons = dictionaries_->ForRequest(request.dictionaries, model_id);
  if (!lexicons.ok()) return Reject(model_id, lexicons.status());
  if (*ssml || !lexicons->empty()) {
    if (absl::Status status = PlanItems(request, *ssml, *voice, **splitter, *lexicons, plan);
        !status.ok()) {
      return Reject(model_id, status);
    }
  } else {
    const std::string speech = SpeechText(request.text, *voice, request.normalize_text);
    for (std::string& segment :
         (*splitter)->Split(speech, static_cast<size_t>(config_.max_segment_chars))) {
      // A sentence of only punctuation or invisible characters ("...", a lone zero-width
      // space) would cost an engine call for silence.
      if (text::HasSpeakableCharacters(segment)) plan.segments.push_back(std::move(segment));
    }
  }
  if (plan.segments.empty()) {
    return Reject(model_id,
                  core::InvalidArgument(field + " has nothing to speak", field, "empty_input"));
  }
  auto encoder = audio::CreateEncoder(
      {request.format, voice->sample_rate, request.streaming, request.sample_rate});
  if (!encoder.ok()) return Reject(model_id, encoder.status());

  plan.voice = *voice;
  plan.voice_profile = std::move(request.voice_profile);
  plan.seed = request.seed;
  plan.voice_mode = request.resolved_voice_mode;
  plan.instructions = std::move(request.instructions);
  plan.speed = request.speed;
  plan.streaming = request.streaming;
  plan.continues_stream = request.continues_stream;
  plan.input_chars = text::CountCodePoints(request.text);
  plan.pipeline_depth = config_.pipeline_depth;
  plan.stream_buffer_bytes = config_.stream_buffer_bytes;
  const bool whole_file = request.whole_file.value_or(!request.streaming);
  plan.max_audio_seconds =
      whole_file ? config_.max_audio_seconds : config_.max_stream_audio_seconds;
  plan.audio_limit_key =
      whole_file ? "limits.max_audio_seconds" : "limits.max_stream_audio_seconds";
  plan.audio_seconds_before = request.audio_seconds_before;
  plan.context = std::move(request.context);
  // CreateEncoder above has checked the requested rate.
  int output_rate =
      *audio::ResolveOutputSampleRate(request.format, voice->sample_rate, request.sample_rate);
  UseResponseCache(request, *lexicons, output_rate, plan);

  {
    std::lock_guard lock(in_flight_mutex_);
    ++in_flight_;
    metrics_.in_flight.Set(static_cast<double>(in_flight_));
  }
  auto job = std::make_shared<SynthesisJob>(std::move(plan), std::move(*encoder), output_rate,
                                            std::move(sink), boost::asio::make_strand(encode_pool_),
                                            metrics_, [this] { OnJobFinished(); });
  if (absl::Status status = job->Start(); !status.ok()) {
    OnJobFinished();
    return Reject(model_id, status);
  }
  return job;
}

std::string TtsService::SpeechText(const std::string& text, const ResolvedVoice& voice,
                                   std::optional<bool> request_normalize) const {
  // Engines read C strings: a NUL would end the text there (text/speakable_text.h).
  std::string speech = text::ControlCharactersAsSpaces(text);
  const std::string& engine = voice.model->config().engine.engine;
  if (!request_normalize.value_or(config_.normalize_text && EngineNeedsNormalizedText(engine))) {
    return speech;
  }
  // CosyVoice speaks every language with one voice: the text says which rules apply.
  const text::normalize::NormalizationLanguage language =
      engine == "cosyvoice" ? text::normalize::NormalizationLanguageOfText(speech)
                            : text::normalize::NormalizationLanguageForVoice(voice.language);
  return text::normalize::NormalizeText(speech, language);
}

absl::Status TtsService::PlanItems(const SynthesisRequest& request, bool ssml,
                                   const ResolvedVoice& voice,
                                   const text::SentenceSplitter& splitter,
                                   const RequestLexicons& lexicons, JobPlan& plan) const {
  std::vector<text::ssml::SpeechItem> items(1);
  if (ssml) {
    text::ssml::ParseOptions options;
    options.field = request.text_field;
    options.language = voice.language.substr(0, voice.language.find('-'));
    auto parsed = text::ssml::ParseSsml(request.text, options);
    if (!parsed.ok()) return parsed.status();
    items = *std::move(parsed);
  } else {
    items[0].text = request.text;
  }
  const engine::ModelInfo& info = voice.model->engine().info();
  if (!lexicons.empty()) {
    std::vector<const text::lexicon::Lexicon*> in_order;
    for (const auto& lexicon : lexicons.lexicons) in_order.push_back(lexicon.get());
    // An IPA entry becomes a phoneme item where the engine speaks IPA; elsewhere its alias (or
    // the word as written) is read.
    items = text::lexicon::Apply(items, in_order, info.speaks_ipa);
  }
  SsmlPlanContext context;
  context.splitter = &splitter;
  context.max_segment_chars = static_cast<size_t>(config_.max_segment_chars);
  context.request_speed = request.speed;
  context.field = request.text_field;
  context.engine = info.engine;
  context.speaks_ipa = info.speaks_ipa;
  context.controls_pitch = info.controls_pitch;
  context.resolve_voice = [&](const std::string& name) -> absl::StatusOr<std::string> {
    auto other = catalog_->Resolve(voice.model->id(), name);
    if (!other.ok() || other->model != voice.model) {
      return core::InvalidArgument("SSML <voice name=" + core::Quoted(name) + ">: model '" +
                                       voice.model->id() +
                                       "' has no such voice (GET /v1/voices lists the voices)",
                                   request.text_field, "voice_not_found");
    }
    if (other->sample_rate != voice.sample_rate) {
      return core::InvalidArgument("SSML <voice name=" + core::Quoted(name) + ">: its " +
                                       std::to_string(other->sample_rate) +
                                       " Hz differ from the request voice's " +
                                       std::to_string(voice.sample_rate) + " Hz",
                                   request.text_field, "ssml_unsupported");
    }
    return other->voice_id;
  };
  context.speech_text = [&](const std::string& text) {
    return SpeechText(text, voice, request.normalize_text);
  };
  auto planned = PlanSsmlSegments(items, context);
  if (!planned.ok()) return planned.status();
  plan.segments = std::move(planned->texts);
  plan.styles = std::move(planned->styles);
  return absl::OkStatus();
}

void TtsService::UseResponseCache(const SynthesisRequest& request, const RequestLexicons& lexicons,
                                  int output_sample_rate, JobPlan& plan) {
  if (!cache_->enabled()) return;
  plan.cache_result = CacheResult::kBypass;
  if (request.cache_policy == CachePolicy::kBypass) return;
  // An inline prompt (ref_audio) is this request's alone: nothing names it again.
  if (plan.voice_profile && request.cloned_voice_id.empty()) return;
  const engine::EngineSpec& spec = plan.voice.model->config().engine;
  if (!EngineOutputIsDeterministic(spec.engine, plan.seed)) return;

  ResponseCacheKey key;
  key.model_id = plan.voice.model->id();
  key.model_fingerprint = ModelFingerprint(spec);
  key.voice_id = plan.voice.voice_id;
  if (!request.cloned_voice_id.empty()) {
    auto stored = voices_->Get(request.cloned_voice_id);
    if (!stored.ok()) return;  // deleted meanwhile: the synthesis will say so, or not
    key.voice_version = std::to_string(stored->metadata.created_at);
    plan.cache_tags.push_back(ClonedVoiceCacheTag(request.cloned_voice_id));
  }
  if (plan.voice_mode) key.voice_mode = std::to_string(static_cast<int>(*plan.voice_mode));
  key.instructions = plan.instructions;
  key.segments = plan.segments;
  key.markup_version =
      request.markup_version + lexicons.fingerprint + StylesFingerprint(plan.styles);
  plan.cache_tags.insert(plan.cache_tags.end(), lexicons.cache_tags.begin(),
                         lexicons.cache_tags.end());
  key.speed = plan.speed;
  key.format = request.format;
  key.sample_rate = output_sample_rate;
  key.streaming = plan.streaming;
  key.seed = plan.seed;
  plan.cache_key = key.Serialize();
  plan.cache_generation = cache_->Generation();

  if (request.cache_policy == CachePolicy::kUse) {
    std::shared_ptr<const CachedResponse> hit = cache_->Lookup(plan.cache_key, key.model_id);
    // A stream's earlier sentences may leave too little of its audio bound for this one: the
    // engine's path reports that as it always does.
    if (hit && (plan.max_audio_seconds <= 0 ||
                plan.audio_seconds_before + hit->summary.audio_seconds <= plan.max_audio_seconds)) {
      plan.replay = std::move(hit);
      plan.cache_result = CacheResult::kHit;
      return;
    }
    plan.cache_result = CacheResult::kMiss;
  }
  plan.cache = cache_.get();
}

std::shared_ptr<PendingJob> TtsService::SynthesizeWithPrompt(SynthesisRequest request,
                                                             std::shared_ptr<SynthesisSink> sink) {
  auto pending = std::make_shared<PendingJob>();
  auto refuse = [&sink](const absl::Status& status) { sink->OnComplete(status, {}); };
  // What can be refused without the prompt is, before the (expensive) cloning.
  if (draining_.load()) {
    refuse(Reject("", core::Draining("server is shutting down")));
    return pending;
  }
  if (absl::Status status = text::CheckInput(request.text, config_.limits, request.text_field);
      !status.ok()) {
    refuse(Reject("", status));
    return pending;
  }
  if (absl::Status status = CheckRequestOptions(request, config_); !status.ok()) {
    refuse(Reject("", status));
    return pending;
  }
  {
    std::lock_guard lock(in_flight_mutex_);
    ++in_flight_;
    metrics_.in_flight.Set(static_cast<double>(in_flight_));
  }
  VoiceRegistration prompt;
  prompt.model = request.model;
  prompt.transcript = request.prompt_text;
  prompt.audio = std::move(request.prompt_audio);
  prompt.allowed_models = request.allowed_models;
  request.prompt_audio.clear();
  voices_->CloneForRequest(std::move(prompt), [this, pending, sink, request = std::move(request)](
                                                  absl::StatusOr<ClonedPrompt> cloned) mutable {
    if (!cloned.ok()) {
      sink->OnComplete(Reject("", cloned.status()), {});
    } else if (pending->cancelled()) {
      sink->OnComplete(absl::CancelledError("the client went away"), {});
    } else {
      request.model = cloned->model_id;
      request.voice_profile = std::move(cloned->profile);
      request.cloned_voice_id.clear();
      auto job = Synthesize(std::move(request), sink);  // counts its own refusals
      if (job.ok()) {
        pending->Attach(*std::move(job));
      } else {
        sink->OnComplete(job.status(), {});
      }
    }
    OnJobFinished();  // the cloning's own count; a started job holds its own
  });
  return pending;
}

}  // namespace voxserve::service
