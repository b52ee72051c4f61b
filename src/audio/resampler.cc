#include "audio/resampler.h"

#include <soxr.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/error.h"

namespace voxserve::audio {
namespace {

// Room for the samples soxr releases from its delay line on top of the ratio's share of a chunk.
constexpr std::size_t kOutputSlack = 256;

absl::Status SoxrError(absl::string_view what, soxr_error_t error) {
  return core::Internal(absl::StrCat("libsoxr ", what, ": ", soxr_strerror(error)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Resampler>> Resampler::Create(int input_rate, int output_rate) {
  if (input_rate <= 0 || output_rate <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("sample rates must be positive, got ", input_rate, " to ", output_rate));
  }
  // SOXR_HQ: 20-bit precision, passband to 91% of Nyquist; more than 16-bit output can show,
  // at a fraction of the cost of the very-high-quality presets.
  soxr_quality_spec_t quality = soxr_quality_spec(SOXR_HQ, 0);
  soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
  soxr_runtime_spec_t runtime = soxr_runtime_spec(1);  // the request's thread only
  soxr_error_t error = nullptr;
  soxr_t handle = soxr_create(input_rate, output_rate, 1, &error, &io, &quality, &runtime);
  if (error != nullptr || handle == nullptr) {
    if (handle != nullptr) soxr_delete(handle);
    return SoxrError("create", error);
  }
  return std::unique_ptr<Resampler>(
      new Resampler(handle, static_cast<double>(output_rate) / input_rate));
}

Resampler::Resampler(soxr* handle, double ratio) : soxr_(handle), ratio_(ratio) {}

Resampler::~Resampler() { soxr_delete(soxr_); }

absl::Status Resampler::Process(std::span<const float> samples, std::vector<float>* out) {
  if (flushed_) return absl::FailedPreconditionError("Resampler::Process called after Flush");
  // An empty chunk must not reach soxr: a null input pointer means end of input to it.
  std::size_t consumed = 0;
  while (consumed < samples.size()) {
    std::size_t remaining = samples.size() - consumed;
    std::size_t capacity = static_cast<std::size_t>(std::ceil(remaining * ratio_)) + kOutputSlack;
    std::size_t start = out->size();
    out->resize(start + capacity);
    std::size_t used = 0;
    std::size_t produced = 0;
    soxr_error_t error = soxr_process(soxr_, samples.data() + consumed, remaining, &used,
                                      out->data() + start, capacity, &produced);
    out->resize(start + produced);
    if (error != nullptr) return SoxrError("process", error);
    if (used == 0 && produced == 0) return core::Internal("libsoxr process made no progress");
    consumed += used;
  }
  return absl::OkStatus();
}

absl::Status Resampler::Flush(std::vector<float>* out) {
  if (flushed_) return absl::FailedPreconditionError("Resampler::Flush called twice");
  flushed_ = true;
  constexpr std::size_t kBlock = 4096;
  std::size_t produced = 0;
  do {
    std::size_t start = out->size();
    out->resize(start + kBlock);
    soxr_error_t error =
        soxr_process(soxr_, nullptr, 0, nullptr, out->data() + start, kBlock, &produced);
    out->resize(start + produced);
    if (error != nullptr) return SoxrError("flush", error);
  } while (produced > 0);
  return absl::OkStatus();
}

}  // namespace voxserve::audio

namespace voxserve::audio {

absl::StatusOr<std::vector<float>> ResampleAll(std::span<const float> samples, int input_rate,
                                               int output_rate) {
  if (input_rate == output_rate && input_rate > 0) {
    return std::vector<float>(samples.begin(), samples.end());
  }
  auto resampler = Resampler::Create(input_rate, output_rate);
  if (!resampler.ok()) return resampler.status();
  std::vector<float> out;
  out.reserve(static_cast<std::size_t>(
                  std::ceil(samples.size() * (static_cast<double>(output_rate) / input_rate))) +
              kOutputSlack);
  if (absl::Status status = (*resampler)->Process(samples, &out); !status.ok()) return status;
  if (absl::Status status = (*resampler)->Flush(&out); !status.ok()) return status;
  return out;
}

}  // namespace voxserve::audio
