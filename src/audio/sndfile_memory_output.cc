#include "audio/sndfile_memory_output.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace voxserve::audio {
namespace {

SndfileMemoryOutput& Self(void* user_data) { return *static_cast<SndfileMemoryOutput*>(user_data); }

sf_count_t LengthCallback(void* user_data) { return Self(user_data).Length(); }
sf_count_t SeekCallback(sf_count_t offset, int whence, void* user_data) {
  return Self(user_data).Seek(offset, whence);
}
sf_count_t ReadCallback(void* destination, sf_count_t count, void* user_data) {
  return Self(user_data).Read(destination, count);
}
sf_count_t WriteCallback(const void* source, sf_count_t count, void* user_data) {
  return Self(user_data).Write(source, count);
}
sf_count_t TellCallback(void* user_data) { return Self(user_data).Tell(); }

}  // namespace

SF_VIRTUAL_IO* SndfileMemoryOutput::VirtualIo() {
  static SF_VIRTUAL_IO io = {LengthCallback, SeekCallback, ReadCallback, WriteCallback,
                             TellCallback};
  return &io;
}

void SndfileMemoryOutput::TakeBytes(std::string* out) {
  *out += pending_;
  taken_ += static_cast<sf_count_t>(pending_.size());
  pending_.clear();
}

sf_count_t SndfileMemoryOutput::Seek(sf_count_t offset, int whence) {
  sf_count_t base = 0;
  switch (whence) {
    case SEEK_SET:
      base = 0;
      break;
    case SEEK_CUR:
      base = position_;
      break;
    case SEEK_END:
      base = Length();
      break;
    default:
      return -1;
  }
  if (base + offset < 0) return -1;
  position_ = base + offset;
  return position_;
}

// libsndfile does not read back in write mode for the formats used here; taken bytes could not
// be read anyway, so a read there returns nothing.
sf_count_t SndfileMemoryOutput::Read(void* destination, sf_count_t count) {
  if (count <= 0 || position_ < taken_ || position_ >= Length()) return 0;
  sf_count_t available = std::min(count, Length() - position_);
  std::memcpy(destination, pending_.data() + (position_ - taken_), available);
  position_ += available;
  return available;
}

// The part of a write that falls on bytes already taken is dropped, and the write still reports
// success: libsndfile only goes back there to patch headers at close, and each such patch is
// optional in a stream. FLAC's STREAMINFO then keeps total samples 0, MD5 0 and frame sizes 0,
// which the FLAC format defines as "unknown" and decoders accept; an MP3 keeps LAME's blank
// Xing/Info frame, which decoders play as one frame of silence and which only costs seeking
// accuracy and gapless trimming. Writes at offsets not yet taken land normally.
sf_count_t SndfileMemoryOutput::Write(const void* source, sf_count_t count) {
  if (count <= 0) return 0;
  const char* bytes = static_cast<const char*>(source);
  sf_count_t begin = position_;
  sf_count_t end = position_ + count;
  position_ = end;
  if (end <= taken_) return count;
  sf_count_t skip = std::max<sf_count_t>(taken_ - begin, 0);
  auto offset = static_cast<std::size_t>(begin + skip - taken_);
  auto length = static_cast<std::size_t>(count - skip);
  if (pending_.size() < offset + length) pending_.resize(offset + length, '\0');
  pending_.replace(offset, length, bytes + skip, length);
  return count;
}

}  // namespace voxserve::audio
