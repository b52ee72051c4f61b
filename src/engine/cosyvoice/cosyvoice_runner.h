// The StreamRunner of CosyVoiceEngine (docs/cosyvoice-generation.md, "The engine"): each Step
// advances every active segment's LLM by one token in one batched LlmDecoder::Step; when a
// piece of a segment has all its tokens (or, streaming, a hop is ready), its flow and HiFT run
// on the engine's VocoderPool while the LLM goes on, and a later Step emits that 24 kHz audio as
// the segment's chunk (one chunk per normalized piece or hop, in order; the segment ends after
// its last piece's audio).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/cosyvoice/bundle_manifest.h"
#include "engine/cosyvoice/causal_hift_stream.h"
#include "engine/cosyvoice/flow_matcher.h"
#include "engine/cosyvoice/hift_source.h"
#include "engine/cosyvoice/hift_stream.h"
#include "engine/cosyvoice/hift_vocoder.h"
#include "engine/cosyvoice/llm_decoder.h"
#include "engine/cosyvoice/llm_prompt.h"
#include "engine/cosyvoice/silent_tokens.h"
#include "engine/cosyvoice/text_frontend.h"
#include "engine/cosyvoice/vocoder_pool.h"
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
  VocoderPool* vocoder = nullptr;  // where flow + HiFT run
  std::string family;              // the profiles it takes (VoiceProfile::family)
  // Upstream's streaming schedule (CosyVoice2Model.tts, cli/model.py:343-375): audio every token
  // hop instead of once per piece. Off: one chunk per piece.
  bool streaming = false;
  // The hop schedule (CosyVoiceEngineConfig::stream_first_hop, stream_max_hop): first_hop 0 is
  // upstream's (token_hop_len padded to whole hops with the prompt); max_hop the growth's bound
  // (0: the bundle's token_max_hop_len).
  size_t first_hop = 0;
  size_t max_hop = 0;
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
// (its KV cache) and every active segment's state. Its vocoder jobs run on the pool's threads
// and share with the runner only the outbox they report to (and the dropped flag they read).
class CosyVoiceRunner final : public StreamRunner {
 public:
  // Longest a Step with no LLM row to advance waits for a vocoder job before returning empty
  // (StreamRunner's contract): a newcomer waits at most this for its Begin, small beside its
  // time to first audio (a prefill, a piece's tokens and its flow); a Step that times out costs
  // the scheduler one look at its queue, 100 a second at most.
  static constexpr int kVocoderWaitMs = 10;

  static absl::StatusOr<std::unique_ptr<CosyVoiceRunner>> Create(
      const GenerationStages& stages, std::unique_ptr<LlmDecoder> decoder, int max_active);

  // Pieces longer than the LLM's capacity leaves them beside the prompt are cut further
  // (TextFrontend::FitToTokens), not refused. InvalidArgument without a profile of the engine's
  // family (cosyvoice speaks cloned voices only), for a profile missing a tensor, text with
  // nothing to speak after normalization, instruct mode with no instructions or more than
  // kMaxInstructionTokens, or a prompt that leaves no room for text in llm_capacity (code
  // prompt_too_long); OutOfRange for a prompt that leaves the flow no room; ResourceExhausted
  // past max_active.
  absl::Status Begin(SequenceId id, const SegmentInput& input) override;
  std::vector<SequenceStep> Step() override;
  void Release(SequenceId id) override;
  size_t Active() const override { return segments_.size(); }
  StreamRunnerStats Stats() const override;
  ~CosyVoiceRunner() override;

  LlmDecoder& decoder() { return *decoder_; }  // for tests (logp hook)
  // For tests: called on the vocoder thread at the start of each job of this runner (with the
  // sequence id), before the flow. A hook that blocks holds that job, and only that job.
  using VocodeHook = std::function<void(SequenceId)>;
  void SetVocodeHookForTest(VocodeHook hook) { vocode_hook_ = std::move(hook); }

 private:
  // One vocoder job: what the flow and HiFT of one piece (or hop) read, owned by the job.
  struct PieceStream;  // a streaming piece's HiFT state and noise, shared by its hops in turn
  struct VocodeJob {
    std::shared_ptr<const VoiceProfile> profile;
    std::vector<int32_t> tokens;  // what the flow takes: the piece's tokens (a hop: its prefix)
    size_t token_offset = 0;      // streaming: tokens vocoded by earlier hops
    bool finalize = true;         // streaming: the piece's last hop
    double speed = 1.0;
    uint64_t noise_seed = 0;              // HiFT's source noise of a whole piece
    std::shared_ptr<PieceStream> stream;  // set: a streaming hop
  };
  struct Segment {
    uint64_t order = 0;  // Begin order: Step reports in it
    std::shared_ptr<const VoiceProfile> profile;
    double speed = 1.0;
    uint64_t seed = 0;     // the request's, or the engine's default
    LlmPrompt llm_prompt;  // the voice's prompt as its mode gives it to the LLM, every piece
    std::vector<std::vector<int64_t>> pieces;  // text ids of each normalized piece
    size_t next_piece = 0;                     // the piece after the one being decoded
    uint64_t llm_id = 0;                       // the decoder's id of the current piece; 0: none
    std::vector<int32_t> tokens;               // the current piece's speech tokens so far
    SilentRunFilter silent;  // which of the LLM's tokens reach `tokens`; Reset per piece
    // Streaming: tokens already posted for vocoding, the next hop, the piece's HiFT state.
    size_t token_offset = 0;
    size_t hop = 0;       // this hop's tokens (the first padded, model.py:348)
    size_t base_hop = 0;  // the unpadded hop, doubling up to token_max_hop_len
    std::shared_ptr<PieceStream> stream;
    // Vocoder jobs: one in flight at a time (a piece's hops share its HiFT state, and chunks
    // keep their order); the rest wait here. Bounded by the segment's hops and pieces.
    std::deque<VocodeJob> waiting;
    bool in_flight = false;
    // What its listener has (VocoderPool's JobPriority): when its first audio came out of a
    // Step, and how much audio has since.
    bool emitted = false;
    std::chrono::steady_clock::time_point first_audio_at;
    double audio_seconds = 0;
    std::shared_ptr<std::atomic<bool>> dropped;  // set by Release: its jobs not started skip
  };
  // Where a runner's jobs report, shared by the runner and its jobs in flight.
  struct Vocoded {
    SequenceId id = 0;
    uint64_t order = 0;  // Segment::order: an id is only matched with the segment that posted
    absl::StatusOr<audio::PcmAudio> audio;
  };
  struct Outbox {
    std::mutex mutex;
    std::condition_variable ready;
    std::vector<Vocoded> done;  // guarded by mutex
    uint64_t jobs = 0;          // guarded by mutex: jobs done (skipped ones too)
    uint64_t batched = 0;       // guarded by mutex: the batch sizes they ran in, summed
  };
  CosyVoiceRunner(const GenerationStages& stages, std::unique_ptr<LlmDecoder> decoder,
                  int max_active)
      : stages_(stages), decoder_(std::move(decoder)), max_active_(max_active) {}
  // The LLM's share of the voice's prompt in the segment's mode (llm_prompt.h, PromptForMode),
  // and what goes before each piece's text (CosyVoice3's preamble in cross-lingual mode).
  struct SegmentPrompt {
    LlmPrompt llm;
    Preamble per_piece;
  };
  absl::StatusOr<SegmentPrompt> PromptFor(const VoiceProfile& profile,
                                          const SegmentInput& input) const;
  absl::Status AdmitNextPiece(Segment& segment);
  // Speech tokens a piece may have: the flow encoder takes prompt + new tokens up to its
  // max_tokens (300 in the tiny bundle), so the LLM stops there even before its max_len.
  size_t TokenBudget(const Segment& segment) const;
  // The piece's LLM finished (`segment.tokens` are all its tokens): posts its last vocoder job
  // and admits the next piece, or notes that the segment has decoded all its pieces.
  absl::Status FinishPiece(SequenceId id, Segment& segment);
  // Streaming: posts the next hop when enough tokens are out for it.
  void PostReadyHop(SequenceId id, Segment& segment);
  // Queues a job behind the segment's job in flight, or posts it.
  void Enqueue(SequenceId id, Segment& segment, VocodeJob job);
  void PostNext(SequenceId id, Segment& segment);  // the first waiting job, to the pool
  // Moves the jobs' results into `out` (one chunk per segment and Step, the next job posted),
  // ending a segment whose job failed or whose last audio came. `wait`: first wait up to
  // kVocoderWaitMs for one, as a Step with nothing else to do does.
  void Collect(std::map<uint64_t, SequenceStep>& out, bool wait);
  // Flow + HiFT (+ speed) of a whole piece; streaming, of one hop (or with finalize the rest of
  // the piece). Run on the vocoder pool: they read the job and the engine's stages only.
  static absl::StatusOr<audio::PcmAudio> Vocode(const GenerationStages& stages,
                                                const VocodeJob& job);
  static absl::StatusOr<audio::PcmAudio> VocodeHop(const GenerationStages& stages,
                                                   const VocodeJob& job);
  // A hop's HiFT, through its piece's HiftStream, on the hop's mel.
  static absl::StatusOr<audio::PcmAudio> HopAudio(const GenerationStages& stages,
                                                  const VocodeJob& job, const FlowMel& mel);
  // A whole piece's HiFT (+ speed) on its flow's mel.
  static absl::StatusOr<audio::PcmAudio> VocodeMel(const GenerationStages& stages,
                                                   const VocodeJob& job, ProviderMel mel);
  // The same through CosyVoice3's causal HiFT (HiftVocoder::VocodeCausal, on the host).
  static absl::StatusOr<audio::PcmAudio> VocodeCausalMel(const GenerationStages& stages,
                                                         const VocodeJob& job,
                                                         const ProviderMel& mel);
  // The flow's view of a job: its tokens and its profile's prompt (the job owns them).
  static FlowRequest FlowInput(const VocodeJob& job);
  // Ends a segment now (not before its output was reported): frees its LLM row and drops its
  // jobs.
  void Forget(std::map<SequenceId, Segment>::iterator it);

  GenerationStages stages_;
  std::unique_ptr<LlmDecoder> decoder_;
  int max_active_;
  std::map<SequenceId, Segment> segments_;
  std::map<uint64_t, SequenceId> by_llm_id_;
  uint64_t next_llm_id_ = 1;
  uint64_t next_order_ = 0;
  uint64_t tokens_total_ = 0;
  std::shared_ptr<Outbox> outbox_ = std::make_shared<Outbox>();
  VocodeHook vocode_hook_;
};

}  // namespace voxserve::engine::cosyvoice
