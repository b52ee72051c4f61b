// CosyVoice2 and CosyVoice3 bundles side by side, end to end through the engine's runner (LLM,
// flow, HiFT) on the same speech length: random weights stop where they like (CosyVoice3's 200
// stop ids end its pieces within a few tokens), so the LLM is forced to pick `tokens` distinct
// tokens and then a stop id (the logp hook the tests use: the step's compute is unchanged).
// Per bundle: one whole piece (the LLM's time until its last token, then flow + HiFT) and one
// streaming piece on upstream's hop schedule (time to the first chunk, and to the end); the
// real-time factor is wall time over audio time. Bundles alternate within each repeat, and the
// best of the repeats is printed, with CosyVoice3's figures over the first bundle's.
//
//   cosyvoice_rtf_bench BUNDLE [BUNDLE...] [tokens=100] [repeats=2] [provider=cpu|cuda]
//                       [threads=N]
//
// Each engine is loaded for its measurement and dropped after (real-size bundles hold ~3 GB).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "engine/cosyvoice/cosyvoice_engine.h"
#include "engine/cosyvoice/cosyvoice_runner.h"
#include "engine/cosyvoice/warmup_prompt.h"

namespace voxserve::engine::cosyvoice {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kText[] = "The sky is blue.";  // zero-shot: min_len 2x, max_len 20x its tokens
constexpr int64_t kSilent[] = {1, 2, 28, 29, 55, 248, 494, 2241, 2242, 2322, 2323};

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// `n` tokens none of which is silent (CosyVoice3 would drop runs of them) or repeats within RAS's
// window of 10 (the sampler would resample it).
std::vector<int64_t> ForcedTokens(int n) {
  std::vector<int64_t> tokens;
  for (int64_t k = 0; static_cast<int>(tokens.size()) < n; ++k) {
    const int64_t token = (131 * k + 7) % 6561;
    if (std::find(std::begin(kSilent), std::end(kSilent), token) == std::end(kSilent)) {
      tokens.push_back(token);
    }
  }
  return tokens;
}

struct Figures {
  double load_s = 0, clone_s = 0;
  double llm_s = 0, whole_s = 0, audio_s = 0;  // whole piece
  double first_chunk_s = 0, stream_s = 0;      // streaming piece
  int chunks = 0;
  size_t prompt_tokens = 0;  // the cloned voice's
};

std::unique_ptr<CosyVoiceRunner> Forced(CosyVoiceEngine& engine, const std::vector<int64_t>& t) {
  auto runner = engine.CreateRunner();
  if (!runner.ok()) {
    std::fprintf(stderr, "runner: %s\n", runner.status().ToString().c_str());
    return nullptr;
  }
  std::unique_ptr<CosyVoiceRunner> cv(dynamic_cast<CosyVoiceRunner*>(runner->release()));
  auto seen = std::make_shared<std::map<uint64_t, size_t>>();
  const int64_t stop = engine.manifest().special_ids.stop_tokens.front();
  cv->decoder().SetLogpHook([seen, t, stop](uint64_t id, std::span<float> logp) {
    const size_t n = (*seen)[id]++;
    std::fill(logp.begin(), logp.end(), -std::numeric_limits<float>::infinity());
    logp[static_cast<size_t>(n < t.size() ? t[n] : stop)] = 0;
  });
  return cv;
}

// One segment to its end. Returns false on an error (printed).
bool Speak(CosyVoiceEngine& engine, const std::shared_ptr<const VoiceProfile>& voice,
           const std::vector<int64_t>& tokens, Figures& f, bool streaming) {
  auto runner = Forced(engine, tokens);
  if (!runner) return false;
  const auto started = Clock::now();
  if (absl::Status begun = runner->Begin(1, {kText, "v", 1.0, voice}); !begun.ok()) {
    std::fprintf(stderr, "begin: %s\n", begun.ToString().c_str());
    return false;
  }
  double audio = 0, llm = 0, first = 0;
  int chunks = 0;
  while (runner->Active() > 0) {
    for (SequenceStep& step : runner->Step()) {
      if (!step.chunk.samples.empty()) {
        if (chunks++ == 0) first = Seconds(started);
        audio += step.chunk.DurationSeconds();
      }
      if (step.end && !step.end->ok()) {
        std::fprintf(stderr, "segment: %s\n", step.end->ToString().c_str());
        return false;
      }
    }
    const StreamRunnerStats stats = runner->Stats();
    if (llm == 0 && stats.decoding == 0 && stats.prefill_waiting == 0) llm = Seconds(started);
  }
  const double total = Seconds(started);
  if (streaming) {
    f.first_chunk_s = first;
    f.stream_s = total;
    f.chunks = chunks;
  } else {
    f.llm_s = llm;
    f.whole_s = total;
    f.audio_s = audio;
  }
  return true;
}

bool Measure(const std::string& bundle, const onnx::OnnxSessionConfig& session, int tokens,
             Figures& f) {
  const std::vector<int64_t> forced = ForcedTokens(tokens);
  for (bool streaming : {false, true}) {
    CosyVoiceEngineConfig config;
    config.model_id = "bench";
    config.bundle_path = bundle;
    config.streaming = streaming;
    config.warmup_synthesis = "off";
    config.session = session;
    config.max_active = 1;
    auto started = Clock::now();
    auto engine = CosyVoiceEngine::Create(config);
    if (!engine.ok()) {
      std::fprintf(stderr, "%s: %s\n", bundle.c_str(), engine.status().ToString().c_str());
      return false;
    }
    if (!streaming) f.load_s = Seconds(started);
    started = Clock::now();
    const std::string wav = SyntheticPromptWav();
    auto profile = (*engine)->CloneVoice(
        {{reinterpret_cast<const uint8_t*>(wav.data()), wav.size()}, kWarmupTranscript});
    if (!profile.ok()) {
      std::fprintf(stderr, "clone: %s\n", profile.status().ToString().c_str());
      return false;
    }
    if (!streaming) f.clone_s = Seconds(started);
    f.prompt_tokens = profile->tensors.at("prompt_speech_tokens").ints.size();
    auto voice = std::make_shared<const VoiceProfile>(*std::move(profile));
    Figures warm;  // one short unmeasured piece: the arenas and the shapes of the first calls
    if (!Speak(**engine, voice, ForcedTokens(40), warm, streaming)) return false;
    if (!Speak(**engine, voice, forced, f, streaming)) return false;
  }
  return true;
}

int Run(int argc, char** argv) {
  std::vector<std::string> bundles;
  int tokens = 100, repeats = 2;
  onnx::OnnxSessionConfig session;
  for (int i = 1; i < argc; ++i) {
    std::pair<std::string, std::string> kv = absl::StrSplit(argv[i], absl::MaxSplits('=', 1));
    bool ok = true;
    if (kv.second.empty() && std::string(argv[i]).find('=') == std::string::npos) {
      bundles.push_back(argv[i]);
    } else if (kv.first == "tokens") {
      ok = absl::SimpleAtoi(kv.second, &tokens) && tokens >= 50 && tokens <= 300;
    } else if (kv.first == "repeats") {
      ok = absl::SimpleAtoi(kv.second, &repeats) && repeats >= 1;
    } else if (kv.first == "threads") {
      ok = absl::SimpleAtoi(kv.second, &session.intra_op_threads) && session.intra_op_threads >= 1;
    } else if (kv.first == "provider") {
      session.execution_provider = kv.second;
      ok = kv.second == "cpu" || kv.second == "cuda";
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "bad argument '%s' (tokens: 50..300)\n", argv[i]);
      return 2;
    }
  }
  if (bundles.empty()) {
    std::fprintf(stderr,
                 "usage: %s BUNDLE [BUNDLE...] [tokens=100] [repeats=2] [provider=cpu|cuda] "
                 "[threads=N]\n",
                 argv[0]);
    return 2;
  }
  std::vector<Figures> best(bundles.size());
  for (int r = 0; r < repeats; ++r) {
    for (size_t b = 0; b < bundles.size(); ++b) {
      Figures f;
      if (!Measure(bundles[b], session, tokens, f)) return 1;
      std::printf(
          "repeat %d %s: whole %.2f s (LLM %.2f s) for %.2f s of audio; streaming first "
          "chunk %.2f s, all %.2f s in %d chunks\n",
          r, bundles[b].c_str(), f.whole_s, f.llm_s, f.audio_s, f.first_chunk_s, f.stream_s,
          f.chunks);
      std::fflush(stdout);
      Figures& keep = best[b];
      if (r == 0 || f.whole_s < keep.whole_s) {
        keep.whole_s = f.whole_s;
        keep.llm_s = f.llm_s;
        keep.audio_s = f.audio_s;
        keep.load_s = f.load_s;
        keep.clone_s = f.clone_s;
        keep.prompt_tokens = f.prompt_tokens;
      }
      if (r == 0 || f.stream_s < keep.stream_s) {
        keep.first_chunk_s = f.first_chunk_s;
        keep.stream_s = f.stream_s;
        keep.chunks = f.chunks;
      }
    }
  }
  std::printf(
      "\n%d forced tokens (%.2f s of audio) after a %zu-token voice prompt, %s, best of %d\n",
      tokens, tokens * 0.04, best[0].prompt_tokens, session.execution_provider.c_str(), repeats);
  std::printf("%-44s %7s %7s %9s %9s %9s %7s %7s %7s\n", "bundle", "load s", "clone s", "LLM s",
              "t2w s", "RTF", "1st s", "strm s", "x[0]");
  for (size_t b = 0; b < bundles.size(); ++b) {
    const Figures& f = best[b];
    const double rtf = f.whole_s / f.audio_s;
    const double ratio = rtf / (best[0].whole_s / best[0].audio_s);
    std::printf("%-44s %7.1f %7.2f %9.2f %9.2f %9.3f %7.2f %7.2f %7.2f\n", bundles[b].c_str(),
                f.load_s, f.clone_s, f.llm_s, f.whole_s - f.llm_s, rtf, f.first_chunk_s, f.stream_s,
                ratio);
  }
  return 0;
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice

int main(int argc, char** argv) { return voxserve::engine::cosyvoice::Run(argc, argv); }
