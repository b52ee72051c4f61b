#include "hub/file_digest.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "absl/strings/str_format.h"

namespace voxserve::hub {
namespace {

absl::StatusOr<std::string> Digest(const EVP_MD* algorithm, const std::string& path,
                                   const std::string& prefix) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot read " + path + ": " + std::strerror(errno));
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                  EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), algorithm, nullptr) != 1 ||
      EVP_DigestUpdate(context.get(), prefix.data(), prefix.size()) != 1) {
    return absl::InternalError("OpenSSL could not start a digest");
  }
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    if (in.gcount() > 0 &&
        EVP_DigestUpdate(context.get(), buffer.data(), static_cast<size_t>(in.gcount())) != 1) {
      return absl::InternalError("OpenSSL digest failed");
    }
  }
  if (in.bad()) return absl::DataLossError("reading " + path + " failed");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context.get(), digest, &length) != 1) {
    return absl::InternalError("OpenSSL digest failed");
  }
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += absl::StrFormat("%02x", digest[i]);
  return hex;
}

}  // namespace

absl::StatusOr<std::string> Sha256Hex(const std::string& path) {
  return Digest(EVP_sha256(), path, "");
}

absl::StatusOr<std::string> GitBlobSha1Hex(const std::string& path) {
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error) return absl::NotFoundError("cannot read " + path + ": " + error.message());
  std::string header = "blob " + std::to_string(size);
  header.push_back('\0');
  return Digest(EVP_sha1(), path, header);
}

}  // namespace voxserve::hub
