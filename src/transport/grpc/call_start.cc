#include "transport/grpc/call_start.h"

#include <grpc/grpc_security_constants.h>
#include <grpcpp/security/auth_context.h>

#include <algorithm>

#include "core/request_id.h"
#include "service/response_cache.h"

namespace voxserve::transport::grpc {
namespace {

// The client's x-request-id when usable (core::RequestIdOrNew), else a new one.
std::string RequestIdFrom(const ::grpc::CallbackServerContext& context) {
  auto given = context.client_metadata().find("x-request-id");
  if (given == context.client_metadata().end()) return core::NewRequestId();
  return core::RequestIdOrNew(std::string_view(given->second.data(), given->second.size()));
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
  // Several values are one list, as HTTP's: the strictest directive wins.
  auto [first, last] = context.client_metadata().equal_range("cache-control");
  for (auto it = first; it != last; ++it) {
    start.cache_policy = std::max(start.cache_policy, service::ParseCacheControl(std::string_view(
                                                          it->second.data(), it->second.size())));
  }
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
  request.cache_policy = cache_policy;
  if (grant.prepare_request) grant.prepare_request(request);
}

void AddCacheTrailer(::grpc::CallbackServerContext& context, service::CacheResult result) {
  std::string_view name = service::CacheResultName(result);
  if (!name.empty()) context.AddTrailingMetadata("x-cache", std::string(name));
}

}  // namespace voxserve::transport::grpc
