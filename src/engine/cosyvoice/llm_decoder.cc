#include "engine/cosyvoice/llm_decoder.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/error.h"

namespace voxserve::engine::cosyvoice {
namespace {

using onnx::ElementType;
using onnx::TensorView;
using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string LayerName(const char* kind, int layer) { return kind + std::to_string(layer); }

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
  return session.Validate();
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
  d->ras_ = {s.top_p, s.top_k, s.win_size, s.tau_r, manifest.special_ids.eos};
  auto embeddings = LlmEmbeddings::Create(manifest, bundle_dir);
  if (!embeddings.ok()) return embeddings.status();
  d->embeddings_ = std::move(*embeddings);
  for (auto [role, session] :
       {std::pair{"llm_backbone", &d->backbone_}, {"llm_decoder", &d->head_}}) {
    const GraphEntry* g = manifest.graph(role);
    if (g == nullptr) return core::NotFound(std::string("bundle has no graph ") + role);
    auto opened = onnx::OnnxSession::Create((std::filesystem::path(bundle_dir) / g->file).string(),
                                            config.session);
    if (!opened.ok()) return opened.status();
    *session = std::move(*opened);
  }
  if (d->head_->inputs().size() != 1 || d->head_->outputs().size() != 1) {
    return core::InvalidArgument("llm_decoder: expected one input and one output");
  }
  d->head_input_ = d->head_->inputs()[0].name;
  d->head_output_ = d->head_->outputs()[0].name;
  const auto& llm = manifest.llm;
  for (int layer = 0; layer < llm.num_layers; ++layer) {
    for (const char* kind : {"past_key_", "past_value_"}) {
      if (d->backbone_->FindInput(LayerName(kind, layer)) == nullptr) {
        return core::InvalidArgument("llm_backbone: no input " + LayerName(kind, layer));
      }
    }
  }
  d->kv_ = llm.num_kv_heads;
  d->head_dim_ = llm.head_dim;
  d->hidden_ = llm.hidden_size;
  d->vocab_ = manifest.vocab.head_outputs;
  KvCacheShape shape{llm.num_layers, config.max_active, d->kv_, config.capacity, d->head_dim_};
  auto cache = KvCache::Create(*d->backbone_, shape, config.session);
  if (!cache.ok()) return cache.status();
  d->cache_ = std::move(*cache);
  if (absl::Status s = d->ReserveHidden(config.max_active); !s.ok()) return s;
  return d;
}

int64_t LlmDecoder::cache_bytes() const {
  return cache_->shape().rows * cache_->shape().capacity * cache_->SlotBytes();
}

absl::Status LlmDecoder::ReserveHidden(int64_t positions) {
  if (positions <= hidden_positions_) return absl::OkStatus();
  hidden_states_ = {};
  auto buffer =
      backbone_->AllocateProvider(static_cast<size_t>(positions * hidden_) * sizeof(float));
  if (!buffer.ok()) return buffer.status();
  hidden_states_ = std::move(*buffer);
  hidden_positions_ = positions;
  return absl::OkStatus();
}

void LlmDecoder::AddTraffic(const KvCacheTraffic& t) {
  stats_.host_to_provider_bytes += t.host.to_provider;
  stats_.provider_to_host_bytes += t.host.from_provider;
  stats_.cache_written_bytes += t.written_bytes;
  stats_.cache_moved_bytes += t.moved_bytes;
}

absl::Status LlmDecoder::Admit(uint64_t seq_id, LlmRequest request) {
  auto live = [&](uint64_t id) {
    return std::any_of(rows_.begin(), rows_.end(),
                       [&](const Row& r) { return r.seq_id == id && !r.released; }) ||
           std::any_of(queue_.begin(), queue_.end(),
                       [&](const Queued& q) { return q.seq_id == id; });
  };
  if (live(seq_id)) {
    return absl::AlreadyExistsError("sequence " + std::to_string(seq_id) + " is already live");
  }
  // A released row is freed at the next Step, before its prefills: it does not count.
  const size_t live_rows = static_cast<size_t>(
      std::count_if(rows_.begin(), rows_.end(), [](const Row& r) { return !r.released; }));
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
    if (row.seq_id == seq_id && !row.released) {
      row.released = true;
      return absl::OkStatus();
    }
  }
  return core::NotFound("no live sequence " + std::to_string(seq_id));
}

absl::Status LlmDecoder::RemoveRow(size_t index) {
  const size_t last = rows_.size() - 1;
  if (index != last) {
    KvCacheTraffic traffic;
    if (absl::Status s =
            cache_->Move(static_cast<int64_t>(last), static_cast<int64_t>(index), traffic);
        !s.ok()) {
      return s;
    }
    AddTraffic(traffic);
    rows_[index] = std::move(rows_[last]);
  }
  rows_.pop_back();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<LlmEvent>> LlmDecoder::Step() {
  stats_ = {};
  for (size_t i = rows_.size(); i-- > 0;) {
    if (!rows_[i].released) continue;
    if (absl::Status status = RemoveRow(i); !status.ok()) return status;
  }
  std::vector<LlmEvent> events;
  if (!rows_.empty()) {
    if (absl::Status status = DecodeRunning(events); !status.ok()) return status;
  }
  for (int n = 0; n < config_.max_prefills_per_step && !queue_.empty(); ++n) {
    Queued next = std::move(queue_.front());
    queue_.pop_front();
    if (absl::Status status = Prefill(std::move(next), events); !status.ok()) return status;
  }
  // Finished rows leave now, so their rows are free for the next Step's newcomers.
  for (const LlmEvent& e : events) {
    if (e.finish == LlmFinish::kNone) continue;
    for (size_t i = 0; i < rows_.size(); ++i) {
      if (rows_[i].seq_id == e.seq_id) {
        if (absl::Status status = RemoveRow(i); !status.ok()) return status;
        break;
      }
    }
  }
  return events;
}

absl::Status LlmDecoder::DecodeRunning(std::vector<LlmEvent>& events) {
  const Clock::time_point start = Clock::now();
  const int64_t b = static_cast<int64_t>(rows_.size());
  std::vector<float> embeds(static_cast<size_t>(b * hidden_));
  std::vector<int64_t> positions(static_cast<size_t>(b));
  for (int64_t r = 0; r < b; ++r) {
    const Row& row = rows_[r];
    std::copy_n(embeddings_->SpeechEmbedding(row.next_token), hidden_,
                embeds.begin() + r * hidden_);
    positions[r] = row.length;
  }
  if (absl::Status s = cache_->Reserve(b, 1); !s.ok()) return s;
  // Rows are kept compact (RemoveRow): the first b rows of the cache and of its decode mask,
  // which marks each row's own filled slots and the new position.
  std::vector<std::pair<std::string, TensorView>> in = {
      {"inputs_embeds", {ElementType::kFloat, embeds.data(), {b, 1, hidden_}}},
      {"position_ids", {ElementType::kInt64, positions.data(), {b, 1}}},
      {"attention_mask", cache_->DecodeMask(b)}};
  std::vector<std::pair<std::string, TensorView>> out = {
      {"hidden_states", hidden_states_.View(ElementType::kFloat, {b, 1, hidden_})}};
  AddBackboneCache(0, b, 1, in, out);
  KvCacheTraffic traffic;
  if (absl::Status s = backbone_->RunInPlace(in, out, &traffic.host); !s.ok()) return s;
  std::vector<int64_t> starts;
  for (const Row& row : rows_) starts.push_back(row.length);
  if (absl::Status s = cache_->Write(0, b, 1, starts, /*new_rows=*/false, traffic); !s.ok()) {
    return s;
  }
  AddTraffic(traffic);
  for (Row& row : rows_) ++row.length;
  absl::Status status = HeadAndSample(hidden_states_.View(ElementType::kFloat, {b, hidden_}), 0,
                                      rows_.size(), events);
  if (!status.ok()) return status;
  stats_.decoded_rows = static_cast<int>(b);
  stats_.decode_ms = MsSince(start);
  return absl::OkStatus();
}

void LlmDecoder::AddBackboneCache(int64_t first, int64_t count, int64_t s,
                                  std::vector<std::pair<std::string, TensorView>>& in,
                                  std::vector<std::pair<std::string, TensorView>>& out) const {
  for (int layer = 0; layer < manifest_.llm.num_layers; ++layer) {
    for (int kind = 0; kind < 2; ++kind) {
      in.push_back({LayerName(kind == 0 ? "past_key_" : "past_value_", layer),
                    cache_->Past(layer, kind, first, count)});
      out.push_back({LayerName(kind == 0 ? "new_key_" : "new_value_", layer),
                     cache_->Fresh(layer, kind, count, s)});
    }
  }
}

absl::Status LlmDecoder::Prefill(Queued queued, std::vector<LlmEvent>& events) {
  const Clock::time_point start = Clock::now();
  const int64_t s = static_cast<int64_t>(queued.prefill.size()) / hidden_, p = config_.capacity;
  const int64_t index = static_cast<int64_t>(rows_.size());
  std::vector<int64_t> positions(static_cast<size_t>(s));
  for (int64_t i = 0; i < s; ++i) positions[i] = i;
  std::vector<float> mask(static_cast<size_t>(s * (p + s)), 0.0f);  // no cached slot: causal only
  for (int64_t i = 0; i < s; ++i) std::fill_n(mask.begin() + i * (p + s) + p, i + 1, 1.0f);
  if (absl::Status st = cache_->Reserve(1, s); !st.ok()) return st;
  if (absl::Status st = ReserveHidden(s); !st.ok()) return st;
  std::vector<std::pair<std::string, TensorView>> in = {
      {"inputs_embeds", {ElementType::kFloat, queued.prefill.data(), {1, s, hidden_}}},
      {"position_ids", {ElementType::kInt64, positions.data(), {1, s}}},
      {"attention_mask", {ElementType::kFloat, mask.data(), {1, s, p + s}}}};
  std::vector<std::pair<std::string, TensorView>> out = {
      {"hidden_states", hidden_states_.View(ElementType::kFloat, {1, s, hidden_})}};
  // The newcomer's own row of the cache: fully masked (an earlier sequence's slots may be
  // there), the graph only reads it.
  AddBackboneCache(index, 1, s, in, out);
  KvCacheTraffic traffic;
  if (absl::Status st = backbone_->RunInPlace(in, out, &traffic.host); !st.ok()) return st;
  const int64_t from_zero[] = {0};
  if (absl::Status st = cache_->Write(index, 1, s, from_zero, /*new_rows=*/true, traffic);
      !st.ok()) {
    return st;
  }
  AddTraffic(traffic);
  Row row;
  row.seq_id = queued.seq_id;
  row.length = s;
  row.limits = LimitsFor(manifest_.sampling, queued.request.text_ids.size());
  row.greedy = queued.request.greedy;
  row.rng = SequenceRng(queued.request.seed);
  rows_.push_back(std::move(row));
  const TensorView last = hidden_states_.View(
      ElementType::kFloat, {1, hidden_}, static_cast<size_t>((s - 1) * hidden_) * sizeof(float));
  if (absl::Status st = HeadAndSample(last, static_cast<size_t>(index), 1, events); !st.ok()) {
    return st;
  }
  stats_.prefills += 1;
  stats_.prefill_tokens += s;
  stats_.prefill_ms += MsSince(start);
  return absl::OkStatus();
}

absl::Status LlmDecoder::HeadAndSample(const TensorView& hidden, size_t first, size_t count,
                                       std::vector<LlmEvent>& events) {
  const int64_t r = static_cast<int64_t>(count);
  logits_.resize(static_cast<size_t>(r * vocab_));
  onnx::HostTraffic traffic;
  absl::Status status = head_->RunInPlace(
      {{head_input_, hidden}}, {{head_output_, {ElementType::kFloat, logits_.data(), {r, vocab_}}}},
      &traffic);
  if (!status.ok()) return status;
  AddTraffic({traffic, 0, 0});
  const auto& stops = manifest_.special_ids.stop_tokens;
  for (size_t i = 0; i < count; ++i) {
    Row& row = rows_[first + i];
    std::span<float> logp(logits_.data() + i * vocab_, static_cast<size_t>(vocab_));
    LogSoftmax(logp);
    if (hook_) hook_(row.seq_id, logp);
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
  return absl::OkStatus();
}

}  // namespace voxserve::engine::cosyvoice
