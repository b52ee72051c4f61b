#include "server/grpc_security.h"

#include <grpcpp/security/server_credentials.h>

#include "transport/auth/authenticator.h"

namespace voxserve::server {
namespace {

using transport::grpc::CallGate;
using transport::grpc::CallGrant;
using transport::grpc::CallInfo;

absl::StatusOr<std::shared_ptr<::grpc::ServerCredentials>> Credentials(
    const transport::tls::TlsConfig& tls) {
  if (!tls.enabled()) return ::grpc::InsecureServerCredentials();
  auto pem = transport::tls::ReadPemFiles(tls);
  if (!pem.ok()) return pem.status();
  ::grpc::SslServerCredentialsOptions options;
  switch (tls.client_auth) {
    case transport::tls::ClientAuth::kNone:
      options.client_certificate_request = GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
      break;
    case transport::tls::ClientAuth::kOptional:
      options.client_certificate_request = GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
      break;
    case transport::tls::ClientAuth::kRequire:
      options.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
      break;
  }
  options.pem_root_certs = pem->client_ca;
  options.pem_key_cert_pairs.push_back({pem->private_key, pem->cert_chain});
  return ::grpc::SslServerCredentials(options);
}

// Listing voices and models (cloned ones too) needs a valid key; calls that synthesize also take a
// slot of the key's rate and concurrency limits, held until the call ends (as on HTTP).
CallGate Gate(const transport::auth::Authenticator* authenticator) {
  if (authenticator == nullptr) return {};
  return [authenticator](const CallInfo& call) -> absl::StatusOr<CallGrant> {
    auto result = authenticator->Authenticate(
        [&call](std::string_view name) { return call.metadata(name); }, call.client_subject,
        transport::auth::Resource::kApi);
    if (!result.ok()) return result.status();
    CallGrant grant;
    // Reading lists and voices is as cheap as ListVoices; RegisterVoice runs a frontend.
    const bool listing = call.method == "ListVoices" || call.method == "ListModels" ||
                         call.method == "ListClonedVoices" || call.method == "GetVoice";
    if (!listing) {
      auto admission = authenticator->Admit(*result);
      if (!admission.ok()) return admission.status();
      grant.hold = std::make_shared<transport::auth::Admission>(*std::move(admission));
    }
    grant.prepare_request = [models = result->allowed_models](service::SynthesisRequest& request) {
      request.allowed_models = models;
    };
    return grant;
  };
}

}  // namespace

absl::StatusOr<transport::grpc::GrpcServerOptions> GrpcSecurityOptions(
    const transport::tls::TlsConfig& tls, const ServerSecurity& security) {
  auto credentials = Credentials(tls);
  if (!credentials.ok()) return credentials.status();
  return transport::grpc::GrpcServerOptions{*std::move(credentials),
                                            Gate(security.authenticator())};
}

}  // namespace voxserve::server
