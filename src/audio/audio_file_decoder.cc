#include "audio/audio_file_decoder.h"

#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "audio/ogg_vorbis_headers.h"
#include "audio/wav_header.h"

namespace voxserve::audio {
namespace {

// A read-only file over the caller's bytes for sf_open_virtual.
struct MemoryInput {
  std::span<const uint8_t> bytes;
  sf_count_t position = 0;
};

sf_count_t InputLength(void* user) {
  return static_cast<sf_count_t>(static_cast<MemoryInput*>(user)->bytes.size());
}

sf_count_t InputSeek(sf_count_t offset, int whence, void* user) {
  auto* input = static_cast<MemoryInput*>(user);
  const auto size = static_cast<sf_count_t>(input->bytes.size());
  sf_count_t base = whence == SEEK_CUR ? input->position : whence == SEEK_END ? size : 0;
  sf_count_t target = base + offset;
  if (target < 0 || target > size) return -1;  // libsndfile treats -1 as a failed seek
  input->position = target;
  return target;
}

sf_count_t InputRead(void* destination, sf_count_t count, void* user) {
  auto* input = static_cast<MemoryInput*>(user);
  const auto size = static_cast<sf_count_t>(input->bytes.size());
  sf_count_t available = std::max<sf_count_t>(0, size - input->position);
  sf_count_t n = std::clamp<sf_count_t>(count, 0, available);
  if (n > 0) std::memcpy(destination, input->bytes.data() + input->position, n);
  input->position += n;
  return n;
}

sf_count_t InputWrite(const void*, sf_count_t, void*) { return 0; }  // read-only

sf_count_t InputTell(void* user) { return static_cast<MemoryInput*>(user)->position; }

struct SndfileCloser {
  void operator()(SNDFILE* file) const { sf_close(file); }
};

// The containers accepted: the formats the brief's users upload plus their close relatives.
// libsndfile parses many more (PAF, SDS, XI, ...) that no one records voices in; refusing them
// keeps the parsers that outside bytes reach to the well-used ones.
bool IsAcceptedContainer(int format) {
  switch (format & SF_FORMAT_TYPEMASK) {
    case SF_FORMAT_WAV:
    case SF_FORMAT_WAVEX:
    case SF_FORMAT_RF64:
    case SF_FORMAT_W64:
    case SF_FORMAT_AIFF:
    case SF_FORMAT_FLAC:
    case SF_FORMAT_OGG:
    case SF_FORMAT_MPEG:
      return true;
    default:
      return false;
  }
}

// Frames read per sf_readf_float call: 4096 x at most 8 channels x 4 bytes = 128 KiB at once.
constexpr sf_count_t kBlockFrames = 4096;

}  // namespace

absl::StatusOr<PcmAudio> DecodeAudioFile(std::span<const uint8_t> bytes,
                                         const DecodeLimits& limits) {
  if (bytes.empty()) return absl::InvalidArgumentError("audio file is empty");
  // Before libsndfile: it leaks when Vorbis headers fail to parse (see ogg_vorbis_headers.h).
  if (absl::Status headers = CheckOggVorbisHeaders(bytes); !headers.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("audio file is not readable: ", headers.message()));
  }
  // Before libsndfile too: it reads a WAV header that does not describe its data (7-bit
  // samples, a wrong block align) as something else instead of refusing it (wav_header.h).
  if (absl::Status header = CheckWavHeader(bytes); !header.ok()) return header;
  SF_VIRTUAL_IO io{InputLength, InputSeek, InputRead, InputWrite, InputTell};
  MemoryInput input{bytes};
  SF_INFO info{};
  std::unique_ptr<SNDFILE, SndfileCloser> file(sf_open_virtual(&io, SFM_READ, &info, &input));
  if (file == nullptr) {
    // sf_strerror(nullptr) reads libsndfile's process-wide last error: a concurrent failure
    // can swap the wording, never the outcome.
    return absl::InvalidArgumentError(absl::StrCat(
        "audio file is not in a readable format (WAV, FLAC, Ogg, MP3): ", sf_strerror(nullptr)));
  }
  if (!IsAcceptedContainer(info.format)) {
    SF_FORMAT_INFO format_info{};
    format_info.format = info.format & SF_FORMAT_TYPEMASK;
    sf_command(file.get(), SFC_GET_FORMAT_INFO, &format_info, sizeof(format_info));
    return absl::InvalidArgumentError(
        absl::StrCat("audio container ", format_info.name != nullptr ? format_info.name : "?",
                     " is not accepted; send WAV, FLAC, Ogg (Vorbis/Opus) or MP3"));
  }
  if (info.channels < 1 || info.channels > limits.max_channels) {
    return absl::OutOfRangeError(absl::StrCat("audio file has ", info.channels,
                                              " channels; at most ", limits.max_channels,
                                              " are accepted"));
  }
  if (info.samplerate < 1 || info.samplerate > limits.max_sample_rate) {
    return absl::OutOfRangeError(absl::StrCat("audio sample rate ", info.samplerate,
                                              " Hz is outside [1, ", limits.max_sample_rate,
                                              "] Hz"));
  }
  const auto max_frames = static_cast<sf_count_t>(std::floor(limits.max_seconds * info.samplerate));
  auto too_long = [&] {
    return absl::OutOfRangeError(
        absl::StrCat("audio is longer than the limit of ", limits.max_seconds, " s"));
  };
  // The header's length is a claim, not a promise: it only shortcuts the refusal, and never
  // sizes an allocation (the samples grow as they are really decoded).
  if (info.frames != SF_COUNT_MAX && info.frames > max_frames &&
      (info.format & SF_FORMAT_TYPEMASK) != SF_FORMAT_MPEG) {  // MP3 lengths are estimates
    return too_long();
  }

  PcmAudio audio;
  audio.sample_rate = info.samplerate;
  if (info.frames > 0 && info.frames != SF_COUNT_MAX) {
    audio.samples.reserve(static_cast<std::size_t>(std::min(info.frames, max_frames)));
  }
  std::vector<float> block(static_cast<std::size_t>(kBlockFrames * info.channels));
  const float scale = 1.0f / static_cast<float>(info.channels);
  sf_count_t decoded = 0;
  while (true) {
    sf_count_t got = sf_readf_float(file.get(), block.data(), kBlockFrames);
    if (got <= 0) break;
    if (decoded + got > max_frames) return too_long();
    decoded += got;
    for (sf_count_t frame = 0; frame < got; ++frame) {
      float sum = 0.0f;
      for (int c = 0; c < info.channels; ++c) sum += block[frame * info.channels + c];
      float sample = info.channels == 1 ? sum : sum * scale;
      if (!std::isfinite(sample)) {
        return absl::InvalidArgumentError(
            absl::StrCat("audio file holds a non-finite sample at frame ", decoded - got + frame));
      }
      audio.samples.push_back(sample);
    }
  }
  if (int error = sf_error(file.get()); error != SF_ERR_NO_ERROR) {
    return absl::InvalidArgumentError(
        absl::StrCat("audio file is corrupt or truncated: ", sf_error_number(error)));
  }
  // Codecs with an exact length in their header (FLAC's STREAMINFO, WAV's data chunk, which
  // libsndfile already trims to the bytes present) must deliver it; fewer frames means the
  // stream was cut. Ogg and MP3 lengths are derived or estimated, so they are not held to it.
  const int container = info.format & SF_FORMAT_TYPEMASK;
  if (container != SF_FORMAT_OGG && container != SF_FORMAT_MPEG && info.frames != SF_COUNT_MAX &&
      decoded < info.frames) {
    return absl::InvalidArgumentError(absl::StrCat("audio file is truncated: its header promises ",
                                                   info.frames, " frames, ", decoded,
                                                   " could be decoded"));
  }
  if (audio.samples.empty()) return absl::InvalidArgumentError("audio file contains no samples");
  return audio;
}

}  // namespace voxserve::audio
