#include "engine/cosyvoice/hift_stages.h"

#include <algorithm>
#include <memory>

#include "core/error.h"
#include "engine/cosyvoice/hift_vocoder.h"

namespace voxserve::engine::cosyvoice {
namespace {

// Draws nothing: hift.source compares only what the noise cannot change (uv).
class NoNoise final : public SourceNoise {
 public:
  void FillNormal(std::span<float> out) override { std::fill(out.begin(), out.end(), 0.0f); }
};

absl::StatusOr<double> SourceStage(const HiftVocoder& v, const GoldenStage& g) {
  auto f0 = g.Input("f0");
  auto sines = g.Output("sines");
  auto uv = g.Output("uv");
  auto source = g.Output("source");
  for (const auto* a : {&f0, &sines, &uv, &source}) {
    if (!a->ok()) return a->status();
  }
  NoNoise none;
  auto excitation = v.sine_source().Excite(f0->floats, none);
  if (!excitation.ok()) return excitation.status();
  auto uv_error = MaxAbsError(excitation->uv, *uv, g.name + " uv");
  if (!uv_error.ok()) return uv_error.status();
  if (*uv_error != 0) {
    return core::InvalidArgument(g.name + ": uv differs from upstream's (must be equal)");
  }
  auto merged = v.sine_source().Merge(sines->floats);
  if (!merged.ok()) return merged.status();
  return MaxAbsError(*merged, *source, g.name + " source");
}

absl::StatusOr<double> FullStage(const HiftVocoder& v, const GoldenStage& g) {
  auto mel = g.Input("mel");
  auto source = g.Input("source");
  auto speech = g.Output("speech");
  for (const auto* a : {&mel, &source, &speech}) {
    if (!a->ok()) return a->status();
  }
  if (mel->shape.empty()) return core::InvalidArgument(g.name + ": mel has no shape");
  auto audio = v.Decode({mel->floats, mel->shape.back()}, source->floats);
  if (!audio.ok()) return audio.status();
  return MaxAbsError(*audio, *speech, g.name + " speech");
}

// CosyVoice3's causal source: no random draws (the bundle's noise table), so every output is
// compared.
absl::StatusOr<double> CausalSourceStage(const HiftVocoder& v, const GoldenStage& g) {
  auto f0 = g.Input("f0");
  auto sines = g.Output("sines");
  auto source = g.Output("source");
  for (const auto* a : {&f0, &sines, &source}) {
    if (!a->ok()) return a->status();
  }
  auto excitation = v.sine_source().ExciteFrom(f0->floats, 0);
  if (!excitation.ok()) return excitation.status();
  auto sines_error = MaxAbsError(excitation->sines, *sines, g.name + " sines");
  if (!sines_error.ok()) return sines_error.status();
  auto merged = v.sine_source().Merge(excitation->sines);
  if (!merged.ok()) return merged.status();
  auto source_error = MaxAbsError(*merged, *source, g.name + " source");
  if (!source_error.ok()) return source_error.status();
  return std::max(*sines_error, *source_error);
}

// CosyVoice3's whole-mel inference (finalize=True): f0, source, decoder, iSTFT.
absl::StatusOr<double> CausalFullStage(const HiftVocoder& v, const GoldenStage& g) {
  auto mel = g.Input("mel");
  auto speech = g.Output("speech");
  for (const auto* a : {&mel, &speech}) {
    if (!a->ok()) return a->status();
  }
  if (mel->shape.empty()) return core::InvalidArgument(g.name + ": mel has no shape");
  auto audio = v.VocodeCausal({mel->floats, mel->shape.back()}, /*finalize=*/true);
  if (!audio.ok()) return audio.status();
  return MaxAbsError(*audio, *speech, g.name + " speech");
}

}  // namespace

absl::Status AddHiftStages(BundleVerifier& verifier) {
  auto vocoder =
      HiftVocoder::Create(verifier.manifest(), verifier.bundle_dir(), verifier.session_config());
  if (!vocoder.ok()) return vocoder.status();
  std::shared_ptr<const HiftVocoder> v(std::move(*vocoder));
  if (v->causal()) {
    verifier.AddStage("hift.source",
                      [v](const GoldenStage& g) { return CausalSourceStage(*v, g); });
    verifier.AddStage("hift.full", [v](const GoldenStage& g) { return CausalFullStage(*v, g); });
    return absl::OkStatus();
  }
  verifier.AddStage("hift.source", [v](const GoldenStage& g) { return SourceStage(*v, g); });
  verifier.AddStage("hift.full", [v](const GoldenStage& g) { return FullStage(*v, g); });
  return absl::OkStatus();
}

}  // namespace voxserve::engine::cosyvoice
