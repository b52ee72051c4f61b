#include "core/request_id.h"

#include <gtest/gtest.h>

#include <string>

namespace voxserve::core {
namespace {

bool IsNewId(const std::string& id) {
  return id.size() == 16 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST(RequestId, NewIdsAreSixteenHexDigitsAndDiffer) {
  std::string first = NewRequestId();
  EXPECT_TRUE(IsNewId(first)) << first;
  EXPECT_NE(first, NewRequestId());
}

TEST(RequestId, KeepsAShortPrintableClientId) {
  EXPECT_EQ(RequestIdOrNew("trace-42 abc"), "trace-42 abc");
  EXPECT_EQ(RequestIdOrNew(std::string(128, 'x')), std::string(128, 'x'));
}

TEST(RequestId, ReplacesAnAbsentOverlongOrUnprintableId) {
  EXPECT_TRUE(IsNewId(RequestIdOrNew("")));
  EXPECT_TRUE(IsNewId(RequestIdOrNew(std::string(129, 'x'))));
  EXPECT_TRUE(IsNewId(RequestIdOrNew("bad\nid")));
  EXPECT_TRUE(IsNewId(RequestIdOrNew("caf\xc3\xa9")));
}

}  // namespace
}  // namespace voxserve::core
