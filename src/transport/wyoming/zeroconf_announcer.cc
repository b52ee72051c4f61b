#include "transport/wyoming/zeroconf_announcer.h"

#include <arpa/inet.h>
#include <avahi-common/alternative.h>
#include <avahi-common/domain.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/thread-watch.h>
#include <avahi-core/core.h>
#include <avahi-core/log.h>
#include <avahi-core/publish.h>

#include "core/error.h"
#include "spdlog/spdlog.h"

namespace voxserve::transport::wyoming {
namespace {

constexpr const char* kServiceType = "_wyoming._tcp";

// Avahi's own log lines, in ours. It reports at its levels; its "info" is chatty (every
// interface it joins), so that goes to debug.
void LogFromAvahi(AvahiLogLevel level, const char* text) {
  switch (level) {
    case AVAHI_LOG_ERROR:
      spdlog::error("zeroconf: {}", text);
      break;
    case AVAHI_LOG_WARN:
      spdlog::warn("zeroconf: {}", text);
      break;
    default:
      spdlog::debug("zeroconf: {}", text);
      break;
  }
}

}  // namespace

// Touched only on the poll's thread (Avahi's callbacks) or with the poll locked or stopped.
struct ZeroconfAnnouncer::State {
  std::string name;
  int port = 0;
  AvahiThreadedPoll* poll = nullptr;
  AvahiServer* server = nullptr;
  AvahiSEntryGroup* group = nullptr;

  ~State() {
    if (poll != nullptr) avahi_threaded_poll_stop(poll);
    if (group != nullptr) avahi_s_entry_group_free(group);  // withdraws the service
    if (server != nullptr) avahi_server_free(server);
    if (poll != nullptr) avahi_threaded_poll_free(poll);
  }

  void Publish() {
    if (group == nullptr) {
      group = avahi_s_entry_group_new(server, &State::OnGroupState, this);
      if (group == nullptr) {
        spdlog::error("zeroconf: cannot create an entry group: {}",
                      avahi_strerror(avahi_server_errno(server)));
        return;
      }
    }
    int error = avahi_server_add_service(server, group, AVAHI_IF_UNSPEC, AVAHI_PROTO_UNSPEC,
                                         AvahiPublishFlags(0), name.c_str(), kServiceType, nullptr,
                                         nullptr, static_cast<uint16_t>(port), nullptr);
    if (error == 0) error = avahi_s_entry_group_commit(group);
    if (error != 0) spdlog::error("zeroconf: cannot announce: {}", avahi_strerror(error));
  }

  void Rename() {
    char* alternative = avahi_alternative_service_name(name.c_str());
    spdlog::warn("zeroconf: the name '{}' is taken on this network; announcing as '{}'", name,
                 alternative);
    name = alternative;
    avahi_free(alternative);
    avahi_s_entry_group_reset(group);
    Publish();
  }

  static void OnServerState(AvahiServer* server, AvahiServerState state, void* data) {
    auto* self = static_cast<State*>(data);
    self->server = server;  // the first call comes from inside avahi_server_new
    if (state == AVAHI_SERVER_RUNNING) {
      self->Publish();
    } else if (state == AVAHI_SERVER_COLLISION) {
      // Another machine (or the host's own responder) uses this host name: take the next one.
      char* alternative = avahi_alternative_host_name(avahi_server_get_host_name(server));
      spdlog::info("zeroconf: host name taken, using {}.local", alternative);
      if (self->group != nullptr) avahi_s_entry_group_reset(self->group);
      avahi_server_set_host_name(server, alternative);
      avahi_free(alternative);
    } else if (state == AVAHI_SERVER_REGISTERING && self->group != nullptr) {
      avahi_s_entry_group_reset(self->group);
    }
  }

  static void OnGroupState(AvahiServer*, AvahiSEntryGroup*, AvahiEntryGroupState state,
                           void* data) {
    auto* self = static_cast<State*>(data);
    if (state == AVAHI_ENTRY_GROUP_ESTABLISHED) {
      spdlog::info("zeroconf: announcing Wyoming as '{}' ({}, port {})", self->name, kServiceType,
                   self->port);
    } else if (state == AVAHI_ENTRY_GROUP_COLLISION) {
      self->Rename();
    }
  }
};

absl::StatusOr<std::unique_ptr<ZeroconfAnnouncer>> ZeroconfAnnouncer::Create(std::string name,
                                                                             int port) {
  if (name.empty() || !avahi_is_valid_service_name(name.c_str())) {
    return core::InvalidArgument("wyoming.zeroconf_name " + core::Quoted(name) +
                                     " is not a DNS-SD service name (1 to 63 bytes)",
                                 "wyoming.zeroconf_name", "invalid_config");
  }
  avahi_set_log_function(LogFromAvahi);
  auto state = std::make_unique<State>();
  state->name = std::move(name);
  state->port = port;
  state->poll = avahi_threaded_poll_new();
  if (state->poll == nullptr) return core::Internal("zeroconf: cannot create Avahi's event loop");

  AvahiServerConfig config;
  avahi_server_config_init(&config);
  // Only what Home Assistant needs: the service and the addresses it resolves to.
  config.publish_hinfo = 0;
  config.publish_workstation = 0;
  config.publish_domain = 0;
  int error = 0;
  avahi_threaded_poll_lock(state->poll);  // no callback runs before state->server is set
  state->server = avahi_server_new(avahi_threaded_poll_get(state->poll), &config,
                                   &State::OnServerState, state.get(), &error);
  avahi_threaded_poll_unlock(state->poll);
  avahi_server_config_free(&config);
  if (state->server == nullptr) {
    return core::Internal(std::string("zeroconf: Avahi's responder did not start: ") +
                          avahi_strerror(error));
  }
  if (avahi_threaded_poll_start(state->poll) < 0) {
    return core::Internal("zeroconf: cannot start Avahi's event loop thread");
  }
  return std::unique_ptr<ZeroconfAnnouncer>(new ZeroconfAnnouncer(std::move(state)));
}

ZeroconfAnnouncer::ZeroconfAnnouncer(std::unique_ptr<State> state) : state_(std::move(state)) {}

ZeroconfAnnouncer::~ZeroconfAnnouncer() = default;

bool ReachableFromTheNetwork(const std::string& host) {
  if (host == "localhost") return false;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) != 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) return !IN6_IS_ADDR_LOOPBACK(&v6);
  return true;  // a host name: whatever it resolves to, others may reach it
}

}  // namespace voxserve::transport::wyoming
