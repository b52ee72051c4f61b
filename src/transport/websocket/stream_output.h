// What a SpeechStream sends through: implemented by WebSocketConnection, which owns the socket,
// the write queue and the strand everything of one connection runs on.
#pragma once

#include <cstddef>
#include <string>

#include "absl/functional/any_invocable.h"
#include "transport/websocket/websocket_messages.h"

namespace voxserve::transport::websocket {

class StreamOutput {
 public:
  virtual ~StreamOutput() = default;

  // On the strand: a JSON text message, sent after everything queued before it.
  virtual void SendEvent(std::string json) = 0;
  // On the strand: a JSON text message that carries audio (ElevenLabs' base64 "audio"): sent
  // like SendEvent, counted in QueuedAudioBytes() like PostAudio until it is written.
  virtual void SendAudioEvent(std::string json) = 0;
  // Safe cross thread (the service's threads): a binary audio message. Its bytes count in
  // QueuedAudioBytes() at once; it is queued on the strand in call order.
  virtual void PostAudio(std::string bytes) = 0;
  // Safe cross thread: runs `task` on the strand; the connection stays alive until it has run.
  virtual void Post(absl::AnyInvocable<void() &&> task) = 0;
  // Safe cross thread: audio bytes posted or queued but not yet written to the socket.
  virtual size_t QueuedAudioBytes() const = 0;
  // On the strand: whether to take the client's next message. False: at most one more is read
  // and held (so a close or reset is still seen), then TCP holds the client back.
  virtual void SetReading(bool reading) = 0;
  // On the strand: close with `code` once everything queued is sent; later sends are dropped.
  // `reason` is cut to what a close frame holds (123 bytes).
  virtual void Close(CloseCode code, std::string reason) = 0;
};

}  // namespace voxserve::transport::websocket
