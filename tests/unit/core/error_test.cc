#include "core/error.h"

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace voxserve::core {
namespace {

TEST(InvalidArgument, CarriesCodeMessageParamAndMachineCode) {
  absl::Status status = InvalidArgument("speed must be a number", "speed", "invalid_type");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()), "speed must be a number");
  ErrorDetail detail = DetailOf(status);
  EXPECT_EQ(detail.reason, ErrorReason::kUnspecified);
  EXPECT_EQ(detail.param, "speed");
  EXPECT_EQ(detail.code, "invalid_type");
  EXPECT_FALSE(detail.retry_after_seconds.has_value());
}

TEST(InvalidArgument, WithoutACodeGetsTheDefaultCodeAndNoParam) {
  ErrorDetail detail = DetailOf(InvalidArgument("bad"));
  EXPECT_EQ(detail.param, "");
  EXPECT_EQ(detail.code, "invalid_request");
}

TEST(NotFound, CarriesNotFoundCodeWithParamAndMachineCode) {
  absl::Status status = NotFound("no voice 'x'", "voice", "voice_not_found");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  ErrorDetail detail = DetailOf(status);
  EXPECT_EQ(detail.reason, ErrorReason::kUnspecified);
  EXPECT_EQ(detail.param, "voice");
  EXPECT_EQ(detail.code, "voice_not_found");
}

TEST(PayloadTooLarge, IsInvalidArgumentWithPayloadTooLargeReason) {
  absl::Status status = PayloadTooLarge("input too long", "input");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  ErrorDetail detail = DetailOf(status);
  EXPECT_EQ(detail.reason, ErrorReason::kPayloadTooLarge);
  EXPECT_EQ(detail.param, "input");
  EXPECT_EQ(detail.code, "payload_too_large");
}

TEST(UnsupportedMediaType, IsInvalidArgumentWithUnsupportedMediaTypeReason) {
  absl::Status status = UnsupportedMediaType("not JSON");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  ErrorDetail detail = DetailOf(status);
  EXPECT_EQ(detail.reason, ErrorReason::kUnsupportedMediaType);
  EXPECT_EQ(detail.param, "");
  EXPECT_EQ(detail.code, "unsupported_media_type");
}

TEST(MethodNotAllowed, IsUnimplementedWithMethodNotAllowedReason) {
  absl::Status status = MethodNotAllowed("use POST");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  ErrorDetail detail = DetailOf(status);
  EXPECT_EQ(detail.reason, ErrorReason::kMethodNotAllowed);
  EXPECT_EQ(detail.code, "method_not_allowed");
}

TEST(QueueFull, IsResourceExhaustedAndCarriesRetryAfter) {
  absl::Status status = QueueFull("queue is full", 3);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  ErrorDetail detail = DetailOf(status);
  EXPECT_EQ(detail.reason, ErrorReason::kQueueFull);
  EXPECT_EQ(detail.code, "queue_full");
  EXPECT_EQ(detail.retry_after_seconds, 3);
}

TEST(QueueFull, KeepsARetryAfterOfZero) {
  EXPECT_EQ(DetailOf(QueueFull("queue is full", 0)).retry_after_seconds, 0);
}

TEST(Draining, IsUnavailableWithDrainingReason) {
  absl::Status status = Draining("shutting down");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  ErrorDetail detail = DetailOf(status);
  EXPECT_EQ(detail.reason, ErrorReason::kDraining);
  EXPECT_EQ(detail.code, "server_draining");
  EXPECT_FALSE(detail.retry_after_seconds.has_value());
}

TEST(Internal, IsInternalWithTheInternalErrorCode) {
  absl::Status status = Internal("engine crashed");
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(std::string(status.message()), "engine crashed");
  ErrorDetail detail = DetailOf(status);
  EXPECT_EQ(detail.reason, ErrorReason::kUnspecified);
  EXPECT_EQ(detail.param, "");
  EXPECT_EQ(detail.code, "internal_error");
}

TEST(OutputTooLong, IsInvalidArgumentWithItsReasonAndCode) {
  absl::Status status = OutputTooLong("too much audio");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  ErrorDetail detail = DetailOf(status);
  EXPECT_EQ(detail.reason, ErrorReason::kOutputTooLong);
  EXPECT_EQ(detail.code, "output_too_long");
}

TEST(AlreadyExists, CarriesParamAndCode) {
  absl::Status status = AlreadyExists("taken", "name", "voice_name_taken");
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(DetailOf(status).param, "name");
  EXPECT_EQ(DetailOf(status).code, "voice_name_taken");
}

TEST(DetailOf, GivesAPlainAbslStatusTheDefaultCodeOfItsStatusCode) {
  ErrorDetail detail = DetailOf(absl::DeadlineExceededError("too slow"));
  EXPECT_EQ(detail.reason, ErrorReason::kUnspecified);
  EXPECT_EQ(detail.param, "");
  EXPECT_EQ(detail.code, "timeout");
  EXPECT_FALSE(detail.retry_after_seconds.has_value());
}

TEST(DetailOf, GivesOkNoCode) {
  ErrorDetail detail = DetailOf(absl::OkStatus());
  EXPECT_EQ(detail.reason, ErrorReason::kUnspecified);
  EXPECT_EQ(detail.code, "");
  EXPECT_FALSE(detail.retry_after_seconds.has_value());
}

TEST(DefaultCode, NamesEveryErrorCode) {
  for (int code = 1; code <= static_cast<int>(absl::StatusCode::kUnauthenticated); ++code) {
    EXPECT_FALSE(DefaultCode(static_cast<absl::StatusCode>(code)).empty()) << code;
  }
  EXPECT_EQ(DefaultCode(absl::StatusCode::kAlreadyExists), "already_exists");
  EXPECT_EQ(DefaultCode(absl::StatusCode::kUnknown), "internal_error");
}

TEST(Quoted, QuotesAShortValueWhole) { EXPECT_EQ(Quoted("alloy"), "'alloy'"); }

TEST(Quoted, CutsALongValueWithAnEllipsisAndItsSize) {
  const std::string quoted = Quoted(std::string(900'000, 'x'));
  EXPECT_EQ(quoted, "'" + std::string(64, 'x') + "\xE2\x80\xA6' (900000 bytes)");
}

TEST(Quoted, NeverCutsInsideACharacter) {
  std::string voices;
  for (int i = 0; i < 10; ++i) voices += "\xE4\xBD\xA0";  // 你
  EXPECT_EQ(Quoted(voices, 3), "'\xE4\xBD\xA0\xE4\xBD\xA0\xE4\xBD\xA0\xE2\x80\xA6' (30 bytes)");
  EXPECT_EQ(Quoted(voices, 10), "'" + voices + "'");
}

TEST(Quoted, EscapesControlCharacters) { EXPECT_EQ(Quoted("a\nb\x1b"), "'a\\x0ab\\x1b'"); }

TEST(DetailOf, SurvivesCopyingTheStatus) {
  absl::Status original = NotFound("gone", "voice", "voice_not_found");
  absl::Status copy = original;
  EXPECT_EQ(DetailOf(copy).param, "voice");
}

}  // namespace
}  // namespace voxserve::core
