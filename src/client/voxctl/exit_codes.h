// voxctl's exit codes: what a shell script can rely on (docs/clients.md "voxctl" lists them).
#pragma once

#include "absl/status/status.h"

namespace voxserve::voxctl {

enum ExitCode : int {
  kOk = 0,
  kInternal = 1,     // a bug or an unexpected answer
  kUsage = 2,        // bad flags, no text, invalid options
  kUnreachable = 3,  // could not connect (or TLS failed), 502/503, not ready, breaker open
  kRejected = 4,     // the server refused the request (4xx: bad voice, too long, ...)
  kAuth = 5,         // 401/403: missing or wrong API key, not allowed
  kBusy = 6,         // 429 after the retries
  kTimeout = 7,      // a timeout (connect, attempt or total) or 504
  kServerError = 8,  // 500, a broken stream, a malformed answer
  kLocalIo = 9,      // cannot read the input or write the output
};

// The exit code for a failed Client call.
ExitCode ExitCodeFor(const absl::Status& status);

}  // namespace voxserve::voxctl
