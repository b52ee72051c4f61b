// CosyVoice2's flow stage alone (FlowMatcher: encoder + 10 CFG Euler steps), no server, no LLM or
// HiFT: milliseconds per request when `n` requests share each estimator call, against the same
// requests run one after another. Needs an estimator whose batch axis is dynamic (the export
// tool's --estimator-batch dynamic); with upstream's fixed batch of two, RunBatch runs them in
// turn and the ratio is 1 by construction.
//
//   cosyvoice_flow_bench BUNDLE [batches=1,2,4,8] [tokens=60] [spread=0] [repeats=2]
//                        [estimator=FILE] [provider=cpu|cuda] [compare=FILE]
//
// compare=FILE: also runs each point's requests with that estimator (e.g. the int8 copy
// tools/cosyvoice_export/quantize_llm.py --with-flow writes) and prints its time per request and
// how far its mel is from this one's: the largest absolute difference and the RMS difference
// over the mel's RMS.
//
// Each request is a piece of `tokens` speech tokens after the bench's 55-token prompt (the
// goldens' 2.2 s prompt; 230 mel frames in all at 60 tokens, what bench/cosyvoice_bench.sh's
// "Hi." pieces make). `spread` > 0 varies the lengths: request k has tokens - spread * k / n
// tokens; RunBatch shares calls only among requests of one length (it does not pad), so the
// calls column shows how many groups they made.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "engine/cosyvoice/bundle_manifest.h"
#include "engine/cosyvoice/flow_matcher.h"

namespace voxserve::engine::cosyvoice {
namespace {

constexpr int kPromptSpeech = 55;

struct Piece {
  std::vector<int32_t> tokens, prompt_tokens;
  std::vector<float> prompt_mel, embedding;
  FlowRequest view() const { return {tokens, prompt_tokens, prompt_mel, embedding}; }
};

Piece BenchPiece(int k, int tokens) {
  Piece p;
  for (int i = 0; i < tokens; ++i) p.tokens.push_back((131 * i + 17 * k) % 6561);
  for (int i = 0; i < kPromptSpeech; ++i) p.prompt_tokens.push_back((97 * i + k) % 6561);
  p.prompt_mel.resize(static_cast<size_t>(kPromptSpeech) * 2 * 80);
  for (size_t i = 0; i < p.prompt_mel.size(); ++i) p.prompt_mel[i] = -4.0f + 0.001f * (i % 997);
  p.embedding.resize(192);
  for (size_t i = 0; i < p.embedding.size(); ++i) p.embedding[i] = 0.01f * ((i * 7 + k) % 23);
  return p;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

int Run(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s BUNDLE [batches=1,2,4,8] [tokens=60] [spread=0] [repeats=2] "
                 "[estimator=FILE] [provider=cpu|cuda] [compare=FILE]\n",
                 argv[0]);
    return 2;
  }
  const std::string bundle = argv[1];
  std::vector<int> batches = {1, 2, 4, 8};
  int tokens = 60, spread = 0, repeats = 2;
  std::string estimator, compare;
  onnx::OnnxSessionConfig session;
  for (int i = 2; i < argc; ++i) {
    std::pair<std::string, std::string> kv = absl::StrSplit(argv[i], absl::MaxSplits('=', 1));
    bool ok = true;
    if (kv.first == "batches") {
      batches.clear();
      for (auto part : absl::StrSplit(kv.second, ',')) {
        int b = 0;
        ok = ok && absl::SimpleAtoi(part, &b) && b >= 1;
        batches.push_back(b);
      }
    } else if (kv.first == "tokens") {
      ok = absl::SimpleAtoi(kv.second, &tokens) && tokens >= 4;
    } else if (kv.first == "spread") {
      ok = absl::SimpleAtoi(kv.second, &spread) && spread >= 0 && spread < tokens;
    } else if (kv.first == "repeats") {
      ok = absl::SimpleAtoi(kv.second, &repeats) && repeats >= 1;
    } else if (kv.first == "estimator") {
      estimator = kv.second;
    } else if (kv.first == "compare") {
      compare = kv.second;
    } else if (kv.first == "provider") {
      session.execution_provider = kv.second;
      ok = kv.second == "cpu" || kv.second == "cuda";
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "bad argument '%s'\n", argv[i]);
      return 2;
    }
  }
  auto manifest = LoadBundleManifest(bundle);
  if (!manifest.ok()) {
    std::fprintf(stderr, "%s\n", manifest.status().ToString().c_str());
    return 1;
  }
  if (!estimator.empty()) manifest->graphs["flow_estimator"].file = estimator;
  auto flow = FlowMatcher::Create(*manifest, bundle, session);
  if (!flow.ok()) {
    std::fprintf(stderr, "%s\n", flow.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<FlowMatcher> other;
  if (!compare.empty()) {
    BundleManifest m = *manifest;
    m.graphs["flow_estimator"].file = compare;
    auto created = FlowMatcher::Create(m, bundle, session);
    if (!created.ok()) {
      std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
      return 1;
    }
    other = std::move(*created);
  }
  std::printf("bundle %s (%s), estimator batch %s, %d tokens after a %d-token prompt, spread %d\n",
              bundle.c_str(), session.execution_provider.c_str(),
              (*flow)->estimator_batch() == 0 ? "dynamic" : "fixed 2", tokens, kPromptSpeech,
              spread);
  std::printf("%6s %14s %14s %8s %16s\n", "n", "ms/req alone", "ms/req shared", "ratio",
              "estimator calls");
  for (int n : batches) {
    std::vector<Piece> pieces;
    for (int k = 0; k < n; ++k) pieces.push_back(BenchPiece(k, tokens - spread * k / n));
    std::vector<FlowRequest> views;
    for (const Piece& p : pieces) views.push_back(p.view());
    (void)(*flow)->Run(views.front());  // warm the arena and the shapes
    double alone = 1e30, shared = 1e30;
    int64_t calls = 0;
    std::vector<FlowMel> reference;  // the alone runs' mels, what compare= is measured against
    for (int r = 0; r < repeats; ++r) {
      reference.clear();
      auto start = std::chrono::steady_clock::now();
      for (const FlowRequest& v : views) {
        auto mel = (*flow)->Run(v);
        if (!mel.ok()) {
          std::fprintf(stderr, "%s\n", mel.status().ToString().c_str());
          return 1;
        }
        reference.push_back(*std::move(mel));
      }
      alone = std::min(alone, Seconds(start));
      const int64_t before = (*flow)->estimator_calls();
      start = std::chrono::steady_clock::now();
      for (auto& mel : (*flow)->RunBatch(views)) {
        if (!mel.ok()) {
          std::fprintf(stderr, "%s\n", mel.status().ToString().c_str());
          return 1;
        }
      }
      shared = std::min(shared, Seconds(start));
      calls = (*flow)->estimator_calls() - before;
    }
    std::printf("%6d %14.1f %14.1f %8.2f %16lld\n", n, 1e3 * alone / n, 1e3 * shared / n,
                alone / shared, static_cast<long long>(calls));
    if (other) {
      // The same requests through the other estimator, timed as the rows above are; its mels
      // against the alone runs'.
      double seconds = 1e30, worst = 0, diff2 = 0, ref2 = 0;
      std::vector<FlowMel> theirs;
      for (int r = 0; r < repeats; ++r) {
        theirs.clear();
        auto start = std::chrono::steady_clock::now();
        for (const FlowRequest& v : views) {
          auto mel = other->Run(v);
          if (!mel.ok()) {
            std::fprintf(stderr, "%s\n", mel.status().ToString().c_str());
            return 1;
          }
          theirs.push_back(*std::move(mel));
        }
        seconds = std::min(seconds, Seconds(start));
      }
      for (size_t i = 0; i < views.size(); ++i) {
        const std::vector<float>& mine = reference[i].values;
        for (size_t j = 0; j < mine.size(); ++j) {
          const double d = double{theirs[i].values[j]} - mine[j];
          worst = std::max(worst, std::fabs(d));
          diff2 += d * d;
          ref2 += double{mine[j]} * mine[j];
        }
      }
      std::printf("%6s %14.1f %14s %8.2f   compare: max |diff| %.4g, rms diff / rms %.4g\n", "",
                  1e3 * seconds / n, "(compare)", alone / seconds, worst,
                  std::sqrt(diff2 / std::max(ref2, 1e-30)));
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice

int main(int argc, char** argv) { return voxserve::engine::cosyvoice::Run(argc, argv); }
