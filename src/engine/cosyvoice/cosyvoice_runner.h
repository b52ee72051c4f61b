// The StreamRunner of CosyVoiceEngine (docs/cosyvoice-generation.md, "The engine"): each Step
// advances every active segment's LLM by one token in one batched LlmDecoder::Step; when a
// piece of a segment has all its tokens, the flow and HiFT turn them into 24 kHz audio, emitted
// as that step's chunk (one chunk per normalized piece; the segment ends after its last piece).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/cosyvoice/bundle_manifest.h"
#include "engine/cosyvoice/flow_matcher.h"
#include "engine/cosyvoice/hift_source.h"
#include "engine/cosyvoice/hift_stream.h"
#include "engine/cosyvoice/hift_vocoder.h"
#include "engine/cosyvoice/llm_decoder.h"
#include "engine/cosyvoice/llm_prompt.h"
#include "engine/cosyvoice/text_frontend.h"
#include "engine/streaming_engine.h"
#include "text/bpe_tokenizer.h"

namespace voxserve::engine::cosyvoice {

// What a runner borrows from its engine: immutable and safe cross thread, owned by the engine,
// which outlives its runners.
struct GenerationStages {
  const BundleManifest* manifest = nullptr;
  const TextFrontend* text = nullptr;
  const text::Qwen2Tokenizer* tokenizer = nullptr;
  const FlowMatcher* flow = nullptr;
  const HiftVocoder* hift = nullptr;
  std::string family;  // the profiles it takes (VoiceProfile::family)
  // Upstream's streaming schedule (CosyVoice2Model.tts, cli/model.py:343-375): audio every token
  // hop instead of once per piece. Off: one chunk per piece.
  bool streaming = false;
  // Seeds the LLM's sampler and HiFT's source noise of a segment whose request has no seed
  // (SegmentInput::seed), so equal requests give equal audio.
  uint64_t seed = 0;
};

// Instruct mode's prompt (instructions + <|endofprompt|>) takes KV slots from every piece's
// budget (llm_capacity): 256 tokens is about 1000 characters of English, far beyond upstream's
// own one-sentence instructions (cosyvoice/utils/common.py:28-...), and an eighth of the
// default llm_capacity of 2048.
inline constexpr size_t kMaxInstructionTokens = 256;

// Owned by one scheduler instance thread (StreamRunner's contract); holds that instance's LLM
// (its KV cache) and every active segment's state.
class CosyVoiceRunner final : public StreamRunner {
 public:
  static absl::StatusOr<std::unique_ptr<CosyVoiceRunner>> Create(
      const GenerationStages& stages, std::unique_ptr<LlmDecoder> decoder, int max_active);

  // InvalidArgument without a profile of the engine's family (cosyvoice speaks cloned voices
  // only), for a profile missing a tensor, text with nothing to speak after normalization, or
  // instruct mode with no instructions or more than kMaxInstructionTokens;
  // OutOfRange for a prompt that leaves the flow no room; ResourceExhausted past max_active.
  absl::Status Begin(SequenceId id, const SegmentInput& input) override;
  std::vector<SequenceStep> Step() override;
  void Release(SequenceId id) override;
  size_t Active() const override { return segments_.size(); }

  LlmDecoder& decoder() { return *decoder_; }  // for tests (logp hook)

 private:
  struct Segment {
    uint64_t order = 0;  // Begin order: Step reports in it
    std::shared_ptr<const VoiceProfile> profile;
    double speed = 1.0;
    uint64_t seed = 0;  // the request's, or the engine's default
    LlmPrompt llm_prompt;  // the voice's prompt as its mode gives it to the LLM, every piece
    std::vector<std::vector<int64_t>> pieces;  // text ids of each normalized piece
    size_t next_piece = 0;                     // the piece after the one being decoded
    uint64_t llm_id = 0;                       // the decoder's id of the current piece
    std::vector<int32_t> tokens;               // the current piece's speech tokens so far
    // Streaming: tokens already vocoded, the next hop, the piece's HiFT state and noise.
    size_t token_offset = 0;
    size_t hop = 0;       // this hop's tokens (the first padded, model.py:348)
    size_t base_hop = 0;  // the unpadded hop, doubling up to token_max_hop_len
    std::optional<HiftStream> stream;
    std::unique_ptr<SeededSourceNoise> noise;
  };
  CosyVoiceRunner(const GenerationStages& stages, std::unique_ptr<LlmDecoder> decoder,
                  int max_active)
      : stages_(stages), decoder_(std::move(decoder)), max_active_(max_active) {}
  // The LLM's share of the voice's prompt in the segment's mode (llm_prompt.h, PromptForMode).
  absl::StatusOr<LlmPrompt> PromptFor(const VoiceProfile& profile, const SegmentInput& input) const;
  absl::Status AdmitNextPiece(Segment& segment);
  // Speech tokens a piece may have: the flow encoder takes prompt + new tokens up to its
  // max_tokens (300 in the tiny bundle), so the LLM stops there even before its max_len.
  size_t TokenBudget(const Segment& segment) const;
  // Flow + HiFT (+ speed) over the finished piece's tokens.
  absl::StatusOr<audio::PcmAudio> Vocode(const Segment& segment) const;
  // Streaming: the audio of the next hop when enough tokens are out (else empty), or with
  // `finalize` the rest of the piece.
  absl::StatusOr<audio::PcmAudio> VocodeHop(Segment& segment, bool finalize) const;

  GenerationStages stages_;
  std::unique_ptr<LlmDecoder> decoder_;
  int max_active_;
  std::map<SequenceId, Segment> segments_;
  std::map<uint64_t, SequenceId> by_llm_id_;
  uint64_t next_llm_id_ = 1;
  uint64_t next_order_ = 0;
};

}  // namespace voxserve::engine::cosyvoice
