// One unary voxserve.v1 call. The unary methods are registered raw (bytes in, bytes out): gRPC's
// typed callback handler answers a request it cannot parse with a bare UNIMPLEMENTED that no
// handler ever sees, so the parse is done here and a bad message (malformed bytes, a string field
// that is not UTF-8) gets INVALID_ARGUMENT with a message and the code `invalid_message`, counted
// in voxserve_grpc_requests_total like any other answer.
#pragma once

#include <google/protobuf/message.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include "absl/status/statusor.h"
#include "transport/grpc/call_start.h"
#include "transport/grpc/handler_env.h"

namespace voxserve::transport::grpc {

// The bytes as `message`; InvalidArgument `invalid_message` naming the message type otherwise.
absl::Status ParseMessage(const ::grpc::ByteBuffer& bytes, google::protobuf::Message& message);
// `message` as a raw method's reply bytes; Internal only past protobuf's 2 GiB limit.
absl::StatusOr<::grpc::ByteBuffer> SerializeMessage(const google::protobuf::Message& message);

// Owned by gRPC from the method handler's return until OnDone, where it deletes itself. Start
// runs on the handler's thread, before the call is returned; Answer may come from any thread,
// exactly once, and is the last touch of the call.
class UnaryCallBase : public ::grpc::ServerUnaryReactor {
 public:
  UnaryCallBase(HandlerEnv& env, ::grpc::CallbackServerContext* context, const char* method,
                ::grpc::ByteBuffer* reply)
      : env_(env), context_(context), method_(method), reply_(reply) {}

  // Writes the response into the reply bytes when `status` is OK, maps the status, counts the
  // call and finishes it.
  void Answer(const absl::Status& status);

  HandlerEnv& env() const { return env_; }
  ::grpc::CallbackServerContext& context() const { return *context_; }

 protected:
  // StartCall (request id, call gate), then the request bytes into `request`. On an error the
  // call has been answered with it.
  absl::StatusOr<CallStart> StartInto(const ::grpc::ByteBuffer* bytes,
                                      google::protobuf::Message& request);
  virtual const google::protobuf::Message& response_message() const = 0;

 private:
  void OnDone() override { delete this; }

  HandlerEnv& env_;
  ::grpc::CallbackServerContext* const context_;
  const char* const method_;
  ::grpc::ByteBuffer* const reply_;  // gRPC's, written once by Answer
};

// The call with its parsed request and the response a handler fills before Answer(OK).
template <typename Request, typename Response>
class UnaryCall : public UnaryCallBase {
 public:
  using UnaryCallBase::UnaryCallBase;

  absl::StatusOr<CallStart> Start(const ::grpc::ByteBuffer* bytes) {
    return StartInto(bytes, request_);
  }
  const Request& request() const { return request_; }
  Response* response() { return &response_; }

 private:
  const google::protobuf::Message& response_message() const override { return response_; }

  Request request_;
  Response response_;
};

}  // namespace voxserve::transport::grpc
