// The YAML config file (--config; server/server_config and core/options): read from a file as
// voxserve reads it, with no environment and no other flags.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

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
  // Never throws: yaml-cpp errors become a Status naming the key (issue 10).
  (void)voxserve::server::LoadServerConfig(3, argv, no_environment);
  return 0;
}
