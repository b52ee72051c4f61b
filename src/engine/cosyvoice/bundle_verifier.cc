#include "engine/cosyvoice/bundle_verifier.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "core/error.h"
#include "core/read_file.h"
#include "engine/cosyvoice/bundle_check.h"
#include "nlohmann/json.hpp"

namespace voxserve::engine::cosyvoice {
namespace {

absl::StatusOr<NpyArray> ReadTensor(const GoldenStage& stage,
                                    const std::map<std::string, std::string>& side,
                                    const std::string& key, const char* kind) {
  auto it = side.find(key);
  if (it == side.end()) {
    return core::InvalidArgument("golden stage " + stage.name + " has no " + kind + " '" + key +
                                 "'");
  }
  return ReadNpy((std::filesystem::path(stage.bundle_dir) / it->second).string());
}

}  // namespace

absl::StatusOr<NpyArray> GoldenStage::Input(const std::string& key) const {
  return ReadTensor(*this, inputs, key, "input");
}

absl::StatusOr<NpyArray> GoldenStage::Output(const std::string& key) const {
  return ReadTensor(*this, outputs, key, "output");
}

absl::StatusOr<std::vector<GoldenStage>> LoadGoldens(const BundleManifest& manifest,
                                                     const std::string& bundle_dir) {
  if (manifest.goldens_index.empty()) {
    return core::NotFound("bundle " + bundle_dir +
                          " has no goldens (export it without --no-goldens)");
  }
  std::string path = (std::filesystem::path(bundle_dir) / manifest.goldens_index).string();
  auto text = core::ReadFile(path);
  if (!text) return core::NotFound(path + ": cannot be read");
  nlohmann::json root = nlohmann::json::parse(*text, nullptr, false);
  if (root.is_discarded() || !root.contains("stages") || !root["stages"].is_array()) {
    return core::InvalidArgument(path + ": expected an object with a \"stages\" list");
  }
  std::vector<GoldenStage> stages;
  for (const auto& entry : root["stages"]) {
    GoldenStage stage;
    stage.bundle_dir = bundle_dir;
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string()) {
      return core::InvalidArgument(path + ": a stage without a \"name\"");
    }
    stage.name = entry["name"].get<std::string>();
    stage.atol = entry.value("atol", 0.0);
    stage.note = entry.value("note", std::string());
    for (auto [side, out] : {std::pair{"inputs", &stage.inputs}, {"outputs", &stage.outputs}}) {
      if (!entry.contains(side)) continue;
      for (const auto& [key, rel] : entry[side].items()) {
        if (rel.is_string()) (*out)[key] = rel.get<std::string>();
      }
    }
    stages.push_back(std::move(stage));
  }
  return stages;
}

absl::StatusOr<double> MaxAbsError(const std::vector<float>& found, const NpyArray& golden,
                                   const std::string& what) {
  size_t n = golden.dtype == "float32" ? golden.floats.size() : golden.ints.size();
  if (found.size() != n) {
    return core::InvalidArgument(what + ": " + std::to_string(found.size()) +
                                 " values, golden has " + std::to_string(n) + " " +
                                 ShapeString(golden.shape));
  }
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    double want =
        golden.dtype == "float32" ? golden.floats[i] : static_cast<double>(golden.ints[i]);
    double error = std::fabs(static_cast<double>(found[i]) - want);
    if (std::isnan(error))
      return absl::InternalError(what + ": NaN at element " + std::to_string(i));
    worst = std::max(worst, error);
  }
  return worst;
}

onnx::OnnxSessionConfig BundleVerifier::DefaultSession() {
  onnx::OnnxSessionConfig config;
  config.intra_op_threads = 1;
  return config;
}

absl::StatusOr<std::unique_ptr<BundleVerifier>> BundleVerifier::Create(
    const std::string& bundle_dir, const onnx::OnnxSessionConfig& session) {
  if (absl::Status status = session.Validate(); !status.ok()) return status;
  auto manifest = LoadCheckedBundle(bundle_dir);
  if (!manifest.ok()) return manifest.status();
  auto goldens = LoadGoldens(*manifest, bundle_dir);
  if (!goldens.ok()) return goldens.status();
  std::unique_ptr<BundleVerifier> verifier(new BundleVerifier());
  verifier->dir_ = bundle_dir;
  verifier->session_ = session;
  verifier->manifest_ = std::move(*manifest);
  verifier->goldens_ = std::move(*goldens);
  return verifier;
}

void BundleVerifier::AddStage(std::string prefix, StageCheck check, double atol) {
  stages_[std::move(prefix)] = {std::move(check), atol};
}

std::vector<BundleVerifier::Result> BundleVerifier::Run() const {
  std::vector<Result> results;
  for (const GoldenStage& golden : goldens_) {
    Result result{golden.name, golden.atol, {}};
    std::string prefix = golden.name.substr(0, golden.name.find('/'));
    auto it = stages_.find(prefix);
    if (it != stages_.end() && it->second.atol >= 0) result.atol = it->second.atol;
    if (it == stages_.end()) {
      result.outcome.kind = StageOutcome::Kind::kNotImplemented;
    } else if (auto error = it->second.check(golden); !error.ok()) {
      result.outcome.kind = StageOutcome::Kind::kError;
      result.outcome.message = std::string(error.status().message());
    } else {
      result.outcome.max_abs_error = *error;
      result.outcome.kind =
          *error <= result.atol ? StageOutcome::Kind::kPassed : StageOutcome::Kind::kFailed;
    }
    results.push_back(std::move(result));
  }
  return results;
}

std::string FormatResults(const std::vector<BundleVerifier::Result>& results) {
  std::ostringstream out;
  int passed = 0, failed = 0, missing = 0;
  char line[512];
  for (const auto& r : results) {
    const StageOutcome& o = r.outcome;
    switch (o.kind) {
      case StageOutcome::Kind::kPassed:
      case StageOutcome::Kind::kFailed:
        std::snprintf(line, sizeof line, "%-24s max abs error %.3g (tolerance %.3g) %s\n",
                      r.stage.c_str(), o.max_abs_error, r.atol,
                      o.kind == StageOutcome::Kind::kPassed ? "ok" : "FAILED");
        (o.kind == StageOutcome::Kind::kPassed ? passed : failed)++;
        break;
      case StageOutcome::Kind::kNotImplemented:
        std::snprintf(line, sizeof line, "%-24s not implemented yet\n", r.stage.c_str());
        missing++;
        break;
      case StageOutcome::Kind::kError:
        std::snprintf(line, sizeof line, "%-24s ERROR %s\n", r.stage.c_str(), o.message.c_str());
        failed++;
        break;
    }
    out << line;
  }
  out << passed << " passed, " << failed << " failed, " << missing << " not implemented yet\n";
  return out.str();
}

bool AllPassed(const std::vector<BundleVerifier::Result>& results) {
  for (const auto& r : results) {
    if (r.outcome.kind == StageOutcome::Kind::kFailed ||
        r.outcome.kind == StageOutcome::Kind::kError) {
      return false;
    }
  }
  return true;
}

}  // namespace voxserve::engine::cosyvoice
