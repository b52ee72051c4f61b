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

int VerifyBundle(const std::string& dir, const std::string& provider) {
  auto session = engine::cosyvoice::BundleVerifier::DefaultSession();
  session.execution_provider = provider;
  auto verifier = engine::cosyvoice::BundleVerifier::Create(dir, session);
  if (!verifier.ok()) {
    std::fprintf(stderr, "voxserve verify-bundle: %s\n",
                 std::string(verifier.status().message()).c_str());
    return kExitProblems;
  }
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
  // verify-bundle DIR [--execution-provider cpu|cuda]: the stages' graphs on that provider.
  std::string provider = "cpu";
  const bool with_provider = command == "verify-bundle" && argc == 5 &&
                             std::string_view(argv[3]) == "--execution-provider";
  if (with_provider) provider = argv[4];
  if ((argc != 3 && !with_provider) || std::string_view(argv[2]).starts_with("-") ||
      (provider != "cpu" && provider != "cuda")) {
    std::fprintf(stderr, "usage: voxserve %s BUNDLE_DIR%s\n", argv[1],
                 command == "verify-bundle" ? " [--execution-provider cpu|cuda]" : "");
    return kExitUsage;
  }
#if VOXSERVE_ONNX
  return command == "check-model" ? CheckModel(argv[2]) : VerifyBundle(argv[2], provider);
#else
  std::fprintf(stderr,
               "voxserve %s: this voxserve was built without ONNX Runtime "
               "(-DVOXSERVE_ONNX=OFF); bundles cannot be opened\n",
               std::string(command).c_str());
  return kExitUsage;
#endif
}

}  // namespace voxserve::server
