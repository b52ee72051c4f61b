#include "audio/ogg_vorbis_headers.h"

#include <ogg/ogg.h>
#include <vorbis/codec.h>

#include <algorithm>
#include <cstring>

namespace voxserve::audio {
namespace {

// libogg's and libvorbis's state for one check, freed whatever happens.
class HeaderReader {
 public:
  HeaderReader() {
    ogg_sync_init(&sync_);
    vorbis_info_init(&info_);
    vorbis_comment_init(&comment_);
  }
  ~HeaderReader() {
    if (stream_ready_) ogg_stream_clear(&stream_);
    vorbis_comment_clear(&comment_);
    vorbis_info_clear(&info_);
    ogg_sync_clear(&sync_);
  }
  HeaderReader(const HeaderReader&) = delete;
  HeaderReader& operator=(const HeaderReader&) = delete;

  absl::Status Check(std::span<const uint8_t> bytes) {
    // The whole file goes to the page parser at once: it is already in memory.
    char* buffer = ogg_sync_buffer(&sync_, static_cast<long>(bytes.size()));
    if (buffer == nullptr) return absl::InvalidArgumentError("Ogg file is too large to parse");
    std::memcpy(buffer, bytes.data(), bytes.size());
    ogg_sync_wrote(&sync_, static_cast<long>(bytes.size()));

    int headers = 0;
    ogg_page page;
    while (headers < 3) {
      int result = ogg_sync_pageout(&sync_, &page);
      if (result == 0) break;    // no more complete pages
      if (result < 0) continue;  // skipped bytes to the next capture pattern, as libogg does
      if (!stream_ready_) {
        if (ogg_stream_init(&stream_, ogg_page_serialno(&page)) != 0) {
          return absl::InvalidArgumentError("Ogg stream could not be set up");
        }
        stream_ready_ = true;
      }
      if (ogg_page_serialno(&page) != stream_.serialno) continue;  // another logical stream
      if (ogg_stream_pagein(&stream_, &page) != 0) continue;
      ogg_packet packet;
      while (headers < 3) {
        int packet_result = ogg_stream_packetout(&stream_, &packet);
        if (packet_result == 0) break;
        if (packet_result < 0) {
          return absl::InvalidArgumentError("Ogg Vorbis headers are corrupt (a packet is missing)");
        }
        if (headers == 0 && !IsVorbisIdentification(packet)) return absl::OkStatus();
        if (vorbis_synthesis_headerin(&info_, &comment_, &packet) != 0) {
          return absl::InvalidArgumentError("Ogg Vorbis headers are corrupt");
        }
        ++headers;
      }
    }
    // No whole packet: libsndfile fails before it allocates anything Vorbis (measured), and
    // says why better than this could.
    if (headers == 0) return absl::OkStatus();
    if (headers < 3) return absl::InvalidArgumentError("Ogg Vorbis headers are incomplete");
    return absl::OkStatus();
  }

 private:
  static bool IsVorbisIdentification(const ogg_packet& packet) {
    return packet.bytes >= 7 && packet.packet[0] == 1 &&
           std::memcmp(packet.packet + 1, "vorbis", 6) == 0;
  }
  ogg_sync_state sync_;
  ogg_stream_state stream_;
  bool stream_ready_ = false;
  vorbis_info info_;
  vorbis_comment comment_;
};

}  // namespace

absl::Status CheckOggVorbisHeaders(std::span<const uint8_t> bytes) {
  if (bytes.size() < 4 || std::memcmp(bytes.data(), "OggS", 4) != 0) return absl::OkStatus();
  HeaderReader reader;
  return reader.Check(bytes);
}

}  // namespace voxserve::audio
