// The whole of a small file (a config, a manifest, a key), as bytes. For files whose size the
// caller bounds by what they are; a store that must refuse a huge stray file uses
// store::ReadWhole, which checks the size first.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace voxserve::core {

// None when the file cannot be opened or read; the caller says what it was for.
std::optional<std::string> ReadFile(const std::filesystem::path& path);

}  // namespace voxserve::core
