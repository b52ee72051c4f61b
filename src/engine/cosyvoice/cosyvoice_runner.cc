#include "engine/cosyvoice/cosyvoice_runner.h"

#include <algorithm>
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

absl::StatusOr<std::unique_ptr<CosyVoiceRunner>> CosyVoiceRunner::Create(
    const GenerationStages& stages, std::unique_ptr<LlmDecoder> decoder, int max_active) {
  if (!stages.manifest || !stages.text || !stages.tokenizer || !stages.flow || !stages.hift ||
      !decoder || max_active < 1) {
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
  // Upstream's inference_zero_shot normalizes with split=True and synthesizes piece by piece
  // (cosyvoice/cli/cosyvoice.py, frontend.text_normalize).
  auto pieces = stages_.text->Normalize(input.text);
  if (!pieces.ok()) return pieces.status();
  Segment segment;
  for (const std::string& piece : *pieces) {
    auto ids = stages_.tokenizer->Encode(piece);
    if (!ids.ok()) return ids.status();
    if (ids->empty()) continue;
    segment.pieces.emplace_back(ids->begin(), ids->end());
  }
  if (segment.pieces.empty()) {
    return core::InvalidArgument("the text has nothing to speak after normalization", "input");
  }
  auto llm_prompt = PromptFor(profile, input);
  if (!llm_prompt.ok()) return llm_prompt.status();
  segment.llm_prompt = *std::move(llm_prompt);
  segment.order = next_order_++;
  segment.profile = input.voice_profile;
  segment.speed = input.speed;
  segment.seed = input.seed.value_or(stages_.seed);
  if (absl::Status admitted = AdmitNextPiece(segment); !admitted.ok()) return admitted;
  by_llm_id_[segment.llm_id] = id;
  segments_.emplace(id, std::move(segment));
  return absl::OkStatus();
}

absl::StatusOr<LlmPrompt> CosyVoiceRunner::PromptFor(const VoiceProfile& profile,
                                                     const SegmentInput& input) const {
  // Without a mode from the service (unit tests, callers other than TtsService), the profile
  // decides as before: an empty transcript is cross-lingual synthesis.
  VoiceMode mode = VoiceMode::kCrossLingual;
  if (input.voice_mode) {
    mode = *input.voice_mode;
  } else if (auto transcript = profile.attributes.find("transcript");
             transcript != profile.attributes.end() && !transcript->second.empty()) {
    mode = VoiceMode::kZeroShot;
  }
  std::vector<int32_t> instruction_ids;
  if (mode == VoiceMode::kInstruct) {
    if (input.instructions.empty()) {
      return core::InvalidArgument("voice_mode \"instruct\" needs instructions", "instructions",
                                   "missing_instructions");
    }
    auto ids = stages_.tokenizer->Encode(InstructPromptText(input.instructions));
    if (!ids.ok()) return ids.status();
    if (ids->size() > kMaxInstructionTokens) {
      return core::InvalidArgument("instructions are " + std::to_string(ids->size()) +
                                       " tokens long; cosyvoice follows at most " +
                                       std::to_string(kMaxInstructionTokens),
                                   "instructions", "instructions_too_long");
    }
    instruction_ids = *std::move(ids);
  }
  return PromptForMode(mode, profile.tensors.at("transcript_tokens").ints,
                       profile.tensors.at("prompt_speech_tokens").ints, instruction_ids);
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
  segment.stream.reset();
  // Streaming pieces at speed 1 only: upstream changes speed on a whole mel (model.py:319).
  if (stages_.streaming && segment.speed == 1.0) {
    const BundleManifest& m = *stages_.manifest;
    auto stream =
        HiftStream::Create(*stages_.hift, m.streaming.mel_cache_len, m.streaming.source_cache_len);
    if (!stream.ok()) return stream.status();
    segment.stream.emplace(*std::move(stream));
    segment.noise = std::make_unique<SeededSourceNoise>(
        MixSeed(segment.seed ^ 0x68696674ULL, segment.next_piece));
    segment.token_offset = 0;
    // The first hop is padded so that prompt + first hop is whole hops (model.py:345).
    const auto hop = static_cast<size_t>(m.streaming.token_hop_len);
    const size_t prompt = profile.tensors.at("prompt_speech_tokens").ints.size();
    segment.base_hop = hop;
    segment.hop = hop + ((prompt + hop - 1) / hop * hop - prompt);
  }
  ++segment.next_piece;
  return absl::OkStatus();
}

std::vector<SequenceStep> CosyVoiceRunner::Step() {
  std::map<uint64_t, SequenceStep> out;  // by Begin order
  if (segments_.empty()) return {};
  auto events = decoder_->Step();
  if (!events.ok()) {
    for (auto& [id, segment] : segments_) {
      (void)decoder_->Release(segment.llm_id);
      out[segment.order] = SequenceStep{id, {}, events.status()};
    }
    segments_.clear();
    by_llm_id_.clear();
  } else {
    for (const LlmEvent& event : *events) {
      auto owner = by_llm_id_.find(event.seq_id);
      if (owner == by_llm_id_.end()) continue;  // released before this step
      const SequenceId id = owner->second;
      Segment& segment = segments_.at(id);
      if (event.token >= 0) segment.tokens.push_back(static_cast<int32_t>(event.token));
      if (event.finish == LlmFinish::kNone) {
        if (segment.tokens.size() < TokenBudget(segment)) {
          if (!segment.stream) continue;
          auto hop = VocodeHop(segment, /*finalize=*/false);
          if (hop.ok() && hop->samples.empty()) continue;
          SequenceStep step{id, {}, std::nullopt};
          const uint64_t order = segment.order;
          if (hop.ok()) {
            step.chunk = *std::move(hop);
          } else {
            step.end = hop.status();
            (void)decoder_->Release(event.seq_id);
            by_llm_id_.erase(owner);
            segments_.erase(id);  // `segment` dangles from here
          }
          out[order] = std::move(step);
          continue;
        }
        // The flow cannot take more: end the piece here, as max_len would.
        (void)decoder_->Release(event.seq_id);
      }
      by_llm_id_.erase(owner);
      SequenceStep step{id, {}, std::nullopt};
      // A piece that stopped before its first token has no audio (min_len 0 only).
      if (!segment.tokens.empty()) {
        auto audio = segment.stream ? VocodeHop(segment, /*finalize=*/true) : Vocode(segment);
        if (audio.ok()) {
          step.chunk = *std::move(audio);
        } else {
          step.end = audio.status();
        }
      }
      if (!step.end && segment.next_piece < segment.pieces.size()) {
        if (absl::Status admitted = AdmitNextPiece(segment); admitted.ok()) {
          by_llm_id_[segment.llm_id] = id;
        } else {
          step.end = admitted;
        }
      } else if (!step.end) {
        step.end = absl::OkStatus();
      }
      const uint64_t order = segment.order;
      if (step.end) segments_.erase(id);  // `segment` dangles from here
      out[order] = std::move(step);
    }
  }
  std::vector<SequenceStep> steps;
  steps.reserve(out.size());
  for (auto& [order, step] : out) steps.push_back(std::move(step));
  return steps;
}

void CosyVoiceRunner::Release(SequenceId id) {
  auto it = segments_.find(id);
  if (it == segments_.end()) return;
  (void)decoder_->Release(it->second.llm_id);  // NotFound when its piece just finished
  by_llm_id_.erase(it->second.llm_id);
  segments_.erase(it);
}

absl::StatusOr<audio::PcmAudio> CosyVoiceRunner::VocodeHop(Segment& segment, bool finalize) const {
  const BundleManifest& m = *stages_.manifest;
  const auto lookahead = static_cast<size_t>(m.flow.pre_lookahead_len);
  audio::PcmAudio pcm;
  pcm.sample_rate = m.audio.sample_rate;
  if (!finalize && segment.tokens.size() < segment.token_offset + segment.hop + lookahead) {
    return pcm;
  }
  // Upstream's hop (token2wav, cli/model.py:292-303): the flow over the first offset + hop +
  // lookahead tokens, chunk-causal with the lookahead as context, mel from 2 x offset
  // (FlowMatcher::RunPrefix; without the bundle's flow_encoder_stream graph an approximation).
  const size_t used =
      finalize ? segment.tokens.size() : segment.token_offset + segment.hop + lookahead;
  const VoiceProfile& profile = *segment.profile;
  FlowRequest request;
  request.tokens = std::span(segment.tokens).first(used);
  request.prompt_tokens = profile.tensors.at("prompt_speech_tokens").ints;
  request.prompt_mel = profile.tensors.at("prompt_mel").floats;
  request.embedding = profile.tensors.at("speaker_embedding").floats;
  auto mel = stages_.flow->RunPrefix(request, segment.token_offset, finalize);
  if (!mel.ok()) return mel.status();
  auto audio = segment.stream->Push({mel->values, mel->frames}, finalize, *segment.noise);
  if (!audio.ok()) return audio.status();
  pcm.samples = *std::move(audio);
  if (!finalize) {
    segment.token_offset += segment.hop;
    // Hops grow x stream_scale_factor up to token_max_hop_len (model.py:359-360).
    segment.base_hop =
        std::min(static_cast<size_t>(m.streaming.token_max_hop_len),
                 segment.base_hop * static_cast<size_t>(m.streaming.stream_scale_factor));
    segment.hop = segment.base_hop;
  }
  return pcm;
}

size_t CosyVoiceRunner::TokenBudget(const Segment& segment) const {
  const int64_t max_tokens = stages_.flow->max_tokens();  // 0: not recorded, no bound
  if (max_tokens <= 0) return std::numeric_limits<size_t>::max();
  const auto prompt =
      static_cast<int64_t>(segment.profile->tensors.at("prompt_speech_tokens").ints.size());
  return static_cast<size_t>(max_tokens - prompt);  // > 0: checked by Begin
}

absl::StatusOr<audio::PcmAudio> CosyVoiceRunner::Vocode(const Segment& segment) const {
  const VoiceProfile& profile = *segment.profile;
  FlowRequest request;
  request.tokens = segment.tokens;
  request.prompt_tokens = profile.tensors.at("prompt_speech_tokens").ints;
  request.prompt_mel = profile.tensors.at("prompt_mel").floats;
  request.embedding = profile.tensors.at("speaker_embedding").floats;
  auto mel = stages_.flow->Run(request);
  if (!mel.ok()) return mel.status();
  std::vector<float> values = std::move(mel->values);
  int64_t frames = mel->frames;
  if (segment.speed != 1.0) {
    // Non-streaming speed change on the mel, as token2wav does (cli/model.py:319-321).
    auto changed = ChangeMelSpeed({values, frames}, mel->bins, segment.speed, &frames);
    if (!changed.ok()) return changed.status();
    values = *std::move(changed);
  }
  SeededSourceNoise noise(MixSeed(segment.seed ^ 0x68696674ULL, segment.next_piece));
  auto vocoded = stages_.hift->Vocode({values, frames}, {}, noise);
  if (!vocoded.ok()) return vocoded.status();
  audio::PcmAudio pcm;
  pcm.samples = std::move(vocoded->audio);
  pcm.sample_rate = stages_.manifest->audio.sample_rate;
  return pcm;
}

}  // namespace voxserve::engine::cosyvoice
