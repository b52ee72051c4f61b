// ElevenLabs' text-to-speech WebSockets as a protocol on voxserve's WebSocket machinery:
//   GET /elevenlabs/v1/text-to-speech/{voice_id}/stream-input        one stream per socket
//   GET /elevenlabs/v1/text-to-speech/{voice_id}/multi-stream-input  several `context_id`s
// A thin adapter: each stream (context) is one service::SpeechSession; its sentences come back as
// {"audio", "alignment", "normalizedAlignment"} messages, one per sentence, and its end as
// {"isFinal": true}. References: input_messages.h; docs/elevenlabs.md says what is left out.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "service/speech_session.h"
#include "transport/auth/authenticator.h"
#include "transport/elevenlabs/input_messages.h"
#include "transport/elevenlabs/output_format.h"
#include "transport/websocket/stream_protocol.h"

namespace voxserve::transport::elevenlabs {

// The route's paths, for the endpoint. `authenticator` (null: auth is off) checks the first
// message's key when the upgrade had none that is valid; it outlives the endpoint.
bool ServesInputStream(std::string_view path);
websocket::ProtocolRoute InputStreamRoute(const auth::Authenticator* authenticator);

// Everything runs on the connection's strand but each context's OnAudio (service threads).
// Owned by the connection, which outlives each context's running sentence (keep_alive).
class InputStream final : public websocket::StreamProtocol {
 public:
  InputStream(websocket::ProtocolEnv env, const auth::Authenticator* authenticator);
  ~InputStream() override;

  void OnMessage(std::string_view message) override;
  void OnBinaryMessage() override;
  void OnAudioWritten() override;
  bool Busy() const override;
  void OnIdleTimeout() override;
  void Drain() override;
  void OnConnectionEnded(websocket::ConnectionEnd end,
                         std::optional<int> client_close_code) override;

 private:
  class Context;
  // One message's work for a context's session, in order.
  struct Step {
    std::string text;
    bool flush = false;
    bool end = false;  // End() the session
  };

  absl::Status Setup();
  absl::Status Authenticate(const InputMessage& first);
  absl::Status Take(const InputMessage& message);
  absl::StatusOr<Context*> ContextFor(const InputMessage& message);
  absl::Status Feed(Context& context);
  absl::Status CloseContext(Context& context);
  void Advance();  // after each session event: feed the contexts, then UpdateReading
  void OnContextEnded(Context& context, const service::SessionEnd& end);
  void CloseWhenDone();
  void UpdateReading();
  void Fail(const absl::Status& status, const std::optional<std::string>& context_id = {});
  void CloseWith(websocket::CloseCode code, std::string_view reason);
  void WriteLog();

  websocket::ProtocolEnv env_;
  const auth::Authenticator* authenticator_;
  bool multi_ = false;  // multi-stream-input
  std::string voice_id_;
  OutputFormat output_;
  service::SynthesisRequest request_;  // every context's, but for its speed
  bool set_up_ = false;

  std::map<std::string, std::unique_ptr<Context>> contexts_;  // ended ones are removed
  int contexts_started_ = 0;
  size_t pending_bytes_ = 0;  // text in the contexts' Steps
  double audio_seconds_ = 0;  // summed over contexts, for the log
  size_t chars_ = 0;
  bool closing_socket_ = false;  // close_socket, the end of stream-input's input, or Drain
  bool closing_ = false;         // the server has started the close
  bool ended_ = false;           // the connection is gone
  bool logged_ = false;
  int log_status_ = 200;
  std::optional<int> close_code_;
};

}  // namespace voxserve::transport::elevenlabs
