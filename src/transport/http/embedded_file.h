// Files compiled into the binary: cmake/EmbedFiles.cmake generates the functions declared here.
#pragma once

#include <span>
#include <string_view>

namespace voxserve::transport::http {

// Points into static storage: valid for the whole program.
struct EmbeddedFile {
  std::string_view path;  // relative to its folder, e.g. "app.js"
  std::string_view bytes;
  std::string_view etag;  // strong validator, quoted: a SHA-256 prefix of the bytes
};

// web/ (the playground page), generated as playground_files.cc.
std::span<const EmbeddedFile> PlaygroundFiles();

}  // namespace voxserve::transport::http
