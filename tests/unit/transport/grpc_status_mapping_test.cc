#include <map>

#include "core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "transport/grpc/grpc_metrics.h"
#include "transport/grpc/status_mapping.h"

namespace voxserve::transport::grpc {
namespace {

using ::testing::Contains;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

std::map<std::string, std::string> Trailers(const GrpcError& error) {
  return {error.trailers.begin(), error.trailers.end()};
}

TEST(GrpcStatusMapping, QueueFullIsResourceExhaustedWithRetryAfterInMilliseconds) {
  GrpcError error = ToGrpcError(core::QueueFull("queue is full", 2));
  EXPECT_EQ(error.status.error_code(), ::grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(error.status.error_message(), "queue is full");
  EXPECT_THAT(Trailers(error), UnorderedElementsAre(Pair("retry-after-ms", "2000"),
                                                    Pair("voxserve-error-code", "queue_full")));
}

TEST(GrpcStatusMapping, AFullVoiceStoreIsResourceExhaustedWithoutARetryHint) {
  GrpcError error = ToGrpcError(core::InsufficientStorage("store full", "voice_limit_reached"));
  EXPECT_EQ(error.status.error_code(), ::grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(Trailers(error),
              UnorderedElementsAre(Pair("voxserve-error-code", "voice_limit_reached")));
}

TEST(GrpcStatusMapping, DrainingIsUnavailable) {
  GrpcError error = ToGrpcError(core::Draining("shutting down"));
  EXPECT_EQ(error.status.error_code(), ::grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(Trailers(error),
              UnorderedElementsAre(Pair("voxserve-error-code", "server_draining")));
}

TEST(GrpcStatusMapping, NotFoundNamesTheField) {
  GrpcError error = ToGrpcError(core::NotFound("no such voice", "voice", "voice_not_found"));
  EXPECT_EQ(error.status.error_code(), ::grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(Trailers(error), UnorderedElementsAre(Pair("voxserve-error-code", "voice_not_found"),
                                                    Pair("voxserve-error-param", "voice")));
}

TEST(GrpcStatusMapping, OverLongInputIsInvalidArgumentNotAResourceProblem) {
  EXPECT_EQ(GrpcCodeFor(core::PayloadTooLarge("too long", "text")),
            ::grpc::StatusCode::INVALID_ARGUMENT);
}

TEST(GrpcStatusMapping, OutputTooLongIsInvalidArgumentWithItsCode) {
  GrpcError error = ToGrpcError(core::OutputTooLong("too much audio"));
  EXPECT_EQ(error.status.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(Trailers(error), Contains(Pair("voxserve-error-code", "output_too_long")));
}

TEST(GrpcStatusMapping, AnErrorWithoutACodeStillCarriesOne) {
  GrpcError error = ToGrpcError(absl::DeadlineExceededError("late"));
  EXPECT_THAT(Trailers(error), Contains(Pair("voxserve-error-code", "timeout")));
}

TEST(GrpcStatusMapping, PlainCodesKeepTheirMeaning) {
  EXPECT_EQ(GrpcCodeFor(absl::OkStatus()), ::grpc::StatusCode::OK);
  EXPECT_EQ(GrpcCodeFor(core::InvalidArgument("bad")), ::grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(GrpcCodeFor(absl::DeadlineExceededError("late")),
            ::grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(GrpcCodeFor(absl::CancelledError("gone")), ::grpc::StatusCode::CANCELLED);
  EXPECT_EQ(GrpcCodeFor(absl::UnauthenticatedError("who?")), ::grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(GrpcCodeFor(absl::UnavailableError("loading")), ::grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(GrpcCodeFor(core::Internal("bug")), ::grpc::StatusCode::INTERNAL);
}

TEST(GrpcStatusMapping, OkHasNoTrailers) {
  GrpcError error = ToGrpcError(absl::OkStatus());
  EXPECT_TRUE(error.status.ok());
  EXPECT_TRUE(error.trailers.empty());
}

TEST(GrpcMetrics, CodeLabelsAreLowerCaseNames) {
  EXPECT_EQ(StatusCodeLabel(::grpc::StatusCode::OK), "ok");
  EXPECT_EQ(StatusCodeLabel(::grpc::StatusCode::RESOURCE_EXHAUSTED), "resource_exhausted");
  EXPECT_EQ(StatusCodeLabel(::grpc::StatusCode::DEADLINE_EXCEEDED), "deadline_exceeded");
}

}  // namespace
}  // namespace voxserve::transport::grpc
