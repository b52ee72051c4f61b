#include "client/tls_context.h"

namespace voxserve::client {
namespace ssl = boost::asio::ssl;

absl::StatusOr<std::unique_ptr<ssl::context>> MakeClientTlsContext(const TlsOptions& options) {
  auto context = std::make_unique<ssl::context>(ssl::context::tls_client);
  boost::system::error_code ec;
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                           ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                           ssl::context::no_tlsv1_1,
                       ec);
  auto failed = [&ec](const std::string& what) {
    return absl::InvalidArgumentError(what + ": " + ec.message());
  };
  if (ec) return failed("TLS options");
  if (options.ca_file.empty()) {
    context->set_default_verify_paths(ec);
    if (ec) return failed("system CA store");
  } else {
    context->load_verify_file(options.ca_file, ec);
    if (ec) return failed("tls ca_file " + options.ca_file);
  }
  if (options.cert_file.empty() != options.key_file.empty()) {
    return absl::InvalidArgumentError("tls cert_file and key_file go together (mTLS)");
  }
  if (!options.cert_file.empty()) {
    context->use_certificate_chain_file(options.cert_file, ec);
    if (ec) return failed("tls cert_file " + options.cert_file);
    context->use_private_key_file(options.key_file, ssl::context::pem, ec);
    if (ec) return failed("tls key_file " + options.key_file);
  }
  return context;
}

}  // namespace voxserve::client
