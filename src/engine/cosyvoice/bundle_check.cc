#include "engine/cosyvoice/bundle_check.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "absl/strings/str_join.h"
#include "core/error.h"
#include "core/read_file.h"
#include "engine/cosyvoice/npy.h"
#include "engine/onnx/onnx_session.h"
#include "nlohmann/json.hpp"

namespace voxserve::engine::cosyvoice {
namespace {

namespace fs = std::filesystem;

bool IsFile(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

std::string DimsString(const std::vector<Dim>& dims) {
  std::vector<std::string> parts;
  for (const Dim& d : dims) parts.push_back(d.fixed() ? std::to_string(d.size) : d.symbol);
  return "[" + absl::StrJoin(parts, ", ") + "]";
}

std::string DimsString(const std::vector<int64_t>& dims) {
  std::vector<std::string> parts;
  for (int64_t d : dims) parts.push_back(d < 0 ? "?" : std::to_string(d));
  return "[" + absl::StrJoin(parts, ", ") + "]";
}

std::string_view FileDtype(onnx::ElementType type) {
  return type == onnx::ElementType::kOther ? "another type" : onnx::ElementTypeName(type);
}

void CompareTensors(const std::string& at, const std::vector<TensorSignature>& declared,
                    const std::vector<onnx::TensorSpec>& found, const std::string& file,
                    std::vector<std::string>& problems) {
  std::vector<std::string> found_names;
  for (const onnx::TensorSpec& spec : found) found_names.push_back(spec.name);
  for (const TensorSignature& want : declared) {
    const onnx::TensorSpec* have = nullptr;
    for (const onnx::TensorSpec& spec : found) {
      if (spec.name == want.name) have = &spec;
    }
    std::string where = at + " '" + want.name + "'";
    if (have == nullptr) {
      problems.push_back(where + ": not in " + file +
                         " (it has: " + absl::StrJoin(found_names, ", ") + ")");
      continue;
    }
    std::string_view have_dtype = FileDtype(have->type);
    bool dtype_known = want.dtype == "float32" || want.dtype == "int32" || want.dtype == "int64" ||
                       want.dtype == "float16" || want.dtype == "bfloat16";
    if ((dtype_known && have_dtype != want.dtype) ||
        (!dtype_known && have->type != onnx::ElementType::kOther)) {
      problems.push_back(where + ": dtype: manifest " + want.dtype + ", " + file + " " +
                         std::string(have_dtype));
    }
    if (have->shape.size() != want.shape.size()) {
      problems.push_back(where + ": rank: manifest " + std::to_string(want.shape.size()) + " " +
                         DimsString(want.shape) + ", " + file + " " +
                         std::to_string(have->shape.size()) + " " + DimsString(have->shape));
      continue;
    }
    for (size_t d = 0; d < want.shape.size(); ++d) {
      if (want.shape[d].fixed() && have->shape[d] >= 0 && have->shape[d] != want.shape[d].size) {
        problems.push_back(where + ": dim " + std::to_string(d) + ": manifest " +
                           std::to_string(want.shape[d].size) + ", " + file + " " +
                           std::to_string(have->shape[d]));
      } else if (want.shape[d].fixed() && have->shape[d] < 0) {
        problems.push_back(where + ": dim " + std::to_string(d) + ": manifest " +
                           std::to_string(want.shape[d].size) + ", " + file + " dynamic");
      }
    }
  }
  for (const onnx::TensorSpec& spec : found) {
    bool listed = false;
    for (const TensorSignature& want : declared) listed = listed || want.name == spec.name;
    if (!listed)
      problems.push_back(at + " '" + spec.name + "': in " + file + " but not in the manifest");
  }
}

void CheckGraph(const fs::path& dir, const GraphEntry& g, std::vector<std::string>& problems) {
  fs::path path = dir / g.file;
  std::string at = "graph " + g.role;
  if (!IsFile(path)) {
    problems.push_back(at + ": file " + g.file + " missing");
    return;
  }
  onnx::OnnxSessionConfig config;
  config.intra_op_threads = 1;
  config.graph_optimization = "disable";  // a check needs the signature, not a fast graph
  auto session = onnx::OnnxSession::Create(path.string(), config);
  const bool bfloat16 = std::any_of(g.inputs.begin(), g.inputs.end(),
                                    [](const TensorSignature& t) { return t.dtype == "bfloat16"; });
  if (!session.ok() && bfloat16) {
    // ONNX Runtime's CPU provider has no bfloat16 kernels, so it cannot open the graph here to
    // read its signature: the CUDA provider checks it when it loads (LlmStepGraph).
    return;
  }
  if (!session.ok()) {
    problems.push_back(at + ": " + std::string(session.status().message()));
    return;
  }
  CompareTensors(at + " input", g.inputs, (*session)->inputs(), g.file, problems);
  CompareTensors(at + " output", g.outputs, (*session)->outputs(), g.file, problems);
}

// Shapes the runtime relies on beyond the manifest's own word (each tensor's first use).
std::optional<std::vector<int64_t>> ExpectedTensorShape(const BundleManifest& m,
                                                        const std::string& name) {
  int64_t h = m.llm.hidden_size;
  // 15000 frames = 300 s at 50 Hz, drawn once with seed 0 (cosyvoice/flow/flow_matching.py:200).
  if (name == "rand_noise") return std::vector<int64_t>{1, m.audio.mel_bins, 15000};
  if (name == "embed_tokens") return std::vector<int64_t>{m.vocab.text_vocab_size, h};
  if (name == "speech_embedding") return std::vector<int64_t>{m.vocab.speech_embedding_rows, h};
  if (name == "llm_embedding") return std::vector<int64_t>{m.vocab.llm_embedding_rows, h};
  if (name == "hift_source_linear_weight") return std::vector<int64_t>{1, m.hift.nb_harmonics + 1};
  if (name == "hift_source_linear_bias") return std::vector<int64_t>{1};
  return std::nullopt;
}

void CheckTensors(const fs::path& dir, const BundleManifest& m,
                  std::vector<std::string>& problems) {
  for (const auto& [name, t] : m.tensors) {
    std::string at = "tensor " + name;
    fs::path path = dir / t.file;
    if (!IsFile(path)) {
      problems.push_back(at + ": file " + t.file + " missing");
      continue;
    }
    auto header = ReadNpyHeader(path.string());
    if (!header.ok()) {
      problems.push_back(at + ": " + std::string(header.status().message()));
      continue;
    }
    if (header->dtype != t.dtype) {
      problems.push_back(at + ": dtype: manifest " + t.dtype + ", " + t.file + " " + header->dtype);
    }
    if (header->shape != t.shape) {
      problems.push_back(at + ": shape: manifest " + ShapeString(t.shape) + ", " + t.file + " " +
                         ShapeString(header->shape));
    }
    if (auto expected = ExpectedTensorShape(m, name); expected && *expected != header->shape) {
      problems.push_back(at + ": shape " + ShapeString(header->shape) + ", the model needs " +
                         ShapeString(*expected));
    }
  }
}

void CheckGoldens(const fs::path& dir, const std::string& index,
                  std::vector<std::string>& problems) {
  auto text = core::ReadFile(dir / index);
  if (!text) {
    problems.push_back("goldens: index " + index + " missing");
    return;
  }
  nlohmann::json root = nlohmann::json::parse(*text, nullptr, false);
  if (root.is_discarded() || !root.is_object() || !root.contains("stages") ||
      !root["stages"].is_array()) {
    problems.push_back("goldens: " + index + " is not a goldens index (no \"stages\" list)");
    return;
  }
  for (const auto& stage : root["stages"]) {
    for (const char* side : {"inputs", "outputs"}) {
      if (!stage.contains(side) || !stage[side].is_object()) continue;
      for (const auto& [key, rel] : stage[side].items()) {
        if (!rel.is_string() || !IsFile(dir / rel.get<std::string>())) {
          problems.push_back("goldens: stage " + stage.value("name", std::string("?")) + " " +
                             side + " '" + key + "': file " + rel.dump() + " missing");
        }
      }
    }
  }
}

}  // namespace

std::string BundleReport::Summary() const {
  std::ostringstream out;
  if (!ok()) {
    out << dir << ": " << problems.size() << " problem(s)\n";
    for (const std::string& p : problems) out << "  " << p << "\n";
    return out.str();
  }
  const BundleManifest& m = *manifest;
  out << dir << ": valid " << FamilyName(m.family) << " bundle (format " << m.format_version << ", "
      << m.source_kind << ")\n";
  for (const auto& [role, g] : m.graphs) {
    out << "  graph " << role << ": " << g.file << " (" << g.origin << "), " << g.inputs.size()
        << " inputs, " << g.outputs.size() << " outputs\n";
  }
  for (const auto& [name, t] : m.tensors) {
    out << "  tensor " << name << ": " << t.file << " " << t.dtype << " " << ShapeString(t.shape)
        << "\n";
  }
  out << "  tokenizer: " << m.tokenizer_dir << "/ (" << absl::StrJoin(m.tokenizer_files, ", ")
      << ")\n";
  out << "  goldens: " << (m.goldens_index.empty() ? "none" : m.goldens_index) << "\n";
  return out.str();
}

BundleReport CheckBundle(const std::string& dir) {
  BundleReport report;
  report.dir = dir;
  auto manifest = LoadBundleManifest(dir);
  if (!manifest.ok()) {
    // One problem per line after the "<path>: N problem(s):" heading (ParseBundleManifest).
    std::istringstream lines{std::string(manifest.status().message())};
    for (std::string line; std::getline(lines, line);) {
      size_t start = line.find_first_not_of(' ');
      if (start == std::string::npos || line.ends_with("problem(s):")) continue;
      report.problems.push_back(line.substr(start));
    }
    return report;
  }
  fs::path root(dir);
  for (const auto& [role, g] : manifest->graphs) CheckGraph(root, g, report.problems);
  CheckTensors(root, *manifest, report.problems);
  for (const std::string& name : manifest->tokenizer_files) {
    if (!IsFile(root / manifest->tokenizer_dir / name)) {
      report.problems.push_back("tokenizer: file " + manifest->tokenizer_dir + "/" + name +
                                " missing");
    }
  }
  if (!manifest->goldens_index.empty()) {
    CheckGoldens(root, manifest->goldens_index, report.problems);
  }
  report.manifest = std::move(*manifest);
  return report;
}

absl::StatusOr<BundleManifest> LoadCheckedBundle(const std::string& dir) {
  BundleReport report = CheckBundle(dir);
  if (!report.ok()) {
    std::string summary = report.Summary();
    while (!summary.empty() && summary.back() == '\n') summary.pop_back();
    return core::InvalidArgument("CosyVoice bundle " + summary);
  }
  return std::move(*report.manifest);
}

}  // namespace voxserve::engine::cosyvoice
