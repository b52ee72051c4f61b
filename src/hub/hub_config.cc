#include "hub/hub_config.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "core/error.h"

namespace voxserve::hub {
namespace {

std::string Or(const GetEnv& getenv, const std::string& name, const std::string& fallback) {
  std::optional<std::string> value = getenv(name);
  return value && !value->empty() ? *value : fallback;
}

bool NameCharacter(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

absl::Status ValidatePart(const std::string& repo, const std::string& part) {
  if (part.empty() || part.size() > 96) {
    return core::InvalidArgument("repository '" + repo +
                                 "': each of owner and name is 1..96 "
                                 "characters");
  }
  for (char c : part) {
    if (!NameCharacter(c)) {
      return core::InvalidArgument("repository '" + repo +
                                   "': only letters, digits, '-', '_' and '.' may appear in an "
                                   "owner or a name");
    }
  }
  if (part.find("..") != std::string::npos || part.front() == '.' || part.front() == '-' ||
      part.back() == '.' || part.back() == '-') {
    return core::InvalidArgument("repository '" + repo +
                                 "': an owner or a name cannot hold '..' nor start or end with "
                                 "'.' or '-'");
  }
  return absl::OkStatus();
}

}  // namespace

HubConfig HubConfigFromEnvironment(const GetEnv& getenv) {
  HubConfig config;
  config.endpoint = Or(getenv, "HF_ENDPOINT", kDefaultEndpoint);
  while (!config.endpoint.empty() && config.endpoint.back() == '/') config.endpoint.pop_back();
  const std::string home = Or(getenv, "HOME", "/root");
  const std::string hf_home =
      Or(getenv, "HF_HOME", Or(getenv, "XDG_CACHE_HOME", home + "/.cache") + "/huggingface");
  config.cache_dir = Or(getenv, "HF_HUB_CACHE", hf_home + "/hub");
  config.token = Or(getenv, "HF_TOKEN", "");
  if (config.token.empty()) {
    std::ifstream stored(Or(getenv, "HF_TOKEN_PATH", hf_home + "/token"));
    std::stringstream text;
    text << stored.rdbuf();
    config.token = std::string(absl::StripAsciiWhitespace(text.str()));
  }
  return config;
}

absl::Status ValidateRepoId(const std::string& repo) {
  const size_t slash = repo.find('/');
  if (slash == std::string::npos || repo.find('/', slash + 1) != std::string::npos) {
    return core::InvalidArgument("repository '" + repo +
                                 "': expected OWNER/NAME, as on its hub page (e.g. "
                                 "FunAudioLLM/CosyVoice2-0.5B)");
  }
  if (absl::Status owner = ValidatePart(repo, repo.substr(0, slash)); !owner.ok()) return owner;
  return ValidatePart(repo, repo.substr(slash + 1));
}

}  // namespace voxserve::hub
