// CosyVoice2's LLM alone (LlmDecoder over a bundle's llm_step graph), no server, no flow or
// HiFT: decode-only ms per step and tokens/s at each batch size and KV capacity, and what one
// newcomer's prefill costs the running rows (prefill=P: a P-position prefill alone).
// bench/cosyvoice_bench.sh prints these beside the served figures, so the LLM's own rate and what
// the flow + HiFT inside the step loop take from it can be told apart.
//
//   cosyvoice_llm_bench BUNDLE [batches=1,4,16] [steps=24] [intra_op_threads=0] [provider=cpu]
//                       [capacities=1024] [precision=auto] [cuda_graphs=auto] [attention=flash]
//                       [prefill=100,300] [optimized=PATH]
// (the first five positional; capacities a list: the step's cost should not grow with it, the
// attention reading each row's filled slots only; optimized=PATH: ORT writes the optimized step
// graph there, where scripts/gpu-check.sh counts the Memcpy nodes)
//   cosyvoice_llm_bench --compare BUNDLE OTHER_BUNDLE [requests=4]
//
// --compare: the first token's log-probabilities (the prefill's, as greedy decoding sees them)
// of the same requests through two bundles' LLMs, e.g. fp32 and its int8 copy: the largest
// absolute difference, the same over the top-25 tokens RAS samples from, and whether the argmax
// agrees. (verify-bundle's llm.prefill golden does the same against upstream, but a real-size
// verify-bundle also runs hundreds of greedy steps and full flows: minutes.)
//
// Each point also prints the bytes one decode step moved between host memory and the provider's
// memory where the KV cache is (LlmStepStats: the inputs and slot indices in, the logits out; on
// CUDA these cross PCIe, on the CPU provider they are counted but not copied) and the bytes of
// new keys and values written into the cache's slots there.
//
// Each point admits `batch` sequences like a served request of bench/cosyvoice_bench.sh (10
// prompt-text + 5 text ids, 55 prompt speech tokens: the goldens' 2.2 s prompt at 25 tokens/s),
// prefills them (not timed as decode), then times `steps` batched decode steps. Stop ids are
// masked (a logp hook) so that every row runs the whole point, as random weights almost always do.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "engine/cosyvoice/bundle_manifest.h"
#include "engine/cosyvoice/llm_decoder.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace voxserve::engine::cosyvoice {
namespace {

constexpr int kPromptText = 10, kText = 5, kPromptSpeech = 55;

LlmRequest BenchRequest(int k) {
  LlmRequest r;
  for (int i = 0; i < kPromptText; ++i) r.prompt_text_ids.push_back(1000 + 7 * i + k);
  for (int i = 0; i < kText; ++i) r.text_ids.push_back(2000 + 11 * i + k);
  for (int i = 0; i < kPromptSpeech; ++i) r.prompt_speech_tokens.push_back((97 * i + k) % 6561);
  r.seed = 1234 + k;
  return r;
}

// Log-probabilities of each request's first token (one Step: the prefills).
absl::StatusOr<std::vector<std::vector<float>>> FirstLogp(const std::string& bundle, int requests) {
  auto manifest = LoadBundleManifest(bundle);
  if (!manifest.ok()) return manifest.status();
  LlmDecoderConfig config;
  config.max_active = requests;
  config.max_prefills_per_step = requests;
  config.capacity = 256;
  auto decoder = LlmDecoder::Create(*manifest, bundle, config);
  if (!decoder.ok()) return decoder.status();
  std::vector<std::vector<float>> out(requests);
  (*decoder)->SetLogpHook([&out](uint64_t seq, std::span<float> logp) {
    if (out[seq].empty()) out[seq].assign(logp.begin(), logp.end());
  });
  for (int k = 0; k < requests; ++k) {
    LlmRequest r = BenchRequest(k);
    r.greedy = true;
    if (auto s = (*decoder)->Admit(k, std::move(r)); !s.ok()) return s;
  }
  if (auto events = (*decoder)->Step(); !events.ok()) return events.status();
  return out;
}

int Compare(const std::string& a, const std::string& b, int requests) {
  auto la = FirstLogp(a, requests);
  auto lb = la.ok() ? FirstLogp(b, requests) : la;
  if (!la.ok() || !lb.ok()) {
    std::fprintf(stderr, "%s\n", std::string((la.ok() ? lb : la).status().message()).c_str());
    return 1;
  }
  for (int k = 0; k < requests; ++k) {
    const auto& x = (*la)[k];
    const auto& y = (*lb)[k];
    std::vector<size_t> order(x.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::partial_sort(order.begin(), order.begin() + 25, order.end(),
                      [&x](size_t i, size_t j) { return x[i] > x[j]; });
    double all = 0, top = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isfinite(x[i]) && std::isfinite(y[i]))
        all = std::max(all, double(std::fabs(x[i] - y[i])));
    }
    for (int i = 0; i < 25; ++i) top = std::max(top, double(std::fabs(x[order[i]] - y[order[i]])));
    const size_t argmax_b = std::max_element(y.begin(), y.end()) - y.begin();
    std::printf(
        "{\"request\": %d, \"logp_max_abs_diff\": %.4g, \"top25_max_abs_diff\": %.4g, "
        "\"top1_logp\": %.4g, \"argmax_equal\": %s}\n",
        k, all, top, x[order[0]], order[0] == argmax_b ? "true" : "false");
  }
  return 0;
}

// `prefill` positions of prompt: 10 prompt-text ids, 5 text ids, the rest prompt speech tokens.
LlmRequest PrefillRequest(int positions) {
  LlmRequest r = BenchRequest(0);
  r.prompt_speech_tokens.resize(static_cast<size_t>(positions - 2 - kPromptText - kText));
  for (size_t i = 0; i < r.prompt_speech_tokens.size(); ++i) {
    r.prompt_speech_tokens[i] = static_cast<int64_t>((97 * i) % 6561);
  }
  return r;
}

struct Options {
  std::string bundle;
  std::vector<int> batches = {1, 4, 16}, capacities = {1024}, prefills;
  int steps = 24, threads = 0;
  std::string provider = "cpu";
  LlmRuntimeOptions runtime;
  std::string optimized;  // ORT's optimized step graph written here (Memcpy nodes counted)
};

bool ParseList(const std::string& text, int min, int max, std::vector<int>& out) {
  out.clear();
  for (auto part : absl::StrSplit(text, ',')) {
    int v = 0;
    if (!absl::SimpleAtoi(part, &v) || v < min || v > max) return false;
    out.push_back(v);
  }
  return !out.empty();
}

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

void PrintFailure(const absl::Status& status) {
  std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
}

// Decode-only steps of `batch` rows at `capacity` slots: one JSON line.
int DecodePoint(const BundleManifest& manifest, const Options& o, int batch, int capacity,
                bool dump_optimized) {
  LlmDecoderConfig config;
  config.max_active = batch;
  config.capacity = capacity;
  config.runtime = o.runtime;
  config.session.intra_op_threads = o.threads;
  config.session.execution_provider = o.provider;
  if (dump_optimized) config.session.optimized_model_path = o.optimized;
  auto decoder = LlmDecoder::Create(manifest, o.bundle, config);
  if (!decoder.ok()) {
    PrintFailure(decoder.status());
    return 1;
  }
  LlmDecoder& d = **decoder;
  d.SetLogpHook([](uint64_t, std::span<float> logp) {
    for (size_t s = 6561; s < logp.size(); ++s) logp[s] = -std::numeric_limits<float>::infinity();
  });
  for (int k = 0; k < batch; ++k) {
    if (auto s = d.Admit(k, BenchRequest(k)); !s.ok()) {
      PrintFailure(s);
      return 1;
    }
  }
  double prefill_ms = 0, last_prefill_ms = 0;
  int64_t prefill_tokens = 0;
  while (d.queued() > 0) {  // one prefill per Step (max_prefills_per_step 1)
    if (auto events = d.Step(); !events.ok()) {
      PrintFailure(events.status());
      return 1;
    }
    prefill_ms += d.last_step().prefill_ms;
    last_prefill_ms = d.last_step().prefill_ms;
    prefill_tokens = d.last_step().prefill_tokens;
  }
  double decode_ms = 0;
  int64_t tokens = 0, to_provider = 0, to_host = 0, written = 0;
  std::vector<double> step_ms;
  for (int i = 0; i < o.steps; ++i) {
    if (auto events = d.Step(); !events.ok()) {
      PrintFailure(events.status());
      return 1;
    }
    decode_ms += d.last_step().decode_ms;
    step_ms.push_back(d.last_step().decode_ms);
    tokens += d.last_step().decoded_rows;
    to_provider += d.last_step().host_to_provider_bytes;
    to_host += d.last_step().provider_to_host_bytes;
    written += d.last_step().cache_written_bytes;
  }
  std::sort(step_ms.begin(), step_ms.end());
  const LlmStepGraph& g = d.graph();
  std::printf(
      "{\"batch\": %d, \"decode_steps\": %d, \"tokens\": %lld, \"ms_per_step\": %.3f, "
      "\"ms_per_step_median\": %.3f, \"tokens_per_s\": %.1f, \"prefill_positions\": %lld, "
      "\"prefill_ms_mean\": %.2f, \"prefill_ms_last\": %.2f, \"capacity\": %d, "
      "\"cache_bytes\": %lld, \"step_host_to_provider_bytes\": %lld, "
      "\"step_provider_to_host_bytes\": %lld, \"step_cache_written_bytes\": %lld, "
      "\"cache_in_host_memory\": %s, \"precision\": %s, \"cuda_graphs\": %s, \"provider\": %s}\n",
      batch, o.steps, static_cast<long long>(tokens), decode_ms / o.steps,
      step_ms[step_ms.size() / 2], tokens / (decode_ms / 1000),
      static_cast<long long>(prefill_tokens), prefill_ms / batch, last_prefill_ms, capacity,
      static_cast<long long>(d.cache_bytes()), static_cast<long long>(to_provider / o.steps),
      static_cast<long long>(to_host / o.steps), static_cast<long long>(written / o.steps),
      d.cache_in_host_memory() ? "true" : "false", Quoted(g.precision()).c_str(),
      g.cuda_graphs() ? "true" : "false", Quoted(o.provider).c_str());
  std::fflush(stdout);
  return 0;
}

// One newcomer's prefill of `positions` into an idle decoder, repeated: one JSON line.
int PrefillPoint(const BundleManifest& manifest, const Options& o, int positions) {
  LlmDecoderConfig config;
  config.max_active = 1;
  config.capacity = positions + 20 * kText;  // prompt + max_len - 1 slots, and one spare
  config.runtime = o.runtime;
  config.session.intra_op_threads = o.threads;
  config.session.execution_provider = o.provider;
  auto decoder = LlmDecoder::Create(manifest, o.bundle, config);
  if (!decoder.ok()) {
    PrintFailure(decoder.status());
    return 1;
  }
  std::vector<double> ms;
  for (int run = 0; run < 6; ++run) {
    if (auto s = (*decoder)->Admit(run, PrefillRequest(positions)); !s.ok()) {
      PrintFailure(s);
      return 1;
    }
    auto events = (*decoder)->Step();
    if (!events.ok()) {
      PrintFailure(events.status());
      return 1;
    }
    if (run > 0) ms.push_back((*decoder)->last_step().prefill_ms);  // the first one warms up
    if (auto s = (*decoder)->Release(run); !s.ok() && !absl::IsNotFound(s)) {
      PrintFailure(s);
      return 1;
    }
  }
  std::sort(ms.begin(), ms.end());
  std::printf(
      "{\"prefill_positions\": %d, \"prefill_ms_min\": %.3f, \"prefill_ms_median\": %.3f, "
      "\"runs\": %zu, \"precision\": %s, \"provider\": %s}\n",
      positions, ms.front(), ms[ms.size() / 2], ms.size(),
      Quoted((*decoder)->graph().precision()).c_str(), Quoted(o.provider).c_str());
  std::fflush(stdout);
  return 0;
}

int Run(int argc, char** argv) {
  if (argc >= 4 && std::string(argv[1]) == "--compare") {
    int requests = 4;
    if (argc > 4 && (!absl::SimpleAtoi(argv[4], &requests) || requests < 1 || requests > 64)) {
      std::fprintf(stderr, "requests: 1..64\n");
      return 2;
    }
    return Compare(argv[2], argv[3], requests);
  }
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s BUNDLE [batches=1,4,16] [steps=24] [threads=0] [provider=cpu] "
                 "[capacities=1024] [precision=auto] [cuda_graphs=auto] [prefill=100,300] "
                 "[optimized=PATH]\n",
                 argv[0]);
    return 2;
  }
  Options o;
  o.bundle = argv[1];
  // Positional: batches, steps, threads, provider, capacities; then key=value.
  int position = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string key = eq == std::string::npos ? "" : arg.substr(0, eq);
    const std::string value = eq == std::string::npos ? arg : arg.substr(eq + 1);
    bool ok = true;
    if (key.empty()) {
      switch (position++) {
        case 0:
          ok = ParseList(value, 1, 256, o.batches);
          break;
        case 1:
          // max_len = 20 x 5 text ids: a row ends after 100 tokens.
          ok = absl::SimpleAtoi(value, &o.steps) && o.steps >= 1 && o.steps <= kText * 20 - 1;
          break;
        case 2:
          ok = absl::SimpleAtoi(value, &o.threads) && o.threads >= 0;
          break;
        case 3:
          o.provider = value;
          break;
        case 4:
          // A row needs prompt + max_len - 1 = 72 + 99 slots (LlmDecoder refuses less).
          ok = ParseList(value, 171, 65536, o.capacities);
          break;
        default:
          ok = false;
      }
    } else if (key == "precision") {
      o.runtime.precision = value;
    } else if (key == "cuda_graphs") {
      o.runtime.cuda_graphs = value;
    } else if (key == "attention") {
      o.runtime.attention = value;
    } else if (key == "prefill") {
      ok = ParseList(value, kPromptText + kText + 3, 30000, o.prefills);
    } else if (key == "optimized") {
      o.optimized = value;
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr,
                   "bad argument '%s' (batches 1..256, steps 1..%d, threads >= 0, "
                   "capacities >= 171, prefill >= %d positions)\n",
                   arg.c_str(), kText * 20 - 1, kPromptText + kText + 3);
      return 2;
    }
  }
  if (absl::Status s = o.runtime.Validate(); !s.ok()) {
    PrintFailure(s);
    return 2;
  }
  auto manifest = LoadBundleManifest(o.bundle);
  if (!manifest.ok()) {
    PrintFailure(manifest.status());
    return 1;
  }
  bool first = true;  // the optimized graph is written once (it is the same for every point)
  for (int capacity : o.capacities) {
    for (int batch : o.batches) {
      if (int rc = DecodePoint(*manifest, o, batch, capacity, first); rc != 0) return rc;
      first = false;
    }
  }
  for (int positions : o.prefills) {
    if (int rc = PrefillPoint(*manifest, o, positions); rc != 0) return rc;
  }
  return 0;
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice

int main(int argc, char** argv) {
  // Figures on stdout (JSON lines), logs (ONNX Runtime's, the decoder's) on stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("stderr"));
  return voxserve::engine::cosyvoice::Run(argc, argv);
}
