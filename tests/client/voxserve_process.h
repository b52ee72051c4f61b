// Starts the real voxserve binary (path: test_paths::kVoxserveBin, support/test_paths.h) on a free
// loopback port for the client's integration tests, and stops it with SIGTERM.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace voxserve::testing {

class VoxServeProcess {
 public:
  // Extra flags after --host 127.0.0.1 --port 0 --grpc-port 0. Waits until /health/ready answers
  // 200.
  explicit VoxServeProcess(std::vector<std::string> flags);
  ~VoxServeProcess();  // SIGTERM, then SIGKILL after 20 s

  bool started() const { return port_ > 0; }
  int port() const { return port_; }
  std::string url() const;       // http(s)://127.0.0.1:PORT
  std::string grpc_url() const;  // grpc://127.0.0.1:PORT (the server's gRPC listener)
  std::string log() const;

  // A raw HTTP/1.1 request on a new connection (plain only): the status, body in `body`.
  int Request(const std::string& method, const std::string& path, const std::string& body = "",
              std::string* response_body = nullptr) const;
  // POST /testing/faults with `json`; GET's counter "requests".
  void SetFaults(const std::string& json) const;
  int FaultRequestsSeen() const;

 private:
  void ReadLog(int fd);

  pid_t pid_ = -1;
  int port_ = 0;
  bool tls_ = false;
  std::thread reader_;
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

}  // namespace voxserve::testing
