#include "transport/grpc/call_start.h"

#include <grpc/grpc_security_constants.h>
#include <grpcpp/security/auth_context.h>

#include <cctype>
#include <cstdio>
#include <random>

namespace voxserve::transport::grpc {
namespace {

// As transport/http: 16 hex digits, or the client's id when short and printable (it ends up in
// logs and in metadata, which must be printable ASCII).
std::string RequestIdFrom(const ::grpc::CallbackServerContext& context) {
  auto given = context.client_metadata().find("x-request-id");
  if (given != context.client_metadata().end()) {
    std::string_view id(given->second.data(), given->second.size());
    bool usable = !id.empty() && id.size() <= 128;
    for (char c : id) usable = usable && std::isprint(static_cast<unsigned char>(c));
    if (usable) return std::string(id);
  }
  thread_local std::mt19937_64 random{std::random_device{}()};
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(random()));
  return buffer;
}

std::string ClientSubject(const ::grpc::CallbackServerContext& context) {
  std::shared_ptr<const ::grpc::AuthContext> auth = context.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return "";
  std::vector<::grpc::string_ref> subjects =
      auth->FindPropertyValues(GRPC_X509_SUBJECT_PROPERTY_NAME);
  return subjects.empty() ? "" : std::string(subjects.front().data(), subjects.front().size());
}

}  // namespace

absl::StatusOr<CallStart> StartCall(::grpc::CallbackServerContext& context, std::string_view method,
                                    const CallGate& gate) {
  CallStart start;
  start.request_id = RequestIdFrom(context);
  context.AddInitialMetadata("x-request-id", start.request_id);
  if (!gate) return start;

  const std::string subject = ClientSubject(context);
  const std::string peer = context.peer();
  CallInfo call;
  call.method = method;
  call.client_subject = subject;
  call.peer = peer;
  call.metadata = [&context](std::string_view key) -> std::string_view {
    auto found = context.client_metadata().find(::grpc::string_ref(key.data(), key.size()));
    if (found == context.client_metadata().end()) return {};
    return {found->second.data(), found->second.size()};
  };
  absl::StatusOr<CallGrant> grant = gate(call);
  if (!grant.ok()) return grant.status();
  start.grant = *std::move(grant);
  return start;
}

void CallStart::Prepare(service::SynthesisRequest& request) const {
  request.context.request_id = request_id;
  if (grant.prepare_request) grant.prepare_request(request);
}

}  // namespace voxserve::transport::grpc
