#include "transport/tls/tls_config.h"

#include <gtest/gtest.h>

#include "transport/tls/server_tls_context.h"

namespace voxserve::transport::tls {
namespace {

std::string Message(const absl::Status& status) { return std::string(status.message()); }

TEST(TlsConfigTest, PlainByDefault) {
  TlsConfig config;
  EXPECT_FALSE(config.enabled());
  EXPECT_TRUE(config.Validate().ok());
}

TEST(TlsConfigTest, ValidateNamesTheMissingKey) {
  TlsConfig cert_only;
  cert_only.cert_file = "server.pem";
  EXPECT_NE(Message(cert_only.Validate()).find("tls.key_file"), std::string::npos);

  TlsConfig mtls_without_ca;
  mtls_without_ca.cert_file = "server.pem";
  mtls_without_ca.key_file = "server.key";
  mtls_without_ca.client_auth = ClientAuth::kRequire;
  EXPECT_NE(Message(mtls_without_ca.Validate()).find("tls.client_ca_file"), std::string::npos);

  TlsConfig ca_without_tls;
  ca_without_tls.client_ca_file = "ca.pem";
  EXPECT_FALSE(ca_without_tls.Validate().ok());
}

TEST(TlsConfigTest, ClientAuthModesRoundTrip) {
  for (ClientAuth mode : {ClientAuth::kNone, ClientAuth::kOptional, ClientAuth::kRequire}) {
    auto parsed = ParseClientAuth(ClientAuthName(mode));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, mode);
  }
  EXPECT_FALSE(ParseClientAuth("mutual").ok());
}

TEST(TlsConfigTest, UnreadableFilesFailWithTheKeyAndPath) {
  TlsConfig config;
  config.cert_file = "/nonexistent/server.pem";
  config.key_file = "/nonexistent/server.key";
  auto context = ServerTlsContext::Create(config);
  ASSERT_FALSE(context.ok());
  EXPECT_NE(Message(context.status()).find("tls.cert_file /nonexistent/server.pem"),
            std::string::npos)
      << context.status();
  auto pem = ReadPemFiles(config);
  ASSERT_FALSE(pem.ok());
  EXPECT_NE(Message(pem.status()).find("tls.cert_file"), std::string::npos);
}

}  // namespace
}  // namespace voxserve::transport::tls
