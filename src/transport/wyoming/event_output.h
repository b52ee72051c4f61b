// What an EventHandler writes through: implemented by WyomingConnection, which owns the socket,
// the write queue and the strand everything of one connection runs on.
#pragma once

#include <cstddef>
#include <string>

#include "absl/functional/any_invocable.h"

namespace voxserve::transport::wyoming {

class EventOutput {
 public:
  virtual ~EventOutput() = default;

  // On the strand: one encoded event, written after everything queued before it. `audio_bytes`
  // of it were counted by AddQueuedAudio beforehand; they are taken off once it is written (or
  // dropped because the connection ended).
  virtual void Send(std::string frame, size_t audio_bytes = 0) = 0;
  // Safe cross thread: audio about to be posted for sending counts as queued from now on.
  virtual void AddQueuedAudio(size_t bytes) = 0;
  // On the strand: counted audio that will not be sent after all (the request has ended).
  virtual void DropQueuedAudio(size_t bytes) = 0;
  // Safe cross thread: audio bytes counted and not yet written to the socket.
  virtual size_t QueuedAudioBytes() const = 0;
  // Safe cross thread: runs `task` on the strand; the connection stays alive until it has run.
  virtual void Post(absl::AnyInvocable<void() &&> task) = 0;
  // On the strand: whether to hand over the client's next event. False: reading goes on until
  // one complete event is held (so a client that leaves meanwhile is noticed), then TCP holds
  // the client back.
  virtual void SetReading(bool reading) = 0;
  // On the strand: close once everything queued is written; later sends are dropped.
  virtual void Close() = 0;
};

}  // namespace voxserve::transport::wyoming
