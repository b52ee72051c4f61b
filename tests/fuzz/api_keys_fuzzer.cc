// The API keys file (transport/auth/api_keys_file): YAML text → keys.
#include <cstddef>
#include <cstdint>
#include <string>

#include "transport/auth/api_keys_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string yaml(reinterpret_cast<const char*>(data), size);
  (void)voxserve::transport::auth::ParseApiKeys(yaml, "keys.yaml");
  return 0;
}
