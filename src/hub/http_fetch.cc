#include "hub/http_fetch.h"

#include <curl/curl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <mutex>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"

namespace voxserve::hub {
namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Handle {
  Handle() : curl(curl_easy_init()) {}
  ~Handle() {
    if (headers) curl_slist_free_all(headers);
    if (curl) curl_easy_cleanup(curl);
  }
  CURL* curl;
  curl_slist* headers = nullptr;
  std::string error_code;  // X-Error-Code of the last answer
};

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* handle = static_cast<Handle*>(user);
  absl::string_view line(data, size * count);
  if (absl::StartsWithIgnoreCase(line, "HTTP/")) handle->error_code.clear();  // a new answer
  if (absl::StartsWithIgnoreCase(line, "x-error-code:")) {
    handle->error_code = std::string(absl::StripAsciiWhitespace(line.substr(13)));
  }
  return size * count;
}

void Prepare(Handle& handle, const std::string& url, const FetchOptions& options) {
  CURL* curl = handle.curl;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, options.connect_timeout_seconds);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, options.stall_seconds);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "voxserve-models-pull");
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &handle);
  if (!options.token.empty()) {
    // A custom header: libcurl sends it to the URL's host only, not after a redirect elsewhere
    // (the CDN must not see the token).
    handle.headers =
        curl_slist_append(handle.headers, ("Authorization: Bearer " + options.token).c_str());
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, handle.headers);
}

void Finish(Handle& handle, CURLcode code, HttpAnswer& answer) {
  curl_easy_getinfo(handle.curl, CURLINFO_RESPONSE_CODE, &answer.status);
  answer.error_code = handle.error_code;
  if (code != CURLE_OK) {
    answer.error = curl_easy_strerror(code);
    // An answer whose body was cut is no answer: the caller retries or resumes.
    if (answer.status / 100 == 2) answer.status = 0;
  }
}

size_t AppendToString(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  if (body->size() + size * count > (64u << 20)) return 0;  // a listing is never this large
  body->append(data, size * count);
  return size * count;
}

struct Sink {
  std::FILE* out;
  uint64_t written;
  Handle* handle;
  // Decided at the final answer's first bytes: a 2xx body goes to the file, an error page is
  // counted and dropped.
  std::optional<bool> keep;
  bool write_failed = false;
  int write_errno = 0;
  const std::function<void(uint64_t)>* progress;
};

size_t AppendToFile(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  if (!sink->keep) {
    long status = 0;
    curl_easy_getinfo(sink->handle->curl, CURLINFO_RESPONSE_CODE, &status);
    sink->keep = status / 100 == 2;
    if (status == 200 && sink->written > 0) {
      // The server ignored the Range: its bytes start at 0.
      if (std::fflush(sink->out) != 0 || ftruncate(fileno(sink->out), 0) != 0 ||
          std::fseek(sink->out, 0, SEEK_SET) != 0) {
        sink->write_failed = true;
        sink->write_errno = errno;
        return 0;
      }
      sink->written = 0;
    }
  }
  if (!*sink->keep) return size * count;
  if (std::fwrite(data, 1, size * count, sink->out) != size * count) {
    sink->write_failed = true;
    sink->write_errno = errno;
    return 0;
  }
  sink->written += size * count;
  if (*sink->progress) (*sink->progress)(sink->written);
  return size * count;
}

}  // namespace

HttpAnswer GetText(const std::string& url, const FetchOptions& options) {
  GlobalInit();
  Handle handle;
  HttpAnswer answer;
  if (!handle.curl) return {0, "", "libcurl could not start"};
  Prepare(handle, url, options);
  curl_easy_setopt(handle.curl, CURLOPT_WRITEFUNCTION, AppendToString);
  curl_easy_setopt(handle.curl, CURLOPT_WRITEDATA, &answer.body);
  Finish(handle, curl_easy_perform(handle.curl), answer);
  return answer;
}

Download DownloadTo(const std::string& url, std::FILE* out, uint64_t offset,
                    const FetchOptions& options, const std::function<void(uint64_t)>& progress) {
  GlobalInit();
  Download download;
  Handle handle;
  if (!handle.curl) {
    download.answer.error = "libcurl could not start";
    return download;
  }
  Prepare(handle, url, options);
  if (offset > 0) {
    const std::string range = absl::StrFormat("%d-", offset);
    curl_easy_setopt(handle.curl, CURLOPT_RANGE, range.c_str());
  }
  Sink sink{out, offset, &handle, std::nullopt, false, 0, &progress};
  curl_easy_setopt(handle.curl, CURLOPT_WRITEFUNCTION, AppendToFile);
  curl_easy_setopt(handle.curl, CURLOPT_WRITEDATA, &sink);
  Finish(handle, curl_easy_perform(handle.curl), download.answer);
  if (std::fflush(out) != 0 && !sink.write_failed) {
    sink.write_failed = true;
    sink.write_errno = errno;
  }
  download.written = sink.written;
  download.write_failed = sink.write_failed;
  download.write_errno = sink.write_errno;
  return download;
}

std::string UrlEncode(const std::string& text, bool keep_slashes) {
  std::string out;
  for (unsigned char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slashes && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out += absl::StrFormat("%%%02X", c);
    }
  }
  return out;
}

}  // namespace voxserve::hub
