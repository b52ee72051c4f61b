#include "server/model_commands.h"

#include <cstdio>
#include <string>
#include <string_view>

#if VOXSERVE_ONNX
#include "engine/cosyvoice/bundle_check.h"
#include "engine/cosyvoice/bundle_verifier.h"
#include "engine/cosyvoice/hift_stages.h"
#endif

namespace voxserve::server {
namespace {

constexpr int kExitProblems = 1;
constexpr int kExitUsage = 2;

#if VOXSERVE_ONNX
int CheckModel(const std::string& dir) {
  engine::cosyvoice::BundleReport report = engine::cosyvoice::CheckBundle(dir);
  std::fputs(report.Summary().c_str(), report.ok() ? stdout : stderr);
  return report.ok() ? 0 : kExitProblems;
}

int VerifyBundle(const std::string& dir, const std::string& provider,
                 const std::string& llm_precision) {
  auto session = engine::cosyvoice::BundleVerifier::DefaultSession();
  session.execution_provider = provider;
  auto verifier = engine::cosyvoice::BundleVerifier::Create(dir, session);
  if (!verifier.ok()) {
    std::fprintf(stderr, "voxserve verify-bundle: %s\n",
                 std::string(verifier.status().message()).c_str());
    return kExitProblems;
  }
  (*verifier)->set_llm_precision(llm_precision);
  for (auto add : {engine::cosyvoice::AddFrontendStages, engine::cosyvoice::AddOnnxStages,
                   engine::cosyvoice::AddFlowStages, engine::cosyvoice::AddHiftStages,
                   engine::cosyvoice::AddLlmStages}) {
    if (absl::Status status = add(**verifier); !status.ok()) {
      std::fprintf(stderr, "voxserve verify-bundle: %s\n", std::string(status.message()).c_str());
      return kExitProblems;
    }
  }
  auto results = (*verifier)->Run();
  std::fputs(engine::cosyvoice::FormatResults(results).c_str(), stdout);
  return engine::cosyvoice::AllPassed(results) ? 0 : kExitProblems;
}
#endif

}  // namespace

bool IsModelCommandLine(int argc, const char* const* argv) {
  if (argc < 2) return false;
  std::string_view command = argv[1];
  return command == "check-model" || command == "verify-bundle";
}

int RunModelCommand(int argc, const char* const* argv) {
  std::string_view command = argv[1];
  // verify-bundle DIR [--execution-provider cpu|cuda] [--llm-precision auto|fp32|fp16|bf16]:
  // the stages' graphs on that provider, the LLM's step graph of that precision.
  std::string provider = "cpu", precision = "auto";
  bool usage = argc < 3 || std::string_view(argv[2]).starts_with("-");
  for (int i = 3; i < argc && !usage; i += 2) {
    const std::string_view flag = argv[i];
    if (command != "verify-bundle" || i + 1 >= argc) {
      usage = true;
    } else if (flag == "--execution-provider") {
      provider = argv[i + 1];
    } else if (flag == "--llm-precision") {
      precision = argv[i + 1];
    } else {
      usage = true;
    }
  }
  if (usage || (provider != "cpu" && provider != "cuda") ||
      (precision != "auto" && precision != "fp32" && precision != "fp16" && precision != "bf16")) {
    std::fprintf(stderr, "usage: voxserve %s BUNDLE_DIR%s\n", argv[1],
                 command == "verify-bundle"
                     ? " [--execution-provider cpu|cuda] [--llm-precision auto|fp32|fp16|bf16]"
                     : "");
    return kExitUsage;
  }
#if VOXSERVE_ONNX
  return command == "check-model" ? CheckModel(argv[2])
                                  : VerifyBundle(argv[2], provider, precision);
#else
  std::fprintf(stderr,
               "voxserve %s: this voxserve was built without ONNX Runtime "
               "(-DVOXSERVE_ONNX=OFF); bundles cannot be opened\n",
               std::string(command).c_str());
  return kExitUsage;
#endif
}

}  // namespace voxserve::server
