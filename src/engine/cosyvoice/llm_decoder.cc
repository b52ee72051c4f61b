#include "engine/cosyvoice/llm_decoder.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/error.h"

namespace voxserve::engine::cosyvoice {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The step graph's share of the decoder's configuration.
LlmStepGraphConfig StepGraphConfig(const LlmDecoderConfig& config) {
  LlmStepGraphConfig graph;
  graph.rows = config.max_active;
  graph.capacity = config.capacity;
  graph.runtime = config.runtime;
  graph.session = config.session;
  return graph;
}

void LogSoftmax(std::span<float> x) {
  float top = *std::max_element(x.begin(), x.end());
  double sum = 0;
  for (float v : x) sum += std::exp(static_cast<double>(v - top));
  const float log_sum = static_cast<float>(std::log(sum));
  for (float& v : x) v = v - top - log_sum;
}

}  // namespace

absl::Status LlmDecoderConfig::Validate() const {
  if (max_active < 1 || max_active > 256) {
    return core::InvalidArgument("max_active: expected 1..256, found " +
                                 std::to_string(max_active));
  }
  if (capacity < 2 || capacity > 65536) {
    return core::InvalidArgument("capacity: expected 2..65536 cache slots, found " +
                                 std::to_string(capacity));
  }
  if (max_prefills_per_step < 1 || max_prefills_per_step > max_active) {
    return core::InvalidArgument("max_prefills_per_step: expected 1..max_active (" +
                                 std::to_string(max_active) + "), found " +
                                 std::to_string(max_prefills_per_step));
  }
  return StepGraphConfig(*this).Validate();
}

LlmDecoder::~LlmDecoder() = default;

absl::StatusOr<std::unique_ptr<LlmDecoder>> LlmDecoder::Create(const BundleManifest& manifest,
                                                               const std::string& bundle_dir,
                                                               const LlmDecoderConfig& config) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  std::unique_ptr<LlmDecoder> d(new LlmDecoder());
  d->manifest_ = manifest;
  d->config_ = config;
  const auto& s = manifest.sampling;
  // sampling_ids masks index speech_token_size while ignore_eos (llm.py:157-158): CosyVoice2's
  // eos, but CosyVoice3's sos (its eos is 6562); upstream's CosyVoice3LM inherits the method
  // unchanged, so its other stop ids stay open during min_len. We mask what upstream masks.
  d->ras_ = {s.top_p, s.top_k, s.win_size, s.tau_r, manifest.vocab.speech_token_size};
  auto embeddings = LlmEmbeddings::Create(manifest, bundle_dir);
  if (!embeddings.ok()) return embeddings.status();
  d->embeddings_ = std::move(*embeddings);
  auto created = LlmStepGraph::Create(manifest, bundle_dir, StepGraphConfig(config));
  if (!created.ok()) return created.status();
  d->graph_ = std::move(*created);
  d->hidden_ = manifest.llm.hidden_size;
  d->vocab_ = manifest.vocab.head_outputs;
  d->rows_.resize(static_cast<size_t>(config.max_active));
  return d;
}

absl::Status LlmDecoder::Admit(uint64_t seq_id, LlmRequest request) {
  auto live = [&](uint64_t id) {
    return std::any_of(rows_.begin(), rows_.end(),
                       [&](const Row& r) { return r.live && r.seq_id == id && !r.released; }) ||
           std::any_of(queue_.begin(), queue_.end(),
                       [&](const Queued& q) { return q.seq_id == id; });
  };
  if (live(seq_id)) {
    return absl::AlreadyExistsError("sequence " + std::to_string(seq_id) + " is already live");
  }
  // A released row is freed at the next Step, before its prefills: it does not count.
  const size_t live_rows = static_cast<size_t>(std::count_if(
      rows_.begin(), rows_.end(), [](const Row& r) { return r.live && !r.released; }));
  if (live_rows + queue_.size() >= static_cast<size_t>(config_.max_active)) {
    return absl::ResourceExhaustedError("the LLM decoder holds max_active (" +
                                        std::to_string(config_.max_active) + ") sequences");
  }
  auto prefill = embeddings_->PrefillInput(request);
  if (!prefill.ok()) return prefill.status();
  const int64_t s = static_cast<int64_t>(prefill->size()) / hidden_;
  TokenLimits limits = LimitsFor(manifest_.sampling, request.text_ids.size());
  // The last token is never fed back, so a sequence needs S + max_len - 1 slots.
  if (s + limits.max_len - 1 > config_.capacity) {
    return core::InvalidArgument("the prompt (" + std::to_string(s) + " positions) and up to " +
                                 std::to_string(limits.max_len) +
                                 " generated tokens do not fit the decoder's capacity of " +
                                 std::to_string(config_.capacity) + " cache slots");
  }
  queue_.push_back({seq_id, std::move(request), std::move(*prefill)});
  return absl::OkStatus();
}

size_t LlmDecoder::MaxTextTokens(size_t prompt_text_tokens, size_t prompt_speech_tokens) const {
  // As Admit: S + max_len - 1 slots, S = 1 + prompt text + text + 1 + prompt speech tokens.
  auto fits = [&](size_t text) {
    const auto s = static_cast<int64_t>(2 + prompt_text_tokens + text + prompt_speech_tokens);
    return s + LimitsFor(manifest_.sampling, text).max_len - 1 <= config_.capacity;
  };
  size_t low = 0, high = static_cast<size_t>(config_.capacity);  // fits(low); !fits(high + 1)
  while (low < high) {
    const size_t middle = low + (high - low + 1) / 2;
    if (fits(middle)) {
      low = middle;
    } else {
      high = middle - 1;
    }
  }
  return low == 0 || !fits(low) ? 0 : low;
}

absl::Status LlmDecoder::Release(uint64_t seq_id) {
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->seq_id == seq_id) {
      queue_.erase(it);
      return absl::OkStatus();
    }
  }
  for (Row& row : rows_) {
    if (row.live && row.seq_id == seq_id && !row.released) {
      row.released = true;
      return absl::OkStatus();
    }
  }
  return core::NotFound("no live sequence " + std::to_string(seq_id));
}

void LlmDecoder::Free(size_t index) {
  rows_[index] = Row{};  // the row's slots are overwritten by its next sequence's prefill
  --live_rows_;
}

absl::StatusOr<std::vector<LlmEvent>> LlmDecoder::Step() {
  stats_ = {};
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].live && rows_[i].released) Free(i);
  }
  std::vector<LlmEvent> events;
  if (live_rows_ > 0) {
    if (absl::Status status = DecodeRunning(events); !status.ok()) return status;
  }
  for (int n = 0; n < config_.max_prefills_per_step && !queue_.empty(); ++n) {
    Queued next = std::move(queue_.front());
    queue_.pop_front();
    if (absl::Status status = Prefill(std::move(next), events); !status.ok()) return status;
  }
  // Finished rows are free now, for the next Step's newcomers.
  for (const LlmEvent& e : events) {
    if (e.finish == LlmFinish::kNone) continue;
    for (size_t i = 0; i < rows_.size(); ++i) {
      if (rows_[i].live && rows_[i].seq_id == e.seq_id) {
        Free(i);
        break;
      }
    }
  }
  return events;
}

absl::Status LlmDecoder::DecodeRunning(std::vector<LlmEvent>& events) {
  const Clock::time_point start = Clock::now();
  // Rows [0, highest live row]: a free row below it (a hole, until a newcomer takes it) runs as
  // a dummy of length 0 whose logits are not read.
  size_t n = rows_.size();
  while (n > 0 && !rows_[n - 1].live) --n;
  embeds_.assign(n * static_cast<size_t>(hidden_), 0.0f);
  lengths_.assign(n, 0);
  for (size_t r = 0; r < n; ++r) {
    const Row& row = rows_[r];
    if (!row.live) continue;
    std::copy_n(embeddings_->SpeechEmbedding(row.next_token), hidden_,
                embeds_.begin() + static_cast<std::ptrdiff_t>(r * hidden_));
    lengths_[r] = static_cast<int32_t>(row.length);
  }
  logits_.resize(n * static_cast<size_t>(vocab_));
  onnx::HostTraffic traffic;
  if (absl::Status s = graph_->Decode(embeds_, lengths_, logits_, traffic); !s.ok()) return s;
  stats_.host_to_provider_bytes += traffic.to_provider;
  stats_.provider_to_host_bytes += traffic.from_provider;
  for (size_t r = 0; r < n; ++r) {
    Row& row = rows_[r];
    if (!row.live) continue;
    ++row.length;
    ++stats_.decoded_rows;
    stats_.cache_written_bytes += graph_->cache().SlotBytes();
    Sample(r,
           std::span<float>(logits_).subspan(r * static_cast<size_t>(vocab_),
                                             static_cast<size_t>(vocab_)),
           events);
  }
  stats_.batch_rows = static_cast<int>(graph_->BatchRows(static_cast<int64_t>(n)));
  stats_.decode_ms = MsSince(start);
  return absl::OkStatus();
}

absl::Status LlmDecoder::Prefill(Queued queued, std::vector<LlmEvent>& events) {
  const Clock::time_point start = Clock::now();
  const int64_t s = static_cast<int64_t>(queued.prefill.size()) / hidden_;
  // The lowest free row: a finished sequence's row is reused (Admit keeps one free per queued).
  size_t index = 0;
  while (index < rows_.size() && rows_[index].live) ++index;
  if (index == rows_.size()) return core::Internal("LLM prefill: no free row");
  logits_.resize(static_cast<size_t>(vocab_));
  onnx::HostTraffic traffic;
  if (absl::Status st = graph_->Prefill(static_cast<int64_t>(index), queued.prefill,
                                        std::span<float>(logits_.data(), vocab_), traffic);
      !st.ok()) {
    return st;
  }
  stats_.host_to_provider_bytes += traffic.to_provider;
  stats_.provider_to_host_bytes += traffic.from_provider;
  stats_.cache_written_bytes += s * graph_->cache().SlotBytes();
  Row& row = rows_[index];
  row = Row{};
  row.live = true;
  row.seq_id = queued.seq_id;
  row.length = s;
  row.limits = LimitsFor(manifest_.sampling, queued.request.text_ids.size());
  row.greedy = queued.request.greedy;
  row.rng = SequenceRng(queued.request.seed);
  ++live_rows_;
  Sample(index, std::span<float>(logits_.data(), vocab_), events);
  stats_.prefills += 1;
  stats_.prefill_tokens += s;
  stats_.prefill_ms += MsSince(start);
  return absl::OkStatus();
}

void LlmDecoder::Sample(size_t index, std::span<float> logp, std::vector<LlmEvent>& events) {
  Row& row = rows_[index];
  LogSoftmax(logp);
  if (hook_) hook_(row.seq_id, logp);
  const auto& stops = manifest_.special_ids.stop_tokens;
  // llm.py:535-547: eos masked while fewer than min_len tokens are out; any stop id ends it.
  const bool ignore_eos = static_cast<int64_t>(row.decoded.size()) < row.limits.min_len;
  std::vector<float> scores(logp.begin(), logp.end());
  const int64_t token = row.greedy
                            ? GreedySample(std::move(scores), ignore_eos, ras_)
                            : RasSample(std::move(scores), row.decoded, ignore_eos, ras_, [&row] {
                                return row.rng.Uniform();
                              }).token;
  LlmEvent event{row.seq_id, token, LlmFinish::kNone};
  if (std::find(stops.begin(), stops.end(), token) != stops.end()) {
    event.token = -1;
    event.finish = LlmFinish::kStopToken;
  } else {
    row.decoded.push_back(token);
    row.next_token = token;
    if (static_cast<int64_t>(row.decoded.size()) >= row.limits.max_len) {
      event.finish = LlmFinish::kMaxLength;
    }
  }
  events.push_back(event);
}

}  // namespace voxserve::engine::cosyvoice
