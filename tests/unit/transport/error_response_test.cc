#include "transport/http/error_response.h"

#include <optional>
#include <string>

#include "core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace voxserve::transport::http {
namespace {

using nlohmann::json;

std::optional<std::string> HeaderOf(const HttpResponse& response, const std::string& name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return std::nullopt;
}

struct CodeCase {
  absl::StatusCode code;
  int http_status;
};

class HttpStatusForCode : public ::testing::TestWithParam<CodeCase> {};

TEST_P(HttpStatusForCode, MapsTheAbslCode) {
  absl::Status status = GetParam().code == absl::StatusCode::kOk
                            ? absl::OkStatus()
                            : absl::Status(GetParam().code, "message");
  EXPECT_EQ(HttpStatusFor(status), GetParam().http_status);
}

INSTANTIATE_TEST_SUITE_P(
    EveryAbslCode, HttpStatusForCode,
    ::testing::Values(
        CodeCase{absl::StatusCode::kOk, 200}, CodeCase{absl::StatusCode::kCancelled, 499},
        CodeCase{absl::StatusCode::kUnknown, 500},
        CodeCase{absl::StatusCode::kInvalidArgument, 400},
        CodeCase{absl::StatusCode::kDeadlineExceeded, 504},
        CodeCase{absl::StatusCode::kNotFound, 404}, CodeCase{absl::StatusCode::kAlreadyExists, 409},
        CodeCase{absl::StatusCode::kPermissionDenied, 403},
        CodeCase{absl::StatusCode::kResourceExhausted, 429},
        CodeCase{absl::StatusCode::kFailedPrecondition, 400},
        CodeCase{absl::StatusCode::kAborted, 500}, CodeCase{absl::StatusCode::kOutOfRange, 400},
        CodeCase{absl::StatusCode::kUnimplemented, 501}, CodeCase{absl::StatusCode::kInternal, 500},
        CodeCase{absl::StatusCode::kUnavailable, 503}, CodeCase{absl::StatusCode::kDataLoss, 500},
        CodeCase{absl::StatusCode::kUnauthenticated, 401}),
    [](const ::testing::TestParamInfo<CodeCase>& info) {
      return absl::StatusCodeToString(info.param.code);  // e.g. INVALID_ARGUMENT
    });

TEST(HttpStatusFor, PayloadTooLargeIs413) {
  EXPECT_EQ(HttpStatusFor(core::PayloadTooLarge("too long", "input")), 413);
}

TEST(HttpStatusFor, UnsupportedMediaTypeIs415) {
  EXPECT_EQ(HttpStatusFor(core::UnsupportedMediaType("not JSON")), 415);
}

TEST(HttpStatusFor, MethodNotAllowedIs405) {
  EXPECT_EQ(HttpStatusFor(core::MethodNotAllowed("use POST")), 405);
}

TEST(HttpStatusFor, QueueFullIs429) { EXPECT_EQ(HttpStatusFor(core::QueueFull("full", 2)), 429); }

TEST(HttpStatusFor, DrainingIs503) { EXPECT_EQ(HttpStatusFor(core::Draining("bye")), 503); }

TEST(HttpStatusFor, InsufficientStorageIs507) {
  // A full voice store: the request is fine, the server has no room (RFC 4918 11.5).
  EXPECT_EQ(HttpStatusFor(core::InsufficientStorage("full", "voice_limit_reached")), 507);
}

TEST(HttpStatusFor, InternalIs500) { EXPECT_EQ(HttpStatusFor(core::Internal("crash")), 500); }

TEST(HttpStatusFor, NotFoundWithDetailIs404) {
  EXPECT_EQ(HttpStatusFor(core::NotFound("no voice", "voice", "voice_not_found")), 404);
}

TEST(ErrorResponse, QueueFullCarriesRetryAfterHeader) {
  HttpResponse response = ErrorResponse(core::QueueFull("queue is full", 7));
  EXPECT_EQ(response.status, 429);
  EXPECT_EQ(HeaderOf(response, "Retry-After"), "7");
}

TEST(ErrorResponse, OtherErrorsHaveNoRetryAfterHeader) {
  EXPECT_EQ(HeaderOf(ErrorResponse(core::Draining("bye")), "Retry-After"), std::nullopt);
}

TEST(ErrorResponse, IsJson) {
  EXPECT_EQ(HeaderOf(ErrorResponse(core::Internal("crash")), "Content-Type"), "application/json");
}

TEST(ErrorResponse, BodyHasTheOpenAiShapeWithParamAndCode) {
  HttpResponse response =
      ErrorResponse(core::NotFound("voice 'x' not found", "voice", "voice_not_found"));
  EXPECT_EQ(response.status, 404);
  json body = json::parse(response.body);
  EXPECT_EQ(body, json::parse(R"({"error": {"message": "voice 'x' not found",
                                            "type": "invalid_request_error",
                                            "param": "voice",
                                            "code": "voice_not_found"}})"));
}

TEST(ErrorResponse, BodyHasNullParamWhenAbsentButAlwaysACode) {
  json error = json::parse(ErrorResponse(absl::InvalidArgumentError("bad")).body)["error"];
  ASSERT_TRUE(error.contains("param"));
  EXPECT_TRUE(error["param"].is_null());
  EXPECT_EQ(error["code"], "invalid_request");
}

TEST(ErrorResponse, EveryErrorStatusGetsANonEmptyCode) {
  for (int code = 1; code <= static_cast<int>(absl::StatusCode::kUnauthenticated); ++code) {
    absl::Status status(static_cast<absl::StatusCode>(code), "plain");
    json error = json::parse(ErrorResponse(status).body)["error"];
    ASSERT_TRUE(error["code"].is_string()) << status;
    EXPECT_FALSE(error["code"].get<std::string>().empty()) << status;
  }
  EXPECT_EQ(json::parse(ErrorResponse(absl::DeadlineExceededError("late")).body)["error"]["code"],
            "timeout");
}

TEST(ErrorResponse, OutputTooLongIs413) {
  HttpResponse response = ErrorResponse(core::OutputTooLong("too much audio"));
  EXPECT_EQ(response.status, 413);
  EXPECT_EQ(json::parse(response.body)["error"]["code"], "output_too_long");
}

TEST(ErrorResponse, ServerErrorsHaveServerErrorType) {
  json body = json::parse(ErrorResponse(core::Internal("crash")).body);
  EXPECT_EQ(body["error"]["type"], "server_error");
}

TEST(ErrorResponse, QueueFullHasRateLimitErrorType) {
  json body = json::parse(ErrorResponse(core::QueueFull("full", 1)).body);
  EXPECT_EQ(body["error"]["type"], "rate_limit_error");
  EXPECT_EQ(body["error"]["code"], "queue_full");
}

TEST(ErrorJson, StaysValidJsonWhenTheMessageHoldsInvalidUtf8) {
  std::string body = ErrorJson(absl::InvalidArgumentError("bad byte \xFF here"));
  EXPECT_TRUE(json::accept(body)) << body;
}

}  // namespace
}  // namespace voxserve::transport::http
