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
  const size_t per_layer =
      static_cast<size_t>(config.max_active) * d->kv_ * config.capacity * d->head_dim_;
  d->cache_.assign(2 * static_cast<size_t>(llm.num_layers), std::vector<float>(per_layer, 0.0f));
  return d;
}

float* LlmDecoder::Cache(int layer, int kind, size_t row) {
  return cache_[2 * layer + kind].data() + row * kv_ * config_.capacity * head_dim_;
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

void LlmDecoder::RemoveRow(size_t index) {
  const size_t last = rows_.size() - 1;
  if (index != last) {
    const int64_t used = rows_[last].length;
    for (int layer = 0; layer < manifest_.llm.num_layers; ++layer) {
      for (int kind = 0; kind < 2; ++kind) {
        const float* from = Cache(layer, kind, last);
        float* to = Cache(layer, kind, index);
        for (int64_t h = 0; h < kv_; ++h) {
          const int64_t offset = h * config_.capacity * head_dim_;
          std::copy_n(from + offset, used * head_dim_, to + offset);
        }
      }
    }
    rows_[index] = std::move(rows_[last]);
  }
  rows_.pop_back();
}

absl::StatusOr<std::vector<LlmEvent>> LlmDecoder::Step() {
  stats_ = {};
  for (size_t i = rows_.size(); i-- > 0;) {
    if (rows_[i].released) RemoveRow(i);
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
        RemoveRow(i);
        break;
      }
    }
  }
  return events;
}

absl::Status LlmDecoder::DecodeRunning(std::vector<LlmEvent>& events) {
  const Clock::time_point start = Clock::now();
  const int64_t b = static_cast<int64_t>(rows_.size()), p = config_.capacity;
  std::vector<float> embeds(static_cast<size_t>(b * hidden_));
  std::vector<int64_t> positions(static_cast<size_t>(b));
  std::vector<float> mask(static_cast<size_t>(b * (p + 1)), 0.0f);
  for (int64_t r = 0; r < b; ++r) {
    const Row& row = rows_[r];
    std::copy_n(embeddings_->SpeechEmbedding(row.next_token), hidden_,
                embeds.begin() + r * hidden_);
    positions[r] = row.length;
    std::fill_n(mask.begin() + r * (p + 1), row.length, 1.0f);  // its own filled slots
    mask[r * (p + 1) + p] = 1.0f;                               // and the new position
  }
  std::vector<float> hidden(static_cast<size_t>(b * hidden_));
  const int layers = manifest_.llm.num_layers;
  std::vector<std::vector<float>> fresh(
      2 * static_cast<size_t>(layers),
      std::vector<float>(static_cast<size_t>(b * kv_ * head_dim_)));
  std::vector<std::pair<std::string, TensorView>> in = {
      {"inputs_embeds", {ElementType::kFloat, embeds.data(), {b, 1, hidden_}}},
      {"position_ids", {ElementType::kInt64, positions.data(), {b, 1}}},
      {"attention_mask", {ElementType::kFloat, mask.data(), {b, 1, p + 1}}}};
  std::vector<std::pair<std::string, TensorView>> out = {
      {"hidden_states", {ElementType::kFloat, hidden.data(), {b, 1, hidden_}}}};
  for (int layer = 0; layer < layers; ++layer) {
    for (int kind = 0; kind < 2; ++kind) {
      // The first b rows of the buffer, in place: rows are kept compact (RemoveRow).
      in.push_back({LayerName(kind == 0 ? "past_key_" : "past_value_", layer),
                    {ElementType::kFloat, Cache(layer, kind, 0), {b, kv_, p, head_dim_}}});
      out.push_back(
          {LayerName(kind == 0 ? "new_key_" : "new_value_", layer),
           {ElementType::kFloat, fresh[2 * layer + kind].data(), {b, kv_, 1, head_dim_}}});
    }
  }
  if (absl::Status status = backbone_->RunInPlace(in, out); !status.ok()) return status;
  for (int layer = 0; layer < layers; ++layer) {
    for (int kind = 0; kind < 2; ++kind) {
      for (int64_t r = 0; r < b; ++r) {
        float* row = Cache(layer, kind, r);
        for (int64_t h = 0; h < kv_; ++h) {
          std::copy_n(fresh[2 * layer + kind].begin() + (r * kv_ + h) * head_dim_, head_dim_,
                      row + (h * p + rows_[r].length) * head_dim_);
        }
      }
    }
  }
  for (Row& row : rows_) ++row.length;
  if (absl::Status status = HeadAndSample(hidden, 0, rows_.size(), events); !status.ok()) {
    return status;
  }
  stats_.decoded_rows = static_cast<int>(b);
  stats_.decode_ms = MsSince(start);
  return absl::OkStatus();
}

absl::Status LlmDecoder::Prefill(Queued queued, std::vector<LlmEvent>& events) {
  const Clock::time_point start = Clock::now();
  const int64_t s = static_cast<int64_t>(queued.prefill.size()) / hidden_, p = config_.capacity;
  const size_t index = rows_.size();
  std::vector<int64_t> positions(static_cast<size_t>(s));
  for (int64_t i = 0; i < s; ++i) positions[i] = i;
  std::vector<float> mask(static_cast<size_t>(s * (p + s)), 0.0f);  // no cached slot: causal only
  for (int64_t i = 0; i < s; ++i) std::fill_n(mask.begin() + i * (p + s) + p, i + 1, 1.0f);
  std::vector<float> hidden(static_cast<size_t>(s * hidden_));
  const int layers = manifest_.llm.num_layers;
  std::vector<std::vector<float>> fresh(
      2 * static_cast<size_t>(layers),
      std::vector<float>(static_cast<size_t>(kv_ * s * head_dim_)));
  std::vector<std::pair<std::string, TensorView>> in = {
      {"inputs_embeds", {ElementType::kFloat, queued.prefill.data(), {1, s, hidden_}}},
      {"position_ids", {ElementType::kInt64, positions.data(), {1, s}}},
      {"attention_mask", {ElementType::kFloat, mask.data(), {1, s, p + s}}}};
  std::vector<std::pair<std::string, TensorView>> out = {
      {"hidden_states", {ElementType::kFloat, hidden.data(), {1, s, hidden_}}}};
  for (int layer = 0; layer < layers; ++layer) {
    for (int kind = 0; kind < 2; ++kind) {
      // The newcomer's own row of the buffer (fully masked; the graph only reads it).
      in.push_back({LayerName(kind == 0 ? "past_key_" : "past_value_", layer),
                    {ElementType::kFloat, Cache(layer, kind, index), {1, kv_, p, head_dim_}}});
      out.push_back(
          {LayerName(kind == 0 ? "new_key_" : "new_value_", layer),
           {ElementType::kFloat, fresh[2 * layer + kind].data(), {1, kv_, s, head_dim_}}});
    }
  }
  if (absl::Status status = backbone_->RunInPlace(in, out); !status.ok()) return status;
  for (int layer = 0; layer < layers; ++layer) {
    for (int kind = 0; kind < 2; ++kind) {
      float* row = Cache(layer, kind, index);
      for (int64_t h = 0; h < kv_; ++h) {
        std::copy_n(fresh[2 * layer + kind].begin() + h * s * head_dim_, s * head_dim_,
                    row + h * p * head_dim_);
      }
    }
  }
  Row row;
  row.seq_id = queued.seq_id;
  row.length = s;
  row.limits = LimitsFor(manifest_.sampling, queued.request.text_ids.size());
  row.greedy = queued.request.greedy;
  row.rng = SequenceRng(queued.request.seed);
  rows_.push_back(std::move(row));
  std::span<float> last(hidden.data() + (s - 1) * hidden_, static_cast<size_t>(hidden_));
  if (absl::Status status = HeadAndSample(last, index, 1, events); !status.ok()) return status;
  stats_.prefills += 1;
  stats_.prefill_tokens += s;
  stats_.prefill_ms += MsSince(start);
  return absl::OkStatus();
}

absl::Status LlmDecoder::HeadAndSample(std::span<float> hidden, size_t first, size_t count,
                                       std::vector<LlmEvent>& events) {
  const int64_t r = static_cast<int64_t>(count);
  logits_.resize(static_cast<size_t>(r * vocab_));
  absl::Status status =
      head_->RunInPlace({{head_input_, {ElementType::kFloat, hidden.data(), {r, hidden_}}}},
                        {{head_output_, {ElementType::kFloat, logits_.data(), {r, vocab_}}}});
  if (!status.ok()) return status;
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
