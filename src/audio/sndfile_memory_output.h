// An in-memory output file for libsndfile's virtual I/O whose bytes can be taken out while
// libsndfile is still writing, so encoded audio can be streamed.
#pragma once

#include <sndfile.h>

#include <string>

namespace voxserve::audio {

// Not thread-safe; owned by one SndfileEncoder and must outlive the SNDFILE opened on it.
//
// Bytes once taken are gone, and libsndfile may still seek back and rewrite them when it closes
// the file (a header that needs the final length). Such writes are dropped: see Write.
class SndfileMemoryOutput {
 public:
  // Callbacks for sf_open_virtual; pass a SndfileMemoryOutput* as its user data.
  static SF_VIRTUAL_IO* VirtualIo();

  // Moves every byte written since the last call to the end of *out.
  void TakeBytes(std::string* out);

  sf_count_t Length() const { return taken_ + static_cast<sf_count_t>(pending_.size()); }
  sf_count_t Tell() const { return position_; }
  sf_count_t Seek(sf_count_t offset, int whence);
  sf_count_t Read(void* destination, sf_count_t count);
  sf_count_t Write(const void* source, sf_count_t count);

 private:
  std::string pending_;   // the file's bytes from offset taken_ on
  sf_count_t taken_ = 0;  // bytes handed out by TakeBytes, i.e. the offset of pending_[0]
  sf_count_t position_ = 0;
};

}  // namespace voxserve::audio
