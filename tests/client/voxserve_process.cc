#include "voxserve_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <regex>

#include "support/test_paths.h"

namespace voxserve::testing {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

VoxServeProcess::VoxServeProcess(std::vector<std::string> flags) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return;
  std::vector<std::string> args = {
      test_paths::kVoxserveBin, "--host", "127.0.0.1", "--port", "0", "--grpc-port", "0"};
  args.insert(args.end(), flags.begin(), flags.end());
  pid_ = fork();
  if (pid_ == 0) {
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  reader_ = std::thread([this, fd = pipe_fds[0]] { ReadLog(fd); });
  const std::regex listening(R"(listening on (https?)://[0-9.]+:(\d+))");
  auto deadline = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < deadline && port_ == 0) {
    {
      std::lock_guard lock(mutex_);
      for (const std::string& line : lines_) {
        std::smatch match;
        if (std::regex_search(line, match, listening)) {
          tls_ = match[1] == "https";
          port_ = std::stoi(match[2]);
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (port_ == 0 || tls_) return;  // TLS servers: the test waits for readiness itself
  while (Clock::now() < deadline) {
    if (Request("GET", "/health/ready") == 200) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  port_ = 0;
}

VoxServeProcess::~VoxServeProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 2000 && waitpid(pid_, &status, WNOHANG) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (waitpid(pid_, &status, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
  if (reader_.joinable()) reader_.join();
}

std::string VoxServeProcess::url() const {
  return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

std::string VoxServeProcess::grpc_url() const {
  std::lock_guard lock(mutex_);
  for (const std::string& line : lines_) {
    std::smatch match;
    static const std::regex grpc_listening(R"(gRPC listening on [0-9.]+:(\d+))");
    if (std::regex_search(line, match, grpc_listening)) return "grpc://127.0.0.1:" + match[1].str();
  }
  return "";
}

std::string VoxServeProcess::log() const {
  std::lock_guard lock(mutex_);
  std::string text;
  for (const std::string& line : lines_) text += line + "\n";
  return text;
}

void VoxServeProcess::ReadLog(int fd) {
  FILE* file = fdopen(fd, "r");
  char buffer[4096];
  while (file != nullptr && fgets(buffer, sizeof buffer, file) != nullptr) {
    std::string line(buffer);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    std::lock_guard lock(mutex_);
    lines_.push_back(std::move(line));
  }
  if (file != nullptr) fclose(file);
}

int VoxServeProcess::Request(const std::string& method, const std::string& path,
                             const std::string& body, std::string* response_body) const {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port_));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  std::string request =
      method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
      "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return -1;
  }
  std::string response;
  char buffer[4096];
  ssize_t got;
  while ((got = read(fd, buffer, sizeof buffer)) > 0)
    response.append(buffer, static_cast<size_t>(got));
  close(fd);
  int status = -1;
  if (std::sscanf(response.c_str(), "HTTP/1.1 %d", &status) != 1) return -1;
  if (response_body != nullptr) {
    size_t end = response.find("\r\n\r\n");
    *response_body = end == std::string::npos ? "" : response.substr(end + 4);
  }
  return status;
}

void VoxServeProcess::SetFaults(const std::string& json) const {
  Request("POST", "/testing/faults", json);
}

int VoxServeProcess::FaultRequestsSeen() const {
  std::string body;
  Request("GET", "/testing/faults", "", &body);
  std::smatch match;
  static const std::regex requests(R"("requests":(\d+))");
  return std::regex_search(body, match, requests) ? std::stoi(match[1]) : -1;
}

}  // namespace voxserve::testing
