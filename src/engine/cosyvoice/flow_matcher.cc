#include "engine/cosyvoice/flow_matcher.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numbers>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "core/error.h"
#include "engine/cosyvoice/flow_buffers.h"
#include "engine/cosyvoice/npy.h"

namespace voxserve::engine::cosyvoice {

using onnx::ElementType;
using onnx::OnnxSession;
using onnx::Tensor;
using onnx::TensorView;

// What the encoder of one request takes, checked (EncodeWith's first half), and the cond plane
// built from its prompt mel. Owned by the call.
struct FlowMatcher::Prepared {
  bool stream = false;
  bool chunk_masked = false;  // the Euler loop runs the chunk-masked estimator
  std::vector<int64_t> ids;   // prompt ++ new tokens
  size_t lookahead = 0;       // the last ids that are the stream encoder's context
  std::vector<float> embedding;
  int frames = 0, prompt_frames = 0;
  std::vector<float> cond;  // [bins, frames]: the prompt mel transposed, zeros after
};

namespace {

absl::Status NeedInput(const OnnxSession& s, const std::string& role, const std::string& name) {
  if (s.FindInput(name) != nullptr) return absl::OkStatus();
  return core::InvalidArgument("graph " + role + " (" + s.path() + ") has no input '" + name +
                               "'; upstream's export has x, mask, mu, t, spks, cond");
}

// The cosine schedule in float32 as torch computes it (flow_matching.py:224-226): t = 1 -
// cos(linspace(0, 1, n + 1) * pi / 2).
std::vector<float> CosineSchedule(int steps) {
  std::vector<float> span(static_cast<size_t>(steps) + 1);
  for (int i = 0; i <= steps; ++i) {
    float t = static_cast<float>(i) / static_cast<float>(steps);
    span[i] = 1.0f - std::cos(t * 0.5f * std::numbers::pi_v<float>);
  }
  return span;
}

// One outcome per request: its value where its error is OK.
template <typename T>
std::vector<absl::StatusOr<T>> Outcomes(const std::vector<absl::Status>& errors,
                                        std::vector<T>& values) {
  std::vector<absl::StatusOr<T>> outcomes;
  for (size_t i = 0; i < errors.size(); ++i) {
    outcomes.push_back(errors[i].ok() ? absl::StatusOr<T>(std::move(values[i]))
                                      : absl::StatusOr<T>(errors[i]));
  }
  return outcomes;
}

}  // namespace

absl::StatusOr<std::unique_ptr<FlowMatcher>> FlowMatcher::Create(
    const BundleManifest& manifest, const std::string& bundle_dir,
    const onnx::OnnxSessionConfig& session_config, int length_bucket_frames) {
  std::unique_ptr<FlowMatcher> flow(new FlowMatcher());
  namespace fs = std::filesystem;
  for (auto [role, session] :
       {std::pair{"flow_encoder", &flow->encoder_}, {"flow_estimator", &flow->estimator_}}) {
    const GraphEntry* graph = manifest.graph(role);
    if (graph == nullptr) return core::NotFound(std::string("bundle has no graph ") + role);
    auto opened =
        OnnxSession::Create((fs::path(bundle_dir) / graph->file).string(), session_config);
    if (!opened.ok()) return opened.status();
    *session = std::move(*opened);
  }
  // The encoder's names are read by position, as the manifest's role contract orders them.
  const OnnxSession& enc = *flow->encoder_;
  if (enc.inputs().size() != 2 || enc.outputs().size() != 2) {
    return core::InvalidArgument("graph flow_encoder (" + enc.path() +
                                 "): expected inputs (token, embedding) and outputs (mu, spks)");
  }
  flow->encoder_token_ = enc.inputs()[0].name;
  flow->encoder_token_int32_ = enc.inputs()[0].type == onnx::ElementType::kInt32;
  flow->encoder_embedding_ = enc.inputs()[1].name;
  flow->encoder_mu_ = enc.outputs()[0].name;
  flow->encoder_spks_ = enc.outputs()[1].name;
  // Our export records how many tokens its position tables hold (graphs.py export_flow_encoder);
  // past that ORT fails deep inside the graph, so requests are refused up front.
  if (std::optional<std::string> max = enc.Metadata("max_tokens")) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(*max, &value) || value < 1) {
      return core::InvalidArgument("graph flow_encoder (" + enc.path() +
                                   "): metadata max_tokens '" + *max + "' is not a count");
    }
    flow->max_tokens_ = value;
  }
  // The optional chunk-causal encoder of the streaming hops (token, context, embedding -> mu,
  // spks, as the manifest's role contract orders them).
  if (const GraphEntry* graph = manifest.graph("flow_encoder_stream")) {
    auto opened =
        OnnxSession::Create((fs::path(bundle_dir) / graph->file).string(), session_config);
    if (!opened.ok()) return opened.status();
    const OnnxSession& s = **opened;
    if (s.inputs().size() != 3 || s.outputs().size() != 2) {
      return core::InvalidArgument("graph flow_encoder_stream (" + s.path() +
                                   "): expected inputs (token, context, embedding) and outputs "
                                   "(mu, spks)");
    }
    flow->stream_token_ = s.inputs()[0].name;
    flow->stream_token_int32_ = s.inputs()[0].type == onnx::ElementType::kInt32;
    flow->stream_context_ = s.inputs()[1].name;
    flow->stream_context_int32_ = s.inputs()[1].type == onnx::ElementType::kInt32;
    flow->stream_embedding_ = s.inputs()[2].name;
    flow->stream_mu_ = s.outputs()[0].name;
    flow->stream_spks_ = s.outputs()[1].name;
    flow->stream_encoder_ = std::move(*opened);
  }
  flow->pre_lookahead_len_ = static_cast<int>(manifest.flow.pre_lookahead_len);
  // The estimator, and the optional chunk-masked one of the streaming hops (CosyVoice3's DiT):
  // the same names, outputs and rows axis, so that either serves a FlowBatch.
  auto batch_axis = [](const OnnxSession& est) {
    const std::vector<int64_t>& x_shape = est.FindInput("x")->shape;
    return x_shape.empty() || x_shape[0] < 0 ? int64_t{0} : x_shape[0];
  };
  auto check_estimator = [](const OnnxSession& est, const std::string& role) -> absl::Status {
    for (const char* name : {"x", "mask", "mu", "t", "spks", "cond"}) {
      if (absl::Status s = NeedInput(est, role, name); !s.ok()) return s;
    }
    if (est.outputs().size() != 1) {
      return core::InvalidArgument("graph " + role + " (" + est.path() + "): expected 1 output");
    }
    return absl::OkStatus();
  };
  if (absl::Status s = check_estimator(*flow->estimator_, "flow_estimator"); !s.ok()) return s;
  flow->estimator_out_ = flow->estimator_->outputs()[0].name;
  flow->estimator_batch_ = batch_axis(*flow->estimator_);
  if (const GraphEntry* graph = manifest.graph("flow_estimator_stream")) {
    auto opened =
        OnnxSession::Create((fs::path(bundle_dir) / graph->file).string(), session_config);
    if (!opened.ok()) return opened.status();
    const OnnxSession& est = **opened;
    if (absl::Status s = check_estimator(est, "flow_estimator_stream"); !s.ok()) return s;
    if (est.outputs()[0].name != flow->estimator_out_ ||
        batch_axis(est) != flow->estimator_batch_) {
      return core::InvalidArgument("graph flow_estimator_stream (" + est.path() +
                                   "): its output name and rows axis must be flow_estimator's");
    }
    flow->stream_estimator_ = std::move(*opened);
  }
  const OnnxSession& est = *flow->estimator_;
  // Buckets only with a dynamic batch axis: with a fixed one, padding would only add frames.
  flow->length_bucket_ = flow->estimator_batch_ == 0 ? std::max(0, length_bucket_frames) : 0;
  if (flow->estimator_batch_ != 0 && flow->estimator_batch_ != 2) {
    return core::InvalidArgument("graph flow_estimator (" + est.path() + "): batch axis is " +
                                 std::to_string(flow->estimator_batch_) +
                                 "; a CFG pair needs 2 (or a dynamic axis)");
  }

  auto glue = FlowGlue::Create(session_config);
  if (!glue.ok()) return glue.status();
  flow->glue_ = std::move(*glue);

  flow->mel_bins_ = manifest.audio.mel_bins;
  flow->embedding_dim_ = manifest.audio.speaker_embedding_dim;
  flow->token_mel_ratio_ = manifest.tokens.token_mel_ratio;
  flow->speech_token_size_ = manifest.vocab.speech_token_size;
  flow->n_timesteps_ = manifest.flow.n_timesteps;
  flow->cfg_rate_ = static_cast<float>(manifest.flow.inference_cfg_rate);

  auto entry = manifest.tensors.find("rand_noise");
  if (entry == manifest.tensors.end()) return core::NotFound("bundle has no tensor rand_noise");
  auto noise = ReadNpy((fs::path(bundle_dir) / entry->second.file).string());
  if (!noise.ok()) return noise.status();
  if (noise->dtype != "float32" || noise->shape.size() != 3 || noise->shape[0] != 1 ||
      noise->shape[1] != flow->mel_bins_) {
    return core::InvalidArgument("tensor rand_noise: " + noise->dtype + " " +
                                 ShapeString(noise->shape) + ", the flow needs float32 [1, " +
                                 std::to_string(flow->mel_bins_) + ", frames]");
  }
  flow->noise_frames_ = static_cast<int>(noise->shape[2]);
  flow->noise_ = std::move(noise->floats);
  return flow;
}

absl::StatusOr<FlowConditioning> FlowMatcher::Encode(const FlowRequest& r) const {
  return EncodeWith(r, /*stream=*/false);
}

absl::StatusOr<FlowConditioning> FlowMatcher::EncodeStream(const FlowRequest& r) const {
  if (stream_encoder_ == nullptr) {
    return absl::FailedPreconditionError("this bundle has no flow_encoder_stream graph");
  }
  return EncodeWith(r, /*stream=*/true);
}

absl::StatusOr<FlowConditioning> FlowMatcher::EncodeWith(const FlowRequest& r, bool stream) const {
  auto prepared = Prepare(r, stream);
  if (!prepared.ok()) return prepared.status();
  FlowConditioning c;
  c.frames = prepared->frames;
  c.prompt_frames = prepared->prompt_frames;
  c.mu.assign(static_cast<size_t>(mel_bins_) * c.frames, 0.0f);
  c.spks.assign(static_cast<size_t>(mel_bins_), 0.0f);
  absl::Status encoded =
      RunEncoder(*prepared, {ElementType::kFloat, c.mu.data(), {1, mel_bins_, c.frames}},
                 {ElementType::kFloat, c.spks.data(), {1, mel_bins_}});
  if (!encoded.ok()) return encoded;
  c.cond = std::move(prepared->cond);
  return c;
}

absl::StatusOr<FlowMatcher::Prepared> FlowMatcher::Prepare(const FlowRequest& r,
                                                           bool stream) const {
  if (r.tokens.empty()) return core::InvalidArgument("flow request: no speech tokens");
  // A hop's last pre_lookahead_len tokens are context only: it needs one more to make frames.
  if (stream && r.tokens.size() <= static_cast<size_t>(pre_lookahead_len_)) {
    return core::InvalidArgument("flow request: a streaming hop has " +
                                 std::to_string(r.tokens.size()) + " tokens; it needs more than " +
                                 std::to_string(pre_lookahead_len_) + " (the lookahead)");
  }
  if (r.embedding.size() != static_cast<size_t>(embedding_dim_)) {
    return core::InvalidArgument("flow request: embedding has " +
                                 std::to_string(r.embedding.size()) + " values, expected " +
                                 std::to_string(embedding_dim_) + " (the CAM++ x-vector)");
  }
  auto finite = [](std::span<const float> v) {
    return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
  };
  // A NaN would pass through every graph and come out as a silent mel.
  if (!finite(r.embedding) || !finite(r.prompt_mel)) {
    return core::InvalidArgument(std::string("flow request: ") +
                                 (finite(r.embedding) ? "prompt_mel" : "embedding") +
                                 " holds a NaN or infinity");
  }
  const size_t prompt_frames = r.prompt_tokens.size() * token_mel_ratio_;
  if (r.prompt_mel.size() != prompt_frames * mel_bins_) {
    // CosyVoice2's frontend aligns them 2:1 (cosyvoice/cli/frontend.py:174-178); anything else
    // would condition frames that belong to the generated part.
    return core::InvalidArgument(
        "flow request: prompt_mel has " + std::to_string(r.prompt_mel.size()) +
        " values, expected [" + std::to_string(prompt_frames) + ", " + std::to_string(mel_bins_) +
        "] (" + std::to_string(token_mel_ratio_) + " frames per prompt token, " +
        std::to_string(r.prompt_tokens.size()) + " prompt tokens)");
  }
  const size_t n_tokens = r.prompt_tokens.size() + r.tokens.size();
  const size_t lookahead = stream ? static_cast<size_t>(pre_lookahead_len_) : 0;
  const size_t frames = (n_tokens - lookahead) * token_mel_ratio_;
  if (frames > static_cast<size_t>(noise_frames_)) {
    return absl::OutOfRangeError("flow request: " + std::to_string(n_tokens) +
                                 " tokens (prompt and new) make " + std::to_string(frames) +
                                 " mel frames; the flow's noise covers " +
                                 std::to_string(noise_frames_));
  }
  if (max_tokens_ > 0 && n_tokens > static_cast<size_t>(max_tokens_)) {
    return absl::OutOfRangeError(
        "flow request: " + std::to_string(n_tokens) + " tokens (prompt " +
        std::to_string(r.prompt_tokens.size()) + " and new " + std::to_string(r.tokens.size()) +
        "); this bundle's flow encoder takes at most " + std::to_string(max_tokens_));
  }
  Prepared p;
  p.stream = stream;
  p.lookahead = lookahead;
  p.ids.reserve(n_tokens);
  for (auto [part, what] :
       {std::pair{r.prompt_tokens, "prompt speech token "}, {r.tokens, "speech token "}}) {
    for (size_t i = 0; i < part.size(); ++i) {
      if (part[i] < 0 || part[i] >= speech_token_size_) {
        return core::InvalidArgument("flow request: " + std::string(what) +
                                     std::to_string(part[i]) + " at position " + std::to_string(i) +
                                     " is outside [0, " + std::to_string(speech_token_size_) + ")");
      }
      p.ids.push_back(part[i]);
    }
  }
  p.embedding.assign(r.embedding.begin(), r.embedding.end());
  p.frames = static_cast<int>(frames);
  p.prompt_frames = static_cast<int>(prompt_frames);
  // cond: the prompt mel (frame-major in the request) transposed into the first frames
  // (flow.py:265-267).
  p.cond.assign(frames * mel_bins_, 0.0f);
  for (size_t f = 0; f < prompt_frames; ++f) {
    for (int b = 0; b < mel_bins_; ++b) p.cond[b * frames + f] = r.prompt_mel[f * mel_bins_ + b];
  }
  return p;
}

absl::Status FlowMatcher::RunEncoder(const Prepared& p, const TensorView& mu,
                                     const TensorView& spks) const {
  // The role contracts allow either integer type for the tokens (ours are int64).
  auto ints = [](std::span<const int64_t> v, bool int32, std::vector<int32_t>& narrow) {
    const std::vector<int64_t> shape = {1, static_cast<int64_t>(v.size())};
    if (!int32) return TensorView{ElementType::kInt64, const_cast<int64_t*>(v.data()), shape};
    narrow.assign(v.begin(), v.end());
    return TensorView{ElementType::kInt32, narrow.data(), shape};
  };
  const std::span<const int64_t> all(p.ids);
  std::vector<int32_t> narrow_tokens, narrow_context;
  std::vector<float> embedding = p.embedding;  // ORT's views take non-const data
  const TensorView x_vector{ElementType::kFloat, embedding.data(), {1, embedding_dim_}};
  const OnnxSession& encoder = p.stream ? *stream_encoder_ : *encoder_;
  absl::Status ran;
  if (p.stream) {
    // Upstream splits the prompt ++ prefix embedding at its last pre_lookahead_len rows
    // (flow.py:260); the context could reach into the prompt only for a hop that short,
    // refused by Prepare.
    ran = encoder.RunInPlace(
        {{stream_token_,
          ints(all.first(all.size() - p.lookahead), stream_token_int32_, narrow_tokens)},
         {stream_context_, ints(all.last(p.lookahead), stream_context_int32_, narrow_context)},
         {stream_embedding_, x_vector}},
        {{stream_mu_, mu}, {stream_spks_, spks}});
  } else {
    ran = encoder.RunInPlace({{encoder_token_, ints(all, encoder_token_int32_, narrow_tokens)},
                              {encoder_embedding_, x_vector}},
                             {{encoder_mu_, mu}, {encoder_spks_, spks}});
  }
  if (!ran.ok()) {
    return core::Internal(
        "graph " + std::string(p.stream ? "flow_encoder_stream" : "flow_encoder") + " (" +
        encoder.path() + ") for " + std::to_string(all.size() - p.lookahead) +
        " tokens, expected mu [1, " + std::to_string(mel_bins_) + ", " + std::to_string(p.frames) +
        "] and spks [1, " + std::to_string(mel_bins_) + "]: " + std::string(ran.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> FlowMatcher::EstimatorStep(const FlowConditioning& c,
                                                              std::span<const float> x, float t,
                                                              bool chunk_masked) const {
  if (chunk_masked && stream_estimator_ == nullptr) {
    return absl::FailedPreconditionError("this bundle has no flow_estimator_stream graph");
  }
  const OnnxSession& estimator = chunk_masked ? *stream_estimator_ : *estimator_;
  if (x.size() != static_cast<size_t>(c.frames) * mel_bins_) {
    return core::InvalidArgument("estimator step: x has " + std::to_string(x.size()) +
                                 " values, expected [" + std::to_string(mel_bins_) + ", " +
                                 std::to_string(c.frames) + "]");
  }
  // One pair in host buffers: row 0 conditioned, row 1 zeros; both see x and t.
  const size_t plane = x.size();
  const int64_t frames = c.frames;
  std::vector<float> xs(2 * plane), mask(2 * static_cast<size_t>(frames), 1.0f), mu(2 * plane),
      ts = {t, t}, spks(2 * static_cast<size_t>(mel_bins_)), cond(2 * plane), out(2 * plane);
  std::copy(x.begin(), x.end(), xs.begin());
  std::copy(x.begin(), x.end(), xs.begin() + plane);
  std::copy(c.mu.begin(), c.mu.end(), mu.begin());
  std::copy(c.cond.begin(), c.cond.end(), cond.begin());
  std::copy(c.spks.begin(), c.spks.end(), spks.begin());
  auto floats = [](std::vector<float>& v, std::vector<int64_t> shape) {
    return TensorView{ElementType::kFloat, v.data(), std::move(shape)};
  };
  estimator_calls_.fetch_add(1, std::memory_order_relaxed);
  absl::Status ran = estimator.RunInPlace({{"x", floats(xs, {2, mel_bins_, frames})},
                                           {"mask", floats(mask, {2, 1, frames})},
                                           {"mu", floats(mu, {2, mel_bins_, frames})},
                                           {"t", floats(ts, {2})},
                                           {"spks", floats(spks, {2, mel_bins_})},
                                           {"cond", floats(cond, {2, mel_bins_, frames})}},
                                          {{estimator_out_, floats(out, {2, mel_bins_, frames})}});
  if (!ran.ok()) return ran;
  return out;
}

absl::StatusOr<FlowBatch> FlowMatcher::Solve(std::span<const Prepared* const> group) const {
  int frames = 0;
  for (const Prepared* p : group) frames = std::max(frames, p->frames);
  // SolveGrouped never mixes the two estimators in a group.
  const OnnxSession& estimator = group.front()->chunk_masked ? *stream_estimator_ : *estimator_;
  auto batch =
      FlowBatch::Create(estimator, *glue_, static_cast<int>(group.size()), mel_bins_, frames);
  if (!batch.ok()) return batch.status();
  for (size_t k = 0; k < group.size(); ++k) {
    const Prepared& p = *group[k];
    const int pair = static_cast<int>(k);
    if (p.frames == frames) {
      // The encoder writes the conditioned row's mu and spks where the estimator reads them.
      if (absl::Status s = RunEncoder(p, batch->Mu(pair), batch->Spks(pair)); !s.ok()) return s;
    } else {
      // Shorter than the group: its mu padded with zeros, its mask 0 over the padding.
      auto mu =
          estimator_->AllocateProvider(static_cast<size_t>(mel_bins_) * p.frames * sizeof(float));
      if (!mu.ok()) return mu.status();
      const TensorView own = mu->View(ElementType::kFloat, {1, mel_bins_, p.frames});
      if (absl::Status s = RunEncoder(p, own, batch->Spks(pair)); !s.ok()) return s;
      if (absl::Status s = glue_->PadFrames(own, batch->Mu(pair)); !s.ok()) return s;
      if (absl::Status s = batch->SetValidFrames(pair, p.frames); !s.ok()) return s;
    }
    if (p.prompt_frames > 0) {
      std::vector<float> cond(static_cast<size_t>(mel_bins_) * frames, 0.0f);
      for (int b = 0; b < mel_bins_; ++b) {
        std::copy_n(p.cond.begin() + static_cast<size_t>(b) * p.frames, p.frames,
                    cond.begin() + static_cast<size_t>(b) * frames);
      }
      absl::Status s = glue_->Copy({ElementType::kFloat, cond.data(), {1, mel_bins_, frames}},
                                   batch->Cond(pair));
      if (!s.ok()) return s;
    }
  }
  // The fixed noise sliced to the length, the same for every request (flow_matching.py:222).
  if (absl::Status s = batch->SetNoise(Noise(frames)); !s.ok()) return s;
  // Euler as solve_euler steps it (flow_matching.py:86-122): t advances by dt and the next dt is
  // measured from the accumulated t, so the float32 rounding follows upstream's.
  const std::vector<float> span = CosineSchedule(n_timesteps_);
  float t = span[0], dt = span[1] - span[0];
  const float w_cond = 1.0f + cfg_rate_, w_uncond = cfg_rate_;
  for (int step = 1; step <= n_timesteps_; ++step) {
    estimator_calls_.fetch_add(1, std::memory_order_relaxed);
    absl::Status s = batch->Step(estimator, estimator_out_, t, dt, w_cond, w_uncond);
    if (!s.ok()) return s;
    t += dt;
    if (step < n_timesteps_) dt = span[step + 1] - t;
  }
  return batch;
}

void FlowMatcher::SolveGrouped(std::span<const Prepared* const> prepared, const PairSink& take,
                               std::vector<absl::Status>& errors) const {
  // By length, or length bucket: one estimator call serves a group when the batch axis is
  // dynamic.
  std::map<std::pair<bool, int>, std::vector<size_t>> by_frames;
  for (size_t i = 0; i < prepared.size(); ++i) {
    const Prepared* p = prepared[i];
    if (p != nullptr) by_frames[{p->chunk_masked, ShareKey(p->frames)}].push_back(i);
  }
  for (const auto& [key, members] : by_frames) {
    const size_t per_call = estimator_batch_ == 0 ? members.size() : 1;
    for (size_t start = 0; start < members.size(); start += per_call) {
      std::vector<const Prepared*> group;
      for (size_t j = start; j < std::min(members.size(), start + per_call); ++j) {
        group.push_back(prepared[members[j]]);
      }
      auto solved = Solve(group);
      for (size_t k = 0; k < group.size(); ++k) {
        const size_t i = members[start + k];
        errors[i] = solved.ok() ? take(i, *solved, static_cast<int>(k)) : solved.status();
      }
    }
  }
}

void FlowMatcher::SolveAll(std::span<const FlowRequest> requests, const SliceSink& take,
                           std::vector<absl::Status>& errors) const {
  errors.assign(requests.size(), absl::OkStatus());
  std::vector<std::optional<Prepared>> prepared(requests.size());
  std::vector<const Prepared*> ready(requests.size(), nullptr);
  for (size_t i = 0; i < requests.size(); ++i) {
    auto p = Prepare(requests[i], /*stream=*/false);
    if (!p.ok()) {
      errors[i] = p.status();
      continue;
    }
    prepared[i] = std::move(*p);
    ready[i] = &*prepared[i];
  }
  SolveGrouped(
      ready,
      [&](size_t i, const FlowBatch& batch, int pair) {
        // Without the prompt frames (flow.py:279).
        return take(i, batch, pair, ready[i]->prompt_frames, ready[i]->frames);
      },
      errors);
}

std::vector<absl::StatusOr<FlowMel>> FlowMatcher::RunBatch(
    std::span<const FlowRequest> requests) const {
  std::vector<FlowMel> mels(requests.size());
  std::vector<absl::Status> errors;
  SolveAll(
      requests,
      [&](size_t i, const FlowBatch& batch, int pair, int first, int end) {
        return SliceToHost(batch, pair, first, end, mels[i]);
      },
      errors);
  return Outcomes(errors, mels);
}

std::vector<absl::StatusOr<ProviderMel>> FlowMatcher::RunBatchOnProvider(
    std::span<const FlowRequest> requests) const {
  std::vector<ProviderMel> mels(requests.size());
  std::vector<absl::Status> errors;
  SolveAll(
      requests,
      [&](size_t i, const FlowBatch& batch, int pair, int first, int end) -> absl::Status {
        ProviderMel& mel = mels[i];
        mel.bins = mel_bins_;
        mel.frames = end - first;
        auto buffer = estimator_->AllocateProvider(static_cast<size_t>(mel.bins) * mel.frames *
                                                   sizeof(float));
        if (!buffer.ok()) return buffer.status();
        mel.values = std::move(*buffer);
        return glue_->SliceFrames(batch.X(), 2 * pair, first, end, mel.View());
      },
      errors);
  return Outcomes(errors, mels);
}

absl::StatusOr<FlowMel> FlowMatcher::Download(const ProviderMel& mel) const {
  FlowMel host{mel.bins, mel.frames,
               std::vector<float>(static_cast<size_t>(mel.bins) * mel.frames)};
  absl::Status copied =
      glue_->Copy(mel.View(), {ElementType::kFloat, host.values.data(), {1, mel.bins, mel.frames}});
  if (!copied.ok()) return copied;
  return host;
}

absl::Status FlowMatcher::SliceToHost(const FlowBatch& batch, int pair, int first, int end,
                                      FlowMel& mel) const {
  mel = {mel_bins_, end - first,
         std::vector<float>(static_cast<size_t>(mel_bins_) * (end - first))};
  return glue_->SliceFrames(batch.X(), 2 * pair, first, end,
                            {ElementType::kFloat, mel.values.data(), {1, mel_bins_, end - first}});
}

absl::StatusOr<FlowMel> FlowMatcher::Run(const FlowRequest& request) const {
  return std::move(RunBatch(std::span<const FlowRequest>(&request, 1)).front());
}

std::vector<float> FlowMatcher::Noise(int frames) const {
  std::vector<float> x(static_cast<size_t>(mel_bins_) * frames);
  for (int b = 0; b < mel_bins_; ++b) {
    std::copy_n(noise_.begin() + static_cast<size_t>(b) * noise_frames_, frames,
                x.begin() + static_cast<size_t>(b) * frames);
  }
  return x;
}

FlowMel FlowMatcher::Slice(const std::vector<float>& x, int frames, int first, int end) const {
  FlowMel mel{mel_bins_, end - first, {}};
  mel.values.reserve(static_cast<size_t>(mel.bins) * mel.frames);
  for (int b = 0; b < mel_bins_; ++b) {
    auto row = x.begin() + static_cast<size_t>(b) * frames;
    mel.values.insert(mel.values.end(), row + first, row + end);
  }
  return mel;
}

absl::StatusOr<FlowMel> FlowMatcher::RunPrefix(const FlowRequest& request, size_t token_offset,
                                               bool finalize) const {
  const Hop hop{request, token_offset, finalize};
  return std::move(RunPrefixBatch(std::span<const Hop>(&hop, 1)).front());
}

int FlowMatcher::HopFrames(const Hop& hop) const {
  const bool stream = !hop.finalize && stream_encoder_ != nullptr;
  const size_t tokens = hop.request.prompt_tokens.size() + hop.request.tokens.size() -
                        (stream ? static_cast<size_t>(pre_lookahead_len_) : 0);
  return static_cast<int>(tokens) * token_mel_ratio_;
}

std::vector<absl::StatusOr<FlowMel>> FlowMatcher::RunPrefixBatch(std::span<const Hop> hops) const {
  std::vector<absl::Status> errors(hops.size());
  std::vector<FlowMel> mels(hops.size());
  // Each hop's encoder input and the frames [first, end) of its Euler state it hands on.
  struct Planned {
    Prepared prepared;
    int first = 0, end = 0;
  };
  std::vector<std::optional<Planned>> planned(hops.size());
  std::vector<const Prepared*> ready(hops.size(), nullptr);
  for (size_t i = 0; i < hops.size(); ++i) {
    const Hop& hop = hops[i];
    // The mel a hop hands on ends where its tokens' frames end: all of them when finalizing,
    // before the lookahead's otherwise (flow.py:268-269 with the context split off).
    const size_t lookahead = hop.finalize ? 0 : static_cast<size_t>(pre_lookahead_len_);
    if (hop.token_offset + lookahead >= hop.request.tokens.size()) {
      errors[i] = core::InvalidArgument(
          "flow request: token_offset " + std::to_string(hop.token_offset) +
          " leaves no frames of " + std::to_string(hop.request.tokens.size()) + " tokens" +
          (hop.finalize ? "" : " (the last " + std::to_string(lookahead) + " are lookahead)"));
      continue;
    }
    // The final hop is Run's path (token2wav's finalize call, model.py:364-369). Without the
    // stream graph a non-final hop is approximated by it too, without the lookahead's frames.
    // With the chunk-masked estimator (CosyVoice3) the non-final hops run it: token2wav passes
    // them streaming=stream (model.py:357, :434); the final call passes none, so streaming=False
    // and full attention (model.py:367-373).
    const bool stream = !hop.finalize && stream_encoder_ != nullptr;
    auto p = Prepare(hop.request, stream);
    if (!p.ok()) {
      errors[i] = p.status();
      continue;
    }
    p->chunk_masked = !hop.finalize && stream_estimator_ != nullptr;
    const int first = p->prompt_frames + static_cast<int>(hop.token_offset) * token_mel_ratio_;
    const int end = stream ? p->frames : p->frames - static_cast<int>(lookahead) * token_mel_ratio_;
    planned[i] = Planned{*std::move(p), first, end};
    ready[i] = &planned[i]->prepared;
  }
  SolveGrouped(
      ready,
      [&](size_t i, const FlowBatch& batch, int pair) {
        return SliceToHost(batch, pair, planned[i]->first, planned[i]->end, mels[i]);
      },
      errors);
  return Outcomes(errors, mels);
}

}  // namespace voxserve::engine::cosyvoice
