// The two helpers of the gRPC drain: finding and shutting a listening socket without closing
// it (listening_sockets.h), and waiting until calls stop arriving (call_arrivals.h).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "transport/grpc/call_arrivals.h"
#include "transport/grpc/listening_sockets.h"

namespace voxserve::transport::grpc {
namespace {

using Clock = std::chrono::steady_clock;
using ::testing::Contains;
using ::testing::IsEmpty;

// A loopback TCP socket on an ephemeral port; listening unless `listen` is false.
struct Socket {
  explicit Socket(bool listen = true) : fd(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    if (listen) ::listen(fd, 8);
    socklen_t size = sizeof(address);
    getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
    port = ntohs(address.sin_port);
  }
  ~Socket() { close(fd); }
  int fd;
  int port;
};

int ConnectTo(int port) {  // 0, or the errno of a failed connect
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  int result = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 ? 0 : errno;
  close(fd);
  return result;
}

TEST(ListeningSockets, FindsTheListeningSocketOnAPortAndNothingElse) {
  Socket listening;
  Socket bound_only(/*listen=*/false);
  EXPECT_THAT(ListeningSocketsOnPort(listening.port), Contains(listening.fd));
  EXPECT_THAT(ListeningSocketsOnPort(bound_only.port), IsEmpty());
}

TEST(ListeningSockets, RefusingNewConnectionsKeepsTheDescriptorOpen) {
  Socket listening;
  ASSERT_EQ(ConnectTo(listening.port), 0);
  RefuseNewConnections(ListeningSocketsOnPort(listening.port));
  EXPECT_EQ(ConnectTo(listening.port), ECONNREFUSED);
  EXPECT_NE(fcntl(listening.fd, F_GETFD), -1) << "the owner closes it, not the drain";
  EXPECT_THAT(ListeningSocketsOnPort(listening.port), IsEmpty());
}

TEST(CallArrivals, WaitsAQuietPeriodAfterTheLastArrival) {
  CallArrivals arrivals;
  arrivals.Arrived();
  const auto start = Clock::now();
  arrivals.WaitQuiet(std::chrono::milliseconds(50), start + std::chrono::seconds(10));
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(45));  // from Arrived, just before
}

TEST(CallArrivals, TheDeadlineWins) {
  CallArrivals arrivals;
  arrivals.Arrived();
  const auto start = Clock::now();
  arrivals.WaitQuiet(std::chrono::hours(1), start + std::chrono::milliseconds(20));
  EXPECT_LT(Clock::now() - start, std::chrono::minutes(1));
}

}  // namespace
}  // namespace voxserve::transport::grpc
