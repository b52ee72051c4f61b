#include "transport/grpc/unary_call.h"

#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/proto_buffer_writer.h>

#include <utility>

#include "core/error.h"
#include "transport/grpc/status_mapping.h"

namespace voxserve::transport::grpc {

absl::Status ParseMessage(const ::grpc::ByteBuffer& bytes, google::protobuf::Message& message) {
  ::grpc::ByteBuffer view(bytes);  // shares the slices: no copy of the payload
  ::grpc::ProtoBufferReader reader(&view);
  if (!reader.status().ok() || !message.ParseFromZeroCopyStream(&reader)) {
    return core::InvalidArgument(
        "the request is not a valid " + message.GetDescriptor()->full_name() +
            " message (malformed protobuf bytes, or a string field that is not UTF-8)",
        "", "invalid_message");
  }
  return absl::OkStatus();
}

absl::StatusOr<::grpc::ByteBuffer> SerializeMessage(const google::protobuf::Message& message) {
  ::grpc::ByteBuffer bytes;
  bool own_buffer = false;
  ::grpc::Status written =
      ::grpc::GenericSerialize<::grpc::ProtoBufferWriter, google::protobuf::Message>(
          message, &bytes, &own_buffer);
  if (!written.ok()) {
    return core::Internal("a " + message.GetDescriptor()->full_name() +
                          " could not be serialized: " + written.error_message());
  }
  return bytes;
}

void UnaryCallBase::Answer(const absl::Status& status) {
  absl::Status outcome = status;
  if (outcome.ok()) {
    absl::StatusOr<::grpc::ByteBuffer> bytes = SerializeMessage(response_message());
    if (bytes.ok()) {
      reply_->Swap(&*bytes);
    } else {
      outcome = bytes.status();
    }
  }
  ::grpc::Status answer = FinishStatus(*context_, outcome);
  env_.metrics.CountCall(method_, answer.error_code());
  Finish(std::move(answer));
}

absl::StatusOr<CallStart> UnaryCallBase::StartInto(const ::grpc::ByteBuffer* bytes,
                                                   google::protobuf::Message& request) {
  absl::StatusOr<CallStart> call = StartCall(*context_, method_, env_.gate);
  if (call.ok() && bytes != nullptr) {
    if (absl::Status parsed = ParseMessage(*bytes, request); !parsed.ok()) call = parsed;
  }
  if (!call.ok()) Answer(call.status());
  return call;
}

}  // namespace voxserve::transport::grpc
