// Where the Hugging Face hub is and who asks, read from the environment as the hub's own clients
// (huggingface_hub) read it, so a user's existing setup and cache are reused as they are:
//   HF_ENDPOINT   the hub's address (https://huggingface.co), a mirror, or a test stand-in
//   HF_TOKEN      an access token (else the one `huggingface-cli login` stored: $HF_HOME/token)
//   HF_HUB_CACHE  the cache (else $HF_HOME/hub; HF_HOME defaults to $XDG_CACHE_HOME/huggingface
//                 or ~/.cache/huggingface)
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace voxserve::hub {

inline constexpr char kDefaultEndpoint[] = "https://huggingface.co";

struct HubConfig {
  std::string endpoint = kDefaultEndpoint;  // no trailing slash
  std::string token;                        // empty: anonymous
  std::string cache_dir;                    // the hub cache's root (holds models--*)
};

// Reads the variables through `getenv` (the process environment in production, a map in tests).
using GetEnv = std::function<std::optional<std::string>(const std::string&)>;
HubConfig HubConfigFromEnvironment(const GetEnv& getenv);

// A repository id as the hub spells it: "owner/name" (letters, digits, '-', '_', '.'; no "..",
// no leading or trailing '.' or '-'). InvalidArgument naming what is wrong otherwise.
absl::Status ValidateRepoId(const std::string& repo);

}  // namespace voxserve::hub
