// Test signals, measurements and real decoders (libsndfile, libavcodec's AAC decoder) for the
// audio module's tests. Header-only: the test binary is built from *_test.cc alone.
#pragma once

#include <sndfile.h>

extern "C" {
#include <libavcodec/avcodec.h>
}

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "audio/codec_sample_rates.h"

namespace voxserve::audio::testing {

inline std::vector<float> Sine(double frequency, int sample_rate, double seconds,
                               float amplitude = 0.5f) {
  std::vector<float> samples(static_cast<std::size_t>(std::lround(seconds * sample_rate)));
  for (std::size_t i = 0; i < samples.size(); ++i) {
    samples[i] = amplitude *
                 static_cast<float>(std::sin(2 * std::numbers::pi * frequency * i / sample_rate));
  }
  return samples;
}

inline double Rms(std::span<const float> samples) {
  if (samples.empty()) return 0.0;
  double sum = 0.0;
  for (float sample : samples) sum += static_cast<double>(sample) * sample;
  return std::sqrt(sum / samples.size());
}

// The frequency of a steady tone from its zero crossings (two per period).
inline double ZeroCrossingFrequency(std::span<const float> samples, int sample_rate) {
  int crossings = 0;
  for (std::size_t i = 1; i < samples.size(); ++i) {
    if ((samples[i - 1] < 0.0f) != (samples[i] < 0.0f)) ++crossings;
  }
  return crossings * sample_rate / (2.0 * samples.size());
}

// The middle `seconds` of a signal, away from codec priming, padding and fades.
inline std::span<const float> Middle(std::span<const float> samples, int sample_rate,
                                     double seconds) {
  auto length = std::min(samples.size(), static_cast<std::size_t>(seconds * sample_rate));
  return samples.subspan((samples.size() - length) / 2, length);
}

struct DecodedAudio {
  int format = 0;  // SF_FORMAT_* major | subtype, as libsndfile reports it
  int sample_rate = 0;
  int channels = 0;
  std::vector<float> samples;

  double DurationSeconds() const {
    return sample_rate > 0 ? static_cast<double>(samples.size()) / sample_rate : 0.0;
  }
};

// Decodes a whole file held in memory with libsndfile.
inline absl::StatusOr<DecodedAudio> DecodeWithSndfile(const std::string& bytes) {
  struct Input {
    const std::string* bytes;
    sf_count_t position = 0;
  } input{&bytes};
  SF_VIRTUAL_IO io = {
      [](void* user) -> sf_count_t {
        return static_cast<sf_count_t>(static_cast<Input*>(user)->bytes->size());
      },
      [](sf_count_t offset, int whence, void* user) -> sf_count_t {
        auto* in = static_cast<Input*>(user);
        sf_count_t base = whence == SEEK_SET   ? 0
                          : whence == SEEK_CUR ? in->position
                                               : static_cast<sf_count_t>(in->bytes->size());
        in->position = std::clamp<sf_count_t>(base + offset, 0, in->bytes->size());
        return in->position;
      },
      [](void* destination, sf_count_t count, void* user) -> sf_count_t {
        auto* in = static_cast<Input*>(user);
        sf_count_t available = static_cast<sf_count_t>(in->bytes->size()) - in->position;
        sf_count_t n = std::clamp<sf_count_t>(count, 0, std::max<sf_count_t>(available, 0));
        std::copy_n(in->bytes->data() + in->position, n, static_cast<char*>(destination));
        in->position += n;
        return n;
      },
      [](const void*, sf_count_t, void*) -> sf_count_t { return 0; },
      [](void* user) -> sf_count_t { return static_cast<Input*>(user)->position; },
  };
  SF_INFO info = {};
  SNDFILE* file = sf_open_virtual(&io, SFM_READ, &info, &input);
  if (file == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("libsndfile: ", sf_strerror(nullptr)));
  }
  DecodedAudio decoded{info.format, info.samplerate, info.channels, {}};
  float block[4096];
  while (sf_count_t read = sf_read_float(file, block, 4096)) {
    decoded.samples.insert(decoded.samples.end(), block, block + read);
  }
  sf_close(file);
  return decoded;
}

// Splits an ADTS stream at its headers, checking each (sync word, MPEG-4 AAC-LC, mono, no CRC,
// frame lengths that tile the stream exactly), and decodes it with libavcodec's AAC decoder.
inline absl::StatusOr<DecodedAudio> DecodeAdts(const std::string& bytes) {
  const AVCodec* codec = avcodec_find_decoder(AV_CODEC_ID_AAC);
  AVCodecContext* context = avcodec_alloc_context3(codec);
  AVPacket* packet = av_packet_alloc();
  AVFrame* frame = av_frame_alloc();
  auto cleanup = [&] {
    av_frame_free(&frame);
    av_packet_free(&packet);
    avcodec_free_context(&context);
  };
  if (avcodec_open2(context, codec, nullptr) < 0) {
    cleanup();
    return absl::InternalError("cannot open the AAC decoder");
  }
  DecodedAudio decoded;
  auto receive = [&] {
    while (avcodec_receive_frame(context, frame) == 0) {
      decoded.sample_rate = frame->sample_rate;
      decoded.channels = frame->ch_layout.nb_channels;
      const auto* data = reinterpret_cast<const float*>(frame->extended_data[0]);
      decoded.samples.insert(decoded.samples.end(), data, data + frame->nb_samples);
      av_frame_unref(frame);
    }
  };
  auto fail = [&](std::string message) {
    cleanup();
    return absl::InvalidArgumentError(message);
  };
  std::size_t offset = 0;
  while (offset < bytes.size()) {
    if (bytes.size() - offset < 7) return fail(absl::StrCat("truncated header at ", offset));
    const auto* h = reinterpret_cast<const std::uint8_t*>(bytes.data() + offset);
    if (h[0] != 0xFF || (h[1] & 0xF6) != 0xF0) return fail(absl::StrCat("no sync at ", offset));
    if ((h[1] & 0x01) != 1) return fail("header has a CRC");
    if ((h[2] >> 6) != 1) return fail("profile is not AAC LC");
    int rate_index = (h[2] >> 2) & 0x0F;
    if (rate_index >= static_cast<int>(kAacSampleRates.size())) return fail("bad rate index");
    int channels = ((h[2] & 0x01) << 2) | (h[3] >> 6);
    if (channels != 1) return fail(absl::StrCat("channel configuration ", channels));
    std::size_t length = ((h[3] & 0x03u) << 11) | (h[4] << 3) | (h[5] >> 5);
    if (length < 7 || offset + length > bytes.size()) {
      return fail(absl::StrCat("frame length ", length, " at ", offset));
    }
    if (av_new_packet(packet, static_cast<int>(length)) < 0) return fail("out of memory");
    std::copy_n(bytes.data() + offset, length, reinterpret_cast<char*>(packet->data));
    int sent = avcodec_send_packet(context, packet);
    av_packet_unref(packet);
    if (sent < 0) return fail(absl::StrCat("decoder rejected the frame at ", offset));
    receive();
    offset += length;
  }
  avcodec_send_packet(context, nullptr);
  receive();
  cleanup();
  return decoded;
}

}  // namespace voxserve::audio::testing
