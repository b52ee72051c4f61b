// verify-bundle's HiFT stages (docs/cosyvoice-generation.md, "HiFT vocoder").
#pragma once

#include "absl/status/status.h"
#include "engine/cosyvoice/bundle_verifier.h"

namespace voxserve::engine::cosyvoice {

// Registers "hift.source" (uv from the golden f0, exactly; the source Linear + tanh on the
// golden sines, whose noise is random) and "hift.full" (HiftVocoder::Decode: source STFT,
// decoder graph, iSTFT, clamp on the golden mel and source). "hift.f0" and "hift.decoder" stay
// AddOnnxStages' graph checks.
absl::Status AddHiftStages(BundleVerifier& verifier);

}  // namespace voxserve::engine::cosyvoice
