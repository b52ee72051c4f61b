// TLS, mTLS and API keys against a voxserve serving HTTPS with client certificates required and
// an API keys file. Certificates come from the openssl command line, made fresh per run.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "client_test_support.h"

namespace voxserve::client {
namespace {

namespace fs = std::filesystem;
constexpr char kApiKey[] = "sk-voxclient-test-0123456789";

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("voxclient-tls-" + std::to_string(getpid())));
    fs::create_directories(*dir_);
    std::string d = dir_->string();
    std::ofstream(*dir_ / "server.ext") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
    std::ofstream(*dir_ / "keys.yaml")
        << "keys:\n  - name: tester\n    key: \"" << kApiKey << "\"\n";
    std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes ";
    std::string script =
        "cd " + d + " && openssl req -x509" + ec +
        "-keyout ca.key -out ca.pem -days 1 -subj /CN=test-ca"
        " && openssl req" +
        ec +
        "-keyout server.key -out server.csr -subj /CN=localhost"
        " && openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1"
        " -extfile server.ext -out server.pem"
        " && openssl req" +
        ec +
        "-keyout client.key -out client.csr -subj /CN=tester"
        " && openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1"
        " -out client.pem";
    ASSERT_EQ(std::system(("(" + script + ") >/dev/null 2>&1").c_str()), 0);
    server_ = new testing::VoxServeProcess({"--tls-cert-file", d + "/server.pem", "--tls-key-file",
                                            d + "/server.key", "--tls-client-ca-file",
                                            d + "/ca.pem", "--tls-client-auth", "require",
                                            "--api-keys-file", d + "/keys.yaml"});
    ASSERT_TRUE(server_->started()) << server_->log();
  }
  static void TearDownTestSuite() {
    delete server_;
    fs::remove_all(*dir_);
    delete dir_;
  }

  ClientOptions Options() const {
    ClientOptions options = TestOptions({server_->url()});
    options.retry.max_attempts = 1;
    options.api_key = kApiKey;
    options.tls.ca_file = (*dir_ / "ca.pem").string();
    options.tls.cert_file = (*dir_ / "client.pem").string();
    options.tls.key_file = (*dir_ / "client.key").string();
    return options;
  }
  void WaitReady(Client& client) {
    for (int i = 0; i < 300; ++i) {
      auto health = client.CheckHealth(HealthProbe::kReady);
      if (health.ok() && health->http_status == 200) return;
      std::this_thread::sleep_for(milliseconds(20));
    }
    FAIL() << "not ready:\n" << server_->log();
  }

  static fs::path* dir_;
  static testing::VoxServeProcess* server_;
};
fs::path* TlsTest::dir_ = nullptr;
testing::VoxServeProcess* TlsTest::server_ = nullptr;

TEST_F(TlsTest, SynthesizesOverMutualTlsWithAnApiKey) {
  ASSERT_TRUE(server_->url().starts_with("https://"));
  auto client = MakeClient(Options());
  WaitReady(*client);
  auto speech = client->Synthesize(Hello("wav"));
  ASSERT_TRUE(speech.ok()) << speech.status();
  EXPECT_EQ(speech->audio.substr(0, 4), "RIFF");
  auto voices = client->ListVoices();
  EXPECT_TRUE(voices.ok()) << voices.status();
}

TEST_F(TlsTest, VerifiesTheServerNameGiven) {
  ClientOptions options = Options();
  options.endpoints = {"https://localhost:" + std::to_string(server_->port())};
  auto client = MakeClient(options);
  EXPECT_TRUE(client->ListModels().ok());
  options.tls.server_name = "not-the-server.example";
  auto wrong = MakeClient(options)->ListModels();
  EXPECT_EQ(ErrorInfoOf(wrong.status()).kind, ErrorKind::kTls) << wrong.status();
}

TEST_F(TlsTest, RejectsAServerItCannotVerify) {
  ClientOptions options = Options();
  options.tls.ca_file.clear();  // the system store does not know the test CA
  auto result = MakeClient(options)->ListModels();
  EXPECT_EQ(ErrorInfoOf(result.status()).kind, ErrorKind::kTls) << result.status();
}

TEST_F(TlsTest, WithoutAKeyTheServerAnswers401AndItIsNotRetried) {
  ClientOptions options = Options();
  options.api_key.clear();
  options.retry.max_attempts = 3;
  CallInfo info;
  auto result = MakeClient(options)->ListVoices({}, &info);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnauthenticated) << result.status();
  EXPECT_EQ(info.attempts.size(), 1u);
}

TEST_F(TlsTest, WithoutAClientCertificateTheConnectionFails) {
  ClientOptions options = Options();
  options.tls.cert_file.clear();
  options.tls.key_file.clear();
  auto result = MakeClient(options)->ListModels();
  EXPECT_EQ(ErrorInfoOf(result.status()).kind, ErrorKind::kTls) << result.status();
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(TlsTest, GrpcUsesTheSameCertificatesAndKeys) {
  std::string grpc = server_->grpc_url();
  ASSERT_FALSE(grpc.empty()) << server_->log();
  ClientOptions options = Options();
  options.endpoints = {"grpcs://" + grpc.substr(grpc.find("://") + 3)};
  options.tls.server_name = "localhost";
  auto speech = MakeClient(options)->Synthesize(Hello("wav"));
  ASSERT_TRUE(speech.ok()) << speech.status();
  EXPECT_EQ(speech->audio.substr(0, 4), "RIFF");
  options.api_key.clear();
  auto refused = MakeClient(options)->ListModels();
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnauthenticated) << refused.status();
}

TEST_F(TlsTest, WebSocketUsesTheSameCertificatesAndKeys) {
  ClientOptions options = Options();
  options.endpoints = {"wss://" + server_->url().substr(std::string("https://").size())};
  auto client = MakeClient(options);
  WaitReady(*client);  // over REST to the same host
  auto speech = client->Synthesize(Hello("pcm"));
  ASSERT_TRUE(speech.ok()) << speech.status();
  EXPECT_GT(speech->audio_bytes, 1000u);
  options.api_key.clear();
  auto refused = MakeClient(options)->Synthesize(Hello());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnauthenticated) << refused.status();
  options = Options();
  options.endpoints = {"wss://" + server_->url().substr(std::string("https://").size())};
  options.tls.cert_file.clear();
  options.tls.key_file.clear();
  auto no_cert = MakeClient(options)->Synthesize(Hello());
  EXPECT_EQ(ErrorInfoOf(no_cert.status()).kind, ErrorKind::kTls) << no_cert.status();
}

TEST_F(TlsTest, BadTlsFilesAreReportedByCreate) {
  ClientOptions options = Options();
  options.tls.ca_file = "/nonexistent/ca.pem";
  auto client = Client::Create(options);
  EXPECT_EQ(client.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(client.status().message().find("/nonexistent/ca.pem"), std::string::npos);
}

}  // namespace
}  // namespace voxserve::client
