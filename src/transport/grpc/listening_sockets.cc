#include "transport/grpc/listening_sockets.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <charconv>
#include <filesystem>
#include <string>
#include <system_error>

namespace voxserve::transport::grpc {
namespace {

bool IsListeningTcpSocket(int fd) {
  int value = 0;
  socklen_t size = sizeof(value);
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &size) != 0 || value == 0) return false;
  size = sizeof(value);
  return getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &value, &size) == 0 && value == IPPROTO_TCP;
}

int LocalPort(int fd) {
  sockaddr_storage address{};
  socklen_t size = sizeof(address);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) return -1;
  if (address.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
  }
  if (address.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
  }
  return -1;
}

}  // namespace

std::vector<int> ListeningSocketsOnPort(int port) {
  std::vector<int> sockets;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    const std::string name = entry.path().filename().string();
    int fd = -1;
    auto [end, parse_error] = std::from_chars(name.data(), name.data() + name.size(), fd);
    if (parse_error != std::errc() || end != name.data() + name.size()) continue;
    if (IsListeningTcpSocket(fd) && LocalPort(fd) == port) sockets.push_back(fd);
  }
  return sockets;
}

void RefuseNewConnections(const std::vector<int>& sockets) {
  // Linux: shutdown() of a listening socket disconnects it (state CLOSE), resetting the queued
  // connections; SHUT_RD is the direction that matters (inet_shutdown, net/ipv4/af_inet.c).
  for (int fd : sockets) ::shutdown(fd, SHUT_RDWR);
}

}  // namespace voxserve::transport::grpc
