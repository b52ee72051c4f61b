#include "engine/cosyvoice/cosyvoice_runner.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>

#include "core/error.h"
#include "engine/cosyvoice/hift_source.h"

namespace voxserve::engine::cosyvoice {
namespace {

absl::StatusOr<const ProfileTensor*> Tensor(const VoiceProfile& profile, const std::string& name,
                                            ProfileTensor::DType dtype) {
  auto it = profile.tensors.find(name);
  if (it == profile.tensors.end() || it->second.dtype != dtype) {
    return core::InvalidArgument(
        "the cloned voice's profile has no " +
        std::string(dtype == ProfileTensor::DType::kInt32 ? "int32" : "float32") + " tensor '" +
        name + "'; register the voice again");
  }
  return &it->second;
}

// SplitMix64's finalizer: distinct, well-mixed seeds for the pieces of one segment.
uint64_t MixSeed(uint64_t seed, uint64_t piece) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (piece + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

// A streaming piece's HiFT state: CosyVoice2's HiftStream with its source noise, or
// CosyVoice3's CausalHiftStream (its noise is the bundle's fixed table).
struct CosyVoiceRunner::PieceStream {
  PieceStream(HiftStream stream, uint64_t noise_seed)
      : hift(std::move(stream)), noise(noise_seed) {}
  explicit PieceStream(CausalHiftStream stream) : causal(std::move(stream)), noise(0) {}
  std::optional<HiftStream> hift;
  std::optional<CausalHiftStream> causal;
  SeededSourceNoise noise;
};

absl::StatusOr<std::unique_ptr<CosyVoiceRunner>> CosyVoiceRunner::Create(
    const GenerationStages& stages, std::unique_ptr<LlmDecoder> decoder, int max_active) {
  if (!stages.manifest || !stages.text || !stages.tokenizer || !stages.flow || !stages.hift ||
      !stages.vocoder || !decoder || max_active < 1) {
    return core::Internal("CosyVoiceRunner::Create: a stage is missing");
  }
  return std::unique_ptr<CosyVoiceRunner>(
      new CosyVoiceRunner(stages, std::move(decoder), max_active));
}

absl::Status CosyVoiceRunner::Begin(SequenceId id, const SegmentInput& input) {
  if (segments_.contains(id)) return absl::AlreadyExistsError("sequence id in use");
  if (segments_.size() >= static_cast<size_t>(max_active_)) {
    return absl::ResourceExhaustedError("max_active segments are active");
  }
  if (!input.voice_profile || input.voice_profile->family != stages_.family) {
    return core::InvalidArgument(
        "cosyvoice speaks cloned voices only: register one (POST /v1/audio/voices) and name "
        "its id or name as the voice",
        "voice", "voice_not_found");
  }
  const VoiceProfile& profile = *input.voice_profile;
  for (const char* name : {"prompt_speech_tokens", "transcript_tokens"}) {
    if (auto t = Tensor(profile, name, ProfileTensor::DType::kInt32); !t.ok()) return t.status();
  }
  for (const char* name : {"prompt_mel", "speaker_embedding"}) {
    if (auto t = Tensor(profile, name, ProfileTensor::DType::kFloat32); !t.ok()) return t.status();
  }
  const int64_t max_tokens = stages_.flow->max_tokens();
  const auto prompt_tokens =
      static_cast<int64_t>(profile.tensors.at("prompt_speech_tokens").ints.size());
  if (max_tokens > 0 && prompt_tokens >= max_tokens) {
    return absl::OutOfRangeError("the cloned voice's prompt has " + std::to_string(prompt_tokens) +
                                 " speech tokens; this bundle's flow takes at most " +
                                 std::to_string(max_tokens) + " in all");
  }
  auto prompt = PromptFor(profile, input);
  if (!prompt.ok()) return prompt.status();
  const LlmPrompt& llm_prompt = prompt->llm;
  const Preamble& per_piece = prompt->per_piece;
  // Each piece's prompt, text and the speech tokens it may generate share one KV cache row.
  const size_t llm_prompt_tokens =
      llm_prompt.text_ids.size() + llm_prompt.speech_tokens.size() + per_piece.ids.size();
  const size_t max_text = decoder_->MaxTextTokens(llm_prompt.text_ids.size() + per_piece.ids.size(),
                                                  llm_prompt.speech_tokens.size());
  if (max_text == 0) {
    return core::InvalidArgument(
        "the voice's prompt (" + std::to_string(llm_prompt_tokens) +
            " tokens with its transcript and instructions) leaves no room for text in the LLM's " +
            std::to_string(decoder_->capacity()) +
            " cache slots (options.llm_capacity): raise it, or register a shorter prompt",
        "voice", "prompt_too_long");
  }
  // Upstream's inference_zero_shot normalizes with split=True and synthesizes piece by piece
  // (cosyvoice/cli/cosyvoice.py, frontend.text_normalize); a piece the cache cannot hold with
  // the prompt is cut further (TextFrontend::FitToTokens) rather than refused.
  auto pieces = stages_.text->Normalize(input.text);
  if (!pieces.ok()) return pieces.status();
  Segment segment;
  for (const std::string& piece : *pieces) {
    auto ids = stages_.tokenizer->Encode(piece);
    if (!ids.ok()) return ids.status();
    if (ids->empty()) continue;
    if (ids->size() <= max_text) {
      segment.pieces.push_back(per_piece.Before(*ids));
      continue;
    }
    for (const std::string& part : stages_.text->FitToTokens(piece, max_text)) {
      auto part_ids = stages_.tokenizer->Encode(part);
      if (!part_ids.ok()) return part_ids.status();
      if (part_ids->size() > max_text) {
        return core::InvalidArgument("one character of the text takes " +
                                         std::to_string(part_ids->size()) +
                                         " tokens, more than the " + std::to_string(max_text) +
                                         " the voice's prompt leaves in options.llm_capacity",
                                     "input", "prompt_too_long");
      }
      if (!part_ids->empty()) segment.pieces.push_back(per_piece.Before(*part_ids));
    }
  }
  if (segment.pieces.empty()) {
    return core::InvalidArgument("the text has nothing to speak after normalization", "input",
                                 "empty_input");
  }
  segment.llm_prompt = std::move(prompt->llm);
  segment.silent = SilentRunFilter(stages_.manifest->special_ids.silent_tokens);
  segment.order = next_order_++;
  segment.profile = input.voice_profile;
  segment.speed = input.speed;
  segment.seed = input.seed.value_or(stages_.seed);
  segment.dropped = std::make_shared<std::atomic<bool>>(false);
  if (absl::Status admitted = AdmitNextPiece(segment); !admitted.ok()) return admitted;
  by_llm_id_[segment.llm_id] = id;
  segments_.emplace(id, std::move(segment));
  return absl::OkStatus();
}

absl::StatusOr<CosyVoiceRunner::SegmentPrompt> CosyVoiceRunner::PromptFor(
    const VoiceProfile& profile, const SegmentInput& input) const {
  // Without a mode from the service (unit tests, callers other than TtsService), the profile
  // decides as before: an empty transcript is cross-lingual synthesis.
  VoiceMode mode = VoiceMode::kCrossLingual;
  if (input.voice_mode) {
    mode = *input.voice_mode;
  } else if (auto transcript = profile.attributes.find("transcript");
             transcript != profile.attributes.end() && !transcript->second.empty()) {
    mode = VoiceMode::kZeroShot;
  }
  const Family family = stages_.manifest->family;
  std::vector<int32_t> instruction_ids;
  if (mode == VoiceMode::kInstruct) {
    if (input.instructions.empty()) {
      return core::InvalidArgument("voice_mode \"instruct\" needs instructions", "instructions",
                                   "missing_instructions");
    }
    auto ids = stages_.tokenizer->Encode(InstructPromptText(input.instructions, family));
    if (!ids.ok()) return ids.status();
    if (ids->size() > kMaxInstructionTokens) {
      return core::InvalidArgument("instructions are " + std::to_string(ids->size()) +
                                       " tokens long; cosyvoice follows at most " +
                                       std::to_string(kMaxInstructionTokens),
                                   "instructions", "instructions_too_long");
    }
    instruction_ids = *std::move(ids);
  }
  SegmentPrompt prompt;
  Preamble preamble;
  if (family == Family::kCosyVoice3) {
    auto ids =
        stages_.tokenizer->Encode(std::string(kCosyVoice3System) + std::string(kEndOfPrompt));
    if (!ids.ok()) return ids.status();
    preamble.ids.assign(ids->begin(), ids->end());
    preamble.endofprompt = stages_.manifest->special_ids.endofprompt;
  }
  prompt.llm =
      PromptForMode(mode, profile.tensors.at("transcript_tokens").ints,
                    profile.tensors.at("prompt_speech_tokens").ints, instruction_ids, preamble);
  if (mode == VoiceMode::kCrossLingual) prompt.per_piece = std::move(preamble);
  return prompt;
}

absl::Status CosyVoiceRunner::AdmitNextPiece(Segment& segment) {
  const VoiceProfile& profile = *segment.profile;
  LlmRequest request;
  request.text_ids = segment.pieces[segment.next_piece];
  // Every piece of a segment gets the same prompt, as upstream's frontend builds it per piece
  // (cli/cosyvoice.py:105-107, :177-179).
  request.prompt_text_ids = segment.llm_prompt.text_ids;
  request.prompt_speech_tokens = segment.llm_prompt.speech_tokens;
  request.seed = MixSeed(segment.seed, segment.next_piece);
  const uint64_t llm_id = next_llm_id_++;
  if (absl::Status admitted = decoder_->Admit(llm_id, std::move(request)); !admitted.ok()) {
    return admitted;
  }
  segment.llm_id = llm_id;
  segment.tokens.clear();
  segment.silent.Reset();
  segment.stream = nullptr;  // the last piece's jobs keep theirs
  // Streaming pieces at speed 1 only: upstream changes speed on a whole mel (model.py:319).
  if (stages_.streaming && segment.speed == 1.0) {
    const BundleManifest& m = *stages_.manifest;
    if (stages_.hift->causal()) {
      auto stream = CausalHiftStream::Create(*stages_.hift);
      if (!stream.ok()) return stream.status();
      segment.stream = std::make_shared<PieceStream>(*std::move(stream));
    } else {
      auto stream = HiftStream::Create(*stages_.hift, m.streaming.mel_cache_len,
                                       m.streaming.source_cache_len);
      if (!stream.ok()) return stream.status();
      segment.stream = std::make_shared<PieceStream>(
          *std::move(stream), MixSeed(segment.seed ^ 0x68696674ULL, segment.next_piece));
    }
    segment.token_offset = 0;
    if (stages_.first_hop > 0) {  // a schedule of one's own: the first hop as asked, unpadded
      segment.base_hop = stages_.first_hop;
      segment.hop = stages_.first_hop;
    } else {
      // Upstream's first hop is padded so that prompt + first hop is whole hops (model.py:345).
      const auto hop = static_cast<size_t>(m.streaming.token_hop_len);
      const size_t prompt = profile.tensors.at("prompt_speech_tokens").ints.size();
      segment.base_hop = hop;
      segment.hop = hop + ((prompt + hop - 1) / hop * hop - prompt);
    }
  }
  ++segment.next_piece;
  return absl::OkStatus();
}

std::vector<SequenceStep> CosyVoiceRunner::Step() {
  std::map<uint64_t, SequenceStep> out;  // by Begin order
  if (segments_.empty()) return {};
  // Released rows are freed by the decoder's Step, so it runs while it holds any.
  const bool decoding = !by_llm_id_.empty();
  if (decoding || decoder_->running() > 0 || decoder_->queued() > 0) {
    auto events = decoder_->Step();
    if (!events.ok()) {
      for (auto& [id, segment] : segments_) {
        if (segment.dropped) segment.dropped->store(true);
        if (segment.llm_id != 0) (void)decoder_->Release(segment.llm_id);
        out[segment.order] = SequenceStep{id, {}, events.status()};
      }
      segments_.clear();
      by_llm_id_.clear();
      std::vector<SequenceStep> steps;
      for (auto& [order, step] : out) steps.push_back(std::move(step));
      return steps;
    }
    for (const LlmEvent& event : *events) {
      auto owner = by_llm_id_.find(event.seq_id);
      if (owner == by_llm_id_.end()) continue;  // released before this step
      const SequenceId id = owner->second;
      auto it = segments_.find(id);
      Segment& segment = it->second;
      if (event.token >= 0) {
        ++tokens_total_;
        if (segment.silent.Keep(event.token)) {
          segment.tokens.push_back(static_cast<int32_t>(event.token));
        }
      }
      if (event.finish == LlmFinish::kNone) {
        if (segment.tokens.size() < TokenBudget(segment)) {
          if (segment.stream) PostReadyHop(id, segment);
          continue;
        }
        // The flow cannot take more: end the piece here, as max_len would.
        (void)decoder_->Release(event.seq_id);
      }
      by_llm_id_.erase(owner);
      segment.llm_id = 0;
      if (absl::Status finished = FinishPiece(id, segment); !finished.ok()) {
        out[segment.order] = SequenceStep{id, {}, finished};
        Forget(it);
      } else if (segment.llm_id != 0) {
        by_llm_id_[segment.llm_id] = id;
      } else if (!segment.in_flight) {
        // Its last piece stopped before its first token and no audio is pending: done now.
        out[segment.order] = SequenceStep{id, {}, absl::OkStatus()};
        segments_.erase(it);
      }
    }
  }
  // Nothing to decode: the Step waits (briefly) for the vocoder instead of returning at once to
  // a caller that would call again and spin.
  Collect(out, /*wait=*/!decoding);
  std::vector<SequenceStep> steps;
  steps.reserve(out.size());
  for (auto& [order, step] : out) steps.push_back(std::move(step));
  return steps;
}

StreamRunnerStats CosyVoiceRunner::Stats() const {
  StreamRunnerStats stats;
  stats.decoding = decoder_->running();
  stats.prefill_waiting = decoder_->queued();
  stats.tokens_total = tokens_total_;
  for (const auto& [id, segment] : segments_) {
    stats.vocoder_pending += segment.waiting.size() + (segment.in_flight ? 1 : 0);
  }
  std::lock_guard lock(outbox_->mutex);
  stats.vocoder_jobs_total = outbox_->jobs;
  stats.vocoder_batched_total = outbox_->batched;
  return stats;
}

void CosyVoiceRunner::Release(SequenceId id) {
  auto it = segments_.find(id);
  if (it != segments_.end()) Forget(it);
}

CosyVoiceRunner::~CosyVoiceRunner() {
  // Jobs still queued skip; one running finishes into the outbox it shares, read by nobody.
  for (auto& [id, segment] : segments_) segment.dropped->store(true);
}

void CosyVoiceRunner::Forget(std::map<SequenceId, Segment>::iterator it) {
  Segment& segment = it->second;
  segment.dropped->store(true);
  if (segment.llm_id != 0) {
    (void)decoder_->Release(segment.llm_id);  // NotFound when its piece just finished
    by_llm_id_.erase(segment.llm_id);
  }
  segments_.erase(it);
}

absl::Status CosyVoiceRunner::FinishPiece(SequenceId id, Segment& segment) {
  // A piece that stopped before its first token has no audio (min_len 0 only).
  if (!segment.tokens.empty()) {
    VocodeJob job;
    job.profile = segment.profile;
    if (segment.stream) {
      job.tokens = segment.tokens;
      job.token_offset = segment.token_offset;
      job.finalize = true;
      job.stream = segment.stream;
    } else {
      job.tokens = segment.tokens;
      job.speed = segment.speed;
      // As before the move off the step thread: the index after this piece's.
      job.noise_seed = MixSeed(segment.seed ^ 0x68696674ULL, segment.next_piece);
    }
    Enqueue(id, segment, std::move(job));
  }
  segment.tokens.clear();
  if (segment.next_piece < segment.pieces.size()) return AdmitNextPiece(segment);
  return absl::OkStatus();
}

void CosyVoiceRunner::PostReadyHop(SequenceId id, Segment& segment) {
  const BundleManifest& m = *stages_.manifest;
  const auto lookahead = static_cast<size_t>(m.flow.pre_lookahead_len);
  const size_t used = segment.token_offset + segment.hop + lookahead;
  if (segment.tokens.size() < used) return;
  VocodeJob job;
  job.profile = segment.profile;
  job.tokens.assign(segment.tokens.begin(),
                    segment.tokens.begin() + static_cast<std::ptrdiff_t>(used));
  job.token_offset = segment.token_offset;
  job.finalize = false;
  job.stream = segment.stream;
  Enqueue(id, segment, std::move(job));
  segment.token_offset += segment.hop;
  // Hops grow x stream_scale_factor up to token_max_hop_len (model.py:359-360), or the
  // configured bound.
  const size_t max_hop =
      stages_.max_hop > 0 ? stages_.max_hop : static_cast<size_t>(m.streaming.token_max_hop_len);
  segment.base_hop =
      std::min(max_hop, segment.base_hop * static_cast<size_t>(m.streaming.stream_scale_factor));
  segment.hop = segment.base_hop;
}

void CosyVoiceRunner::Enqueue(SequenceId id, Segment& segment, VocodeJob job) {
  segment.waiting.push_back(std::move(job));
  if (!segment.in_flight) PostNext(id, segment);
}

void CosyVoiceRunner::PostNext(SequenceId id, Segment& segment) {
  auto job = std::make_shared<const VocodeJob>(std::move(segment.waiting.front()));
  segment.waiting.pop_front();
  segment.in_flight = true;
  JobPriority priority;
  priority.first_chunk = !segment.emitted;
  priority.runs_dry =
      segment.first_audio_at + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::duration<double>(segment.audio_seconds));
  // The job copies the stages (pointers into the engine, whose pool ends before its stages)
  // and shares the rest, so neither Release nor the runner's end leaves it a dangling reference.
  // The size of the batch the job's flow ran in (1 unless the pool said otherwise), for Stats.
  auto batch = std::make_shared<size_t>(1);
  auto report = [outbox = outbox_, id, order = segment.order,
                 batch](absl::StatusOr<audio::PcmAudio> audio) {
    {
      std::lock_guard lock(outbox->mutex);
      outbox->done.push_back(Vocoded{id, order, std::move(audio)});
      ++outbox->jobs;
      outbox->batched += *batch;
    }
    outbox->ready.notify_one();
  };
  if (stages_.vocoder->batches_flows()) {
    // Its flow may share estimator calls with other segments' waiting pieces (or, streaming,
    // their hops of its length).
    FlowJob flow;
    flow.request = FlowInput(*job);
    flow.keeps = job;
    flow.dropped = [dropped = segment.dropped] { return dropped->load(); };
    flow.before = [hook = vocode_hook_, id] {
      if (hook) hook(id);
    };
    if (job->stream) {
      flow.hop = FlowHopAt{job->token_offset, job->finalize};
      if (job->stream->causal) {
        flow.causal_hift = &*job->stream->causal;
      } else {
        flow.hift = &*job->stream->hift;
        flow.noise = &job->stream->noise;
      }
      flow.finish_hop = [rate = stages_.manifest->audio.sample_rate,
                         report](absl::StatusOr<std::vector<float>> samples) {
        if (!samples.ok()) return report(samples.status());
        report(audio::PcmAudio{*std::move(samples), rate});
      };
    } else {
      flow.finish = [stages = stages_, job, report](absl::StatusOr<ProviderMel> mel) {
        report(mel.ok() ? VocodeMel(stages, *job, *std::move(mel)) : mel.status());
      };
    }
    flow.skip = [report] { report(audio::PcmAudio{}); };
    flow.batched = [batch](size_t size) { *batch = size; };  // same pool thread as the report
    flow.priority = priority;
    stages_.vocoder->PostFlow(std::move(flow));
    return;
  }
  stages_.vocoder->Post(
      [stages = stages_, job = std::move(job), dropped = segment.dropped, hook = vocode_hook_, id,
       report] {
        absl::StatusOr<audio::PcmAudio> audio = audio::PcmAudio{};
        if (!dropped->load()) {
          if (hook) hook(id);
          audio = job->stream ? VocodeHop(stages, *job) : Vocode(stages, *job);
        }
        report(std::move(audio));
      },
      priority);
}

void CosyVoiceRunner::Collect(std::map<uint64_t, SequenceStep>& out, bool wait) {
  std::vector<Vocoded> done;
  {
    std::unique_lock lock(outbox_->mutex);
    if (wait && std::any_of(segments_.begin(), segments_.end(),
                            [](const auto& entry) { return entry.second.in_flight; })) {
      outbox_->ready.wait_for(lock, std::chrono::milliseconds(kVocoderWaitMs),
                              [&] { return !outbox_->done.empty(); });
    }
    done.swap(outbox_->done);
  }
  // At most one result per segment: it had one job in flight, and its next is posted below.
  for (Vocoded& vocoded : done) {
    auto it = segments_.find(vocoded.id);
    if (it == segments_.end() || it->second.order != vocoded.order) continue;  // released
    Segment& segment = it->second;
    segment.in_flight = false;
    SequenceStep& step = out[segment.order];
    step.id = vocoded.id;
    if (!vocoded.audio.ok()) {
      step.end = vocoded.audio.status();  // flow or HiFT failed: this segment only
      Forget(it);
      continue;
    }
    step.chunk = *std::move(vocoded.audio);
    if (!step.chunk.samples.empty()) {
      if (!segment.emitted) {
        segment.emitted = true;
        segment.first_audio_at = std::chrono::steady_clock::now();
      }
      segment.audio_seconds += step.chunk.DurationSeconds();
    }
    if (!segment.waiting.empty()) {
      PostNext(vocoded.id, segment);
    } else if (segment.llm_id == 0) {  // every piece decoded and vocoded
      step.end = absl::OkStatus();
      segments_.erase(it);
    }
  }
}

absl::StatusOr<audio::PcmAudio> CosyVoiceRunner::VocodeHop(const GenerationStages& stages,
                                                           const VocodeJob& job) {
  // Upstream's hop (token2wav, cli/model.py:292-303): the flow over the first offset + hop +
  // lookahead tokens (PostReadyHop cut that prefix), chunk-causal with the lookahead as
  // context, mel from 2 x offset (FlowMatcher::RunPrefix; without the bundle's
  // flow_encoder_stream graph an approximation).
  const FlowRequest request = FlowInput(job);
  auto mel = stages.flow->RunPrefix(request, job.token_offset, job.finalize);
  if (!mel.ok()) return mel.status();
  return HopAudio(stages, job, *mel);
}

absl::StatusOr<audio::PcmAudio> CosyVoiceRunner::HopAudio(const GenerationStages& stages,
                                                          const VocodeJob& job,
                                                          const FlowMel& mel) {
  audio::PcmAudio pcm;
  pcm.sample_rate = stages.manifest->audio.sample_rate;
  PieceStream& stream = *job.stream;
  auto audio = stream.causal
                   ? stream.causal->Push({mel.values, mel.frames}, job.finalize)
                   : stream.hift->Push({mel.values, mel.frames}, job.finalize, stream.noise);
  if (!audio.ok()) return audio.status();
  pcm.samples = *std::move(audio);
  return pcm;
}

size_t CosyVoiceRunner::TokenBudget(const Segment& segment) const {
  const int64_t max_tokens = stages_.flow->max_tokens();  // 0: not recorded, no bound
  if (max_tokens <= 0) return std::numeric_limits<size_t>::max();
  const auto prompt =
      static_cast<int64_t>(segment.profile->tensors.at("prompt_speech_tokens").ints.size());
  return static_cast<size_t>(max_tokens - prompt);  // > 0: checked by Begin
}

FlowRequest CosyVoiceRunner::FlowInput(const VocodeJob& job) {
  const VoiceProfile& profile = *job.profile;
  FlowRequest request;
  request.tokens = job.tokens;
  request.prompt_tokens = profile.tensors.at("prompt_speech_tokens").ints;
  request.prompt_mel = profile.tensors.at("prompt_mel").floats;
  request.embedding = profile.tensors.at("speaker_embedding").floats;
  return request;
}

absl::StatusOr<audio::PcmAudio> CosyVoiceRunner::Vocode(const GenerationStages& stages,
                                                        const VocodeJob& job) {
  const FlowRequest request = FlowInput(job);
  auto mel = std::move(stages.flow->RunBatchOnProvider({&request, 1}).front());
  if (!mel.ok()) return mel.status();
  return VocodeMel(stages, job, *std::move(mel));
}

absl::StatusOr<audio::PcmAudio> CosyVoiceRunner::VocodeMel(const GenerationStages& stages,
                                                           const VocodeJob& job, ProviderMel mel) {
  if (stages.hift->causal()) return VocodeCausalMel(stages, job, mel);
  SeededSourceNoise noise(job.noise_seed);
  absl::StatusOr<VocodedAudio> vocoded;
  if (job.speed == 1.0) {
    // The mel stays where the flow left it (the device's memory on CUDA) until HiFT reads it.
    vocoded = stages.hift->VocodeOnProvider(mel.View(), {}, noise);
  } else {
    // Non-streaming speed change on the mel, as token2wav does (cli/model.py:319-321): a host
    // step, so the mel comes over once.
    auto host = stages.flow->Download(mel);
    if (!host.ok()) return host.status();
    int64_t frames = host->frames;
    auto changed = ChangeMelSpeed({host->values, frames}, host->bins, job.speed, &frames);
    if (!changed.ok()) return changed.status();
    vocoded = stages.hift->Vocode({*changed, frames}, {}, noise);
  }
  if (!vocoded.ok()) return vocoded.status();
  audio::PcmAudio pcm;
  pcm.samples = std::move(vocoded->audio);
  pcm.sample_rate = stages.manifest->audio.sample_rate;
  return pcm;
}

absl::StatusOr<audio::PcmAudio> CosyVoiceRunner::VocodeCausalMel(const GenerationStages& stages,
                                                                 const VocodeJob& job,
                                                                 const ProviderMel& mel) {
  // CosyVoice3Model.token2wav with finalize (cli/model.py:447-451): speed changes the whole mel,
  // then the causal HiFT vocodes all of it. Its f0 and source are made on the host.
  auto host = stages.flow->Download(mel);
  if (!host.ok()) return host.status();
  int64_t frames = host->frames;
  std::vector<float> values = std::move(host->values);
  if (job.speed != 1.0) {
    auto changed = ChangeMelSpeed({values, frames}, host->bins, job.speed, &frames);
    if (!changed.ok()) return changed.status();
    values = *std::move(changed);
  }
  auto audio = stages.hift->VocodeCausal({values, frames}, /*finalize=*/true);
  if (!audio.ok()) return audio.status();
  audio::PcmAudio pcm;
  pcm.samples = *std::move(audio);
  pcm.sample_rate = stages.manifest->audio.sample_rate;
  return pcm;
}

}  // namespace voxserve::engine::cosyvoice
