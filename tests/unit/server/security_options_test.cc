// The tls.* and auth.* options: parsed from flags like every other option, validated together.
#include <gtest/gtest.h>

#include "server/server_config.h"

namespace voxserve::server {
namespace {

absl::StatusOr<ParsedCommandLine> Load(std::vector<std::string> args) {
  std::vector<const char*> argv = {"voxserve"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return LoadServerConfig(static_cast<int>(argv.size()), argv.data(),
                          [](const std::string&) { return std::nullopt; });
}

TEST(SecurityOptionsTest, DefaultsArePlainHttpWithoutKeys) {
  auto parsed = Load({});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->config.tls.enabled());
  EXPECT_TRUE(parsed->config.auth.keys_file.empty());
  EXPECT_FALSE(parsed->config.auth.protect_health);
  EXPECT_FALSE(parsed->config.auth.protect_metrics);
}

TEST(SecurityOptionsTest, FlagsSetTlsAndAuth) {
  auto parsed = Load({"--tls-cert-file", "s.pem", "--tls-key-file", "s.key", "--tls-client-ca-file",
                      "ca.pem", "--tls-client-auth", "require", "--api-keys-file", "keys.yaml",
                      "--protect-metrics", "true"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const ServerConfig& c = parsed->config;
  EXPECT_EQ(c.tls.cert_file, "s.pem");
  EXPECT_EQ(c.tls.key_file, "s.key");
  EXPECT_EQ(c.tls.client_ca_file, "ca.pem");
  EXPECT_EQ(c.tls.client_auth, transport::tls::ClientAuth::kRequire);
  EXPECT_EQ(c.auth.keys_file, "keys.yaml");
  EXPECT_TRUE(c.auth.protect_metrics);
  EXPECT_FALSE(c.auth.protect_health);
}

TEST(SecurityOptionsTest, BadValuesNameTheirSource) {
  auto mode = Load({"--tls-client-auth", "mutual"});
  ASSERT_FALSE(mode.ok());
  EXPECT_NE(std::string(mode.status().message()).find("--tls-client-auth"), std::string::npos);
  auto half = Load({"--tls-cert-file", "s.pem"});
  ASSERT_FALSE(half.ok());
  EXPECT_NE(std::string(half.status().message()).find("tls.key_file"), std::string::npos);
  EXPECT_FALSE(Load({"--protect-health", "maybe"}).ok());
}

}  // namespace
}  // namespace voxserve::server
