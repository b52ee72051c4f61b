// CosyVoice2's LLM alone (LlmDecoder over a bundle's llm_backbone + llm_decoder), no server, no
// flow or HiFT: decode-only tokens/s at each batch size, and what one newcomer's prefill costs
// the running rows. bench/cosyvoice_bench.sh prints these beside the served figures, so the LLM's
// own rate and what the flow + HiFT inside the step loop take from it can be told apart.
//
//   cosyvoice_llm_bench BUNDLE [batches=1,4,16] [steps=24] [intra_op_threads=0] [provider=cpu]
//                       [capacity=1024]
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
                 "usage: %s BUNDLE [batches=1,4,16] [steps=24] [threads=0] [provider] [capacity]\n",
                 argv[0]);
    return 2;
  }
  const std::string bundle = argv[1];
  std::vector<int> batches;
  for (auto part : absl::StrSplit(argc > 2 ? argv[2] : "1,4,16", ',')) {
    int b = 0;
    if (!absl::SimpleAtoi(part, &b) || b < 1 || b > 256) {
      std::fprintf(stderr, "bad batch '%s' (1..256)\n", std::string(part).c_str());
      return 2;
    }
    batches.push_back(b);
  }
  int steps = 24, threads = 0, capacity = 1024;
  if ((argc > 3 && (!absl::SimpleAtoi(argv[3], &steps) || steps < 1 || steps > kText * 20 - 1)) ||
      (argc > 4 && (!absl::SimpleAtoi(argv[4], &threads) || threads < 0))) {
    std::fprintf(stderr, "steps: 1..%d (max_len = 20 x %d text ids), threads: >= 0\n",
                 kText * 20 - 1, kText);
    return 2;
  }
  // A row needs prompt + max_len - 1 = 70 + 2 + 99 slots (LlmDecoder refuses less).
  if (argc > 6 && (!absl::SimpleAtoi(argv[6], &capacity) || capacity < 171)) {
    std::fprintf(stderr, "capacity: >= 171 slots\n");
    return 2;
  }
  auto manifest = LoadBundleManifest(bundle);
  if (!manifest.ok()) {
    std::fprintf(stderr, "%s\n", std::string(manifest.status().message()).c_str());
    return 1;
  }
  for (int batch : batches) {
    LlmDecoderConfig config;
    config.max_active = batch;
    // Default as the served bench configures it (llm_capacity 1024): the attention spans every
    // slot, so the capacity costs time in every step.
    config.capacity = capacity;
    config.session.intra_op_threads = threads;
    if (argc > 5) config.session.execution_provider = argv[5];
    auto decoder = LlmDecoder::Create(*manifest, bundle, config);
    if (!decoder.ok()) {
      std::fprintf(stderr, "%s\n", std::string(decoder.status().message()).c_str());
      return 1;
    }
    LlmDecoder& d = **decoder;
    d.SetLogpHook([](uint64_t, std::span<float> logp) {
      for (size_t s = 6561; s < logp.size(); ++s) logp[s] = -std::numeric_limits<float>::infinity();
    });
    for (int k = 0; k < batch; ++k) {
      if (auto s = d.Admit(k, BenchRequest(k)); !s.ok()) {
        std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
        return 1;
      }
    }
    double prefill_ms = 0, last_prefill_ms = 0;
    int64_t prefill_tokens = 0;
    while (d.queued() > 0) {  // one prefill per Step (max_prefills_per_step 1)
      if (auto events = d.Step(); !events.ok()) {
        std::fprintf(stderr, "%s\n", std::string(events.status().message()).c_str());
        return 1;
      }
      prefill_ms += d.last_step().prefill_ms;
      last_prefill_ms = d.last_step().prefill_ms;
      prefill_tokens = d.last_step().prefill_tokens;
    }
    double decode_ms = 0;
    int64_t tokens = 0, to_provider = 0, to_host = 0, written = 0;
    for (int i = 0; i < steps; ++i) {
      if (auto events = d.Step(); !events.ok()) {
        std::fprintf(stderr, "%s\n", std::string(events.status().message()).c_str());
        return 1;
      }
      decode_ms += d.last_step().decode_ms;
      tokens += d.last_step().decoded_rows;
      to_provider += d.last_step().host_to_provider_bytes;
      to_host += d.last_step().provider_to_host_bytes;
      written += d.last_step().cache_written_bytes;
    }
    std::printf(
        "{\"batch\": %d, \"decode_steps\": %d, \"tokens\": %lld, \"ms_per_step\": %.1f, "
        "\"tokens_per_s\": %.1f, \"prefill_positions\": %lld, \"prefill_ms_mean\": %.1f, "
        "\"prefill_ms_last\": %.1f, \"capacity\": %d, \"cache_bytes\": %lld, "
        "\"step_host_to_provider_bytes\": %lld, \"step_provider_to_host_bytes\": %lld, "
        "\"step_cache_written_bytes\": %lld, \"cache_in_host_memory\": %s}\n",
        batch, steps, static_cast<long long>(tokens), decode_ms / steps,
        tokens / (decode_ms / 1000), static_cast<long long>(prefill_tokens), prefill_ms / batch,
        last_prefill_ms, capacity, static_cast<long long>(d.cache_bytes()),
        static_cast<long long>(to_provider / steps), static_cast<long long>(to_host / steps),
        static_cast<long long>(written / steps), d.cache_in_host_memory() ? "true" : "false");
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice

int main(int argc, char** argv) { return voxserve::engine::cosyvoice::Run(argc, argv); }
