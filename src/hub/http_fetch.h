// The hub's HTTP, through libcurl: a small JSON GET and resumable file downloads. Redirects are
// followed (the hub sends LFS files to its CDN); the token goes to the hub's host only (libcurl
// drops a custom Authorization header on a redirect to another host). Blocking: a command-line
// tool's calls, never a server thread's.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace voxserve::hub {

struct HttpAnswer {
  long status = 0;  // 0: no HTTP answer (connection refused, cut, timed out); see `error`
  std::string body;
  std::string error;       // libcurl's words when the transfer failed
  std::string error_code;  // the hub's X-Error-Code header (RepoNotFound, RevisionNotFound, ...)
};

struct FetchOptions {
  std::string token;  // Authorization: Bearer, to the first host only
  long connect_timeout_seconds = 30;
  long stall_seconds = 60;  // a transfer below 1 byte/s for this long is cut
};

HttpAnswer GetText(const std::string& url, const FetchOptions& options);

// Appends the bytes of `url` from `offset` on to `out` (a file already holding `offset` bytes):
// with offset > 0 it asks for a Range and, if the server answers 200 instead of 206, truncates
// `out` and starts over. `progress(total_so_far)` is called as bytes arrive. The answer's
// status is the final HTTP status (206/200 on success); `written` the file's length after.
struct Download {
  HttpAnswer answer;
  uint64_t written = 0;
  bool write_failed = false;  // the file could not take the bytes (errno in `write_errno`)
  int write_errno = 0;
};
Download DownloadTo(const std::string& url, std::FILE* out, uint64_t offset,
                    const FetchOptions& options, const std::function<void(uint64_t)>& progress);

// Percent-encodes one path component or a query value (RFC 3986 unreserved kept).
std::string UrlEncode(const std::string& text, bool keep_slashes = false);

}  // namespace voxserve::hub
