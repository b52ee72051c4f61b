#include "client/voxctl/exit_codes.h"

#include "client/client_error.h"

namespace voxserve::voxctl {

ExitCode ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return kOk;
  client::ErrorInfo info = client::ErrorInfoOf(status);
  switch (info.kind) {
    case client::ErrorKind::kInvalidOptions:
    case client::ErrorKind::kUnimplemented:
      return kUsage;
    case client::ErrorKind::kConnect:
    case client::ErrorKind::kTls:
    case client::ErrorKind::kConnectionLost:
    case client::ErrorKind::kCircuitOpen:
      return kUnreachable;
    case client::ErrorKind::kTimeout:
      return kTimeout;
    case client::ErrorKind::kStreamBroken:
    case client::ErrorKind::kProtocol:
      return kServerError;
    case client::ErrorKind::kHttp:
      break;
    case client::ErrorKind::kNone:
      return kInternal;
  }
  int http = info.http_status;
  if (http == 401 || http == 403) return kAuth;
  if (http == 429) return kBusy;
  if (http == 502 || http == 503) return kUnreachable;
  if (http == 504 || http == 408) return kTimeout;
  if (http >= 400 && http < 500) return kRejected;
  return kServerError;
}

}  // namespace voxserve::voxctl
