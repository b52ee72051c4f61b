#include "engine/cosyvoice/hift_stages.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "engine/cosyvoice/causal_hift_stream.h"
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

// CosyVoice3's streaming (CausalHiftStream, upstream's token2wav loop): hift.stream/N is the
// audio of hop N after hops 0..N-1 (read from `goldens`) went through the same stream.
absl::StatusOr<double> CausalStreamStage(const HiftVocoder& v,
                                         const std::vector<GoldenStage>& goldens,
                                         const GoldenStage& g) {
  auto stream = CausalHiftStream::Create(v);
  if (!stream.ok()) return stream.status();
  for (const GoldenStage& hop : goldens) {
    if (hop.name.rfind("hift.stream/", 0) != 0) continue;
    auto mel = hop.Input("mel");
    auto finalize = hop.Input("finalize");
    for (const auto* a : {&mel, &finalize}) {
      if (!a->ok()) return a->status();
    }
    if (mel->shape.size() != 2 || finalize->ints.empty()) {
      return core::InvalidArgument(hop.name + ": mel is not [80, frames] or finalize is empty");
    }
    auto audio = stream->Push({mel->floats, mel->shape[1]}, finalize->ints[0] != 0);
    if (!audio.ok()) return audio.status();
    if (hop.name != g.name) continue;
    auto want = g.Output("audio");
    if (!want.ok()) return want.status();
    return MaxAbsError(*audio, *want, g.name + " audio");
  }
  return core::InvalidArgument(g.name + ": not among the goldens' hift.stream stages");
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
    // A hop's check reads the hops before it: the stage holds the goldens' index.
    if (auto goldens = LoadGoldens(verifier.manifest(), verifier.bundle_dir()); goldens.ok()) {
      auto hops = std::make_shared<const std::vector<GoldenStage>>(*std::move(goldens));
      verifier.AddStage("hift.stream", [v, hops](const GoldenStage& g) {
        return CausalStreamStage(*v, *hops, g);
      });
    }
    return absl::OkStatus();
  }
  verifier.AddStage("hift.source", [v](const GoldenStage& g) { return SourceStage(*v, g); });
  verifier.AddStage("hift.full", [v](const GoldenStage& g) { return FullStage(*v, g); });
  return absl::OkStatus();
}

}  // namespace voxserve::engine::cosyvoice
