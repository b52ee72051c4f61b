#include "transport/tls/server_tls_context.h"

#include <openssl/err.h>
#include <openssl/x509.h>

#include <ctime>

#include "core/error.h"

namespace voxserve::transport::tls {
namespace ssl = boost::asio::ssl;

namespace {

// Identifies our sessions for resumption; OpenSSL refuses to resume a session that verified a
// client certificate without one.
constexpr unsigned char kSessionIdContext[] = "voxserve";

absl::Status FileError(const std::string& key, const std::string& path,
                       const boost::system::error_code& ec) {
  return core::InvalidArgument(key + " " + path + ": " + ec.message());
}

double NotAfterSeconds(SSL_CTX* context) {
  X509* certificate = SSL_CTX_get0_certificate(context);
  if (certificate == nullptr) return 0;
  std::tm tm{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(certificate), &tm) != 1) return 0;
  return static_cast<double>(timegm(&tm));
}

absl::StatusOr<std::shared_ptr<ssl::context>> Build(const TlsConfig& config) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = context->native_handle();
  // TLS 1.0 and 1.1 are deprecated (RFC 8996).
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_compression |
                       ssl::context::single_dh_use);
  boost::system::error_code ec;
  context->use_certificate_chain_file(config.cert_file, ec);
  if (ec) return FileError("tls.cert_file", config.cert_file, ec);
  context->use_private_key_file(config.key_file, ssl::context::pem, ec);
  if (ec) return FileError("tls.key_file", config.key_file, ec);
  if (SSL_CTX_check_private_key(native) != 1) {
    return core::InvalidArgument("tls.key_file " + config.key_file +
                                 " does not match the certificate in " + config.cert_file);
  }
  SSL_CTX_set_session_id_context(native, kSessionIdContext, sizeof kSessionIdContext - 1);
  if (!config.client_ca_file.empty()) {
    context->load_verify_file(config.client_ca_file, ec);
    if (ec) return FileError("tls.client_ca_file", config.client_ca_file, ec);
    // Tell clients which CAs we accept, so one with several certificates picks the right one.
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(config.client_ca_file.c_str())) {
      SSL_CTX_set_client_CA_list(native, names);
    }
  }
  switch (config.client_auth) {
    case ClientAuth::kNone:
      context->set_verify_mode(ssl::verify_none);
      break;
    case ClientAuth::kOptional:
      context->set_verify_mode(ssl::verify_peer);
      break;
    case ClientAuth::kRequire:
      context->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
      break;
  }
  return context;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServerTlsContext>> ServerTlsContext::Create(
    const TlsConfig& config) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  std::unique_ptr<ServerTlsContext> tls(new ServerTlsContext(config));
  if (absl::Status status = tls->Reload(); !status.ok()) return status;
  return tls;
}

absl::Status ServerTlsContext::Reload() {
  auto context = Build(config_);
  if (!context.ok()) return context.status();
  double not_after = NotAfterSeconds((*context)->native_handle());
  std::lock_guard lock(mutex_);
  current_ = std::move(*context);
  not_after_seconds_ = not_after;
  return absl::OkStatus();
}

std::shared_ptr<ssl::context> ServerTlsContext::Current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

double ServerTlsContext::not_after_seconds() const {
  std::lock_guard lock(mutex_);
  return not_after_seconds_;
}

std::string VerifiedPeerSubject(SSL* ssl) {
  X509* certificate = SSL_get0_peer_certificate(ssl);
  if (certificate == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return {};
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr) return {};
  X509_NAME_print_ex(bio, X509_get_subject_name(certificate), 0,
                     XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
  char* data = nullptr;
  long length = BIO_get_mem_data(bio, &data);
  std::string subject(data, static_cast<size_t>(std::max(0L, length)));
  BIO_free(bio);
  return subject;
}

}  // namespace voxserve::transport::tls
