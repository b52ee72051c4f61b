// `voxserve verify-bundle`: runs the C++ pipeline's stages on a bundle's golden inputs and
// reports the max abs error of each against the golden outputs. Stages are a list keyed by the
// golden stage name's prefix ("campplus", "llm.prefill" for "llm.prefill/0", ...), so a module
// that adds a C++ stage registers one function; goldens without one report "not implemented yet".
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/cosyvoice/bundle_manifest.h"
#include "engine/cosyvoice/npy.h"
#include "engine/onnx/onnx_session_config.h"

namespace voxserve::engine::cosyvoice {

// One entry of goldens/index.json (docs/cosyvoice-bundle.md). Owned by value.
struct GoldenStage {
  std::string name;                                    // e.g. "campplus", "llm.prefill/0"
  std::map<std::string, std::string> inputs, outputs;  // tensor key -> path in the bundle
  double atol = 0;
  std::string note;
  std::string bundle_dir;

  absl::StatusOr<NpyArray> Input(const std::string& key) const;
  absl::StatusOr<NpyArray> Output(const std::string& key) const;
};

absl::StatusOr<std::vector<GoldenStage>> LoadGoldens(const BundleManifest& manifest,
                                                     const std::string& bundle_dir);

struct StageOutcome {
  enum class Kind { kPassed, kFailed, kNotImplemented, kError };
  Kind kind = Kind::kNotImplemented;
  double max_abs_error = 0;
  std::string message;  // the error, for kError
};

// A C++ stage: runs on the golden stage's inputs, returns the max abs error over its outputs.
using StageCheck = std::function<absl::StatusOr<double>(const GoldenStage&)>;

// Element-wise max |a - b|; InvalidArgument naming `what` when the sizes differ.
absl::StatusOr<double> MaxAbsError(const std::vector<float>& found, const NpyArray& golden,
                                   const std::string& what);

// Not thread-safe (a command-line tool's object); stages hold their own sessions.
class BundleVerifier {
 public:
  // Checks the bundle (as check-model does) and loads its goldens index. The stages open their
  // graphs with `session` (one intra-op thread by default; `--execution-provider cuda` runs
  // them on the GPU, as scripts/gpu-check.sh does).
  static absl::StatusOr<std::unique_ptr<BundleVerifier>> Create(
      const std::string& bundle_dir, const onnx::OnnxSessionConfig& session = DefaultSession());
  static onnx::OnnxSessionConfig DefaultSession();

  // `atol` >= 0 replaces the goldens' tolerance for the stage (a half-precision LLM graph
  // against float32 goldens: LlmStepGraph::LogpTolerance).
  void AddStage(std::string prefix, StageCheck check, double atol = -1);
  const BundleManifest& manifest() const { return manifest_; }
  const std::string& bundle_dir() const { return dir_; }
  const onnx::OnnxSessionConfig& session_config() const { return session_; }
  // The LLM stages' step graph (verify-bundle --llm-precision): auto, fp32, fp16 or bf16.
  void set_llm_precision(std::string precision) { llm_precision_ = std::move(precision); }
  const std::string& llm_precision() const { return llm_precision_; }

  struct Result {
    std::string stage;
    double atol = 0;
    StageOutcome outcome;
  };
  std::vector<Result> Run() const;

 private:
  BundleVerifier() = default;
  std::string dir_;
  onnx::OnnxSessionConfig session_;
  BundleManifest manifest_;
  std::vector<GoldenStage> goldens_;
  std::string llm_precision_ = "auto";
  struct Stage {
    StageCheck check;
    double atol = -1;
  };
  std::map<std::string, Stage> stages_;
};

// The stages this part of the port implements: CAM++ and the speech tokenizer (PromptEncoder),
// and the exported graphs run alone on their golden inputs (estimator, flow encoder, HiFT f0
// and decoder, LLM prefill and one decode step over a preallocated cache, with the head).
absl::Status AddOnnxStages(BundleVerifier& verifier);
// The frontend's stages (frontend_stages.cc): prompt decoding + resampling, the three prompt
// features, the 2:1 alignment and the tokenizer.
absl::Status AddFrontendStages(BundleVerifier& verifier);
// The flow's stage (flow_stages.cc): flow.full, encoder + 10 CFG Euler steps (FlowMatcher).
absl::Status AddFlowStages(BundleVerifier& verifier);
// The LLM decode loop (llm_stages.cc): `llm.greedy`, the C++ loop against upstream's
// Qwen2LM.inference with argmax sampling, and `llm.ras`, RAS against upstream's on crafted logits.
absl::Status AddLlmStages(BundleVerifier& verifier);

// A table, one line per stage; the last line counts passed/failed/not implemented.
std::string FormatResults(const std::vector<BundleVerifier::Result>& results);
bool AllPassed(const std::vector<BundleVerifier::Result>& results);

}  // namespace voxserve::engine::cosyvoice
