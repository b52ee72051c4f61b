// The OpenSSL context a client's https:// endpoints share: trust anchors, the client certificate
// for mTLS, TLS 1.2 at least.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>

#include "absl/status/statusor.h"
#include "client/client_options.h"

namespace voxserve::client {

// Errors name the file that could not be used.
absl::StatusOr<std::unique_ptr<boost::asio::ssl::context>> MakeClientTlsContext(
    const TlsOptions& options);

}  // namespace voxserve::client
