#include "transport/wyoming/wyoming_frame.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace voxserve::transport::wyoming {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// As the reference writes an event (wyoming/event.py async_write_event), keys in its order.
std::string ReferenceFrame(const std::string& type, const json& data, const std::string& payload) {
  nlohmann::ordered_json header = {{"type", type}, {"version", "1.9.0"}};
  std::string body;
  if (!data.empty()) {
    body = data.dump();
    header["data_length"] = body.size();
  }
  if (!payload.empty()) header["payload_length"] = payload.size();
  return header.dump() + "\n" + body + payload;
}

Event TakeOne(FrameParser& parser) {
  auto next = parser.Next();
  EXPECT_TRUE(next.ok()) << next.status();
  EXPECT_TRUE(next.ok() && next->has_value());
  return next.ok() && next->has_value() ? **std::move(next) : Event{};
}

absl::Status ErrorOf(const std::string& bytes, FrameLimits limits = {}) {
  FrameParser parser(limits);
  parser.Append(bytes);
  auto next = parser.Next();
  return next.ok() ? absl::OkStatus() : next.status();
}

TEST(WyomingFrameTest, ReadsDataAndPayloadAfterTheHeaderLine) {
  FrameParser parser;
  parser.Append(ReferenceFrame("audio-chunk", {{"rate", 22050}, {"width", 2}}, "\x01\x02\x03\x04"));
  Event event = TakeOne(parser);
  EXPECT_EQ(event.type, "audio-chunk");
  EXPECT_EQ(event.data, json({{"rate", 22050}, {"width", 2}}));
  EXPECT_EQ(event.payload, "\x01\x02\x03\x04");
  EXPECT_EQ(parser.buffered(), 0u);
}

TEST(WyomingFrameTest, AnEventCutAnywhereIsReadOnceComplete) {
  const std::string stream = ReferenceFrame("synthesize", {{"text", "Hello. 你好。"}}, "") +
                             ReferenceFrame("describe", json::object(), "");
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    FrameParser parser;
    parser.Append(stream.substr(0, cut));
    std::vector<std::string> types;
    while (true) {
      auto next = parser.Next();
      ASSERT_TRUE(next.ok()) << cut;
      if (!*next) break;
      types.push_back((*next)->type);
    }
    parser.Append(stream.substr(cut));
    while (true) {
      auto next = parser.Next();
      ASSERT_TRUE(next.ok()) << cut;
      if (!*next) break;
      types.push_back((*next)->type);
    }
    EXPECT_EQ(types, (std::vector<std::string>{"synthesize", "describe"})) << cut;
  }
}

TEST(WyomingFrameTest, DataInTheHeaderIsMergedWithTheDataBytesWhichWin) {
  FrameParser parser;
  const std::string body = R"({"text": "from the bytes"})";
  parser.Append(R"({"type": "synthesize", "data": {"text": "inline", "voice": {"name": "x"}}, )"
                R"("data_length": )" +
                std::to_string(body.size()) + "}\n" + body);
  Event event = TakeOne(parser);
  EXPECT_EQ(event.data["text"], "from the bytes");
  EXPECT_EQ(event.data["voice"]["name"], "x");
}

TEST(WyomingFrameTest, NullLengthsAndDataMeanNone) {
  FrameParser parser;
  parser.Append(R"({"type": "describe", "data": null, "data_length": null, "payload_length": 0})"
                "\n");
  Event event = TakeOne(parser);
  EXPECT_EQ(event.type, "describe");
  EXPECT_TRUE(event.data.is_object() && event.data.empty());
}

TEST(WyomingFrameTest, MalformedFramesAreErrorsThatStay) {
  EXPECT_THAT(ErrorOf("{not json\n").message(), HasSubstr("not JSON"));
  EXPECT_THAT(ErrorOf("[1, 2]\n").message(), HasSubstr("not a JSON object"));
  EXPECT_THAT(ErrorOf("{\"data\": {}}\n").message(), HasSubstr("\"type\""));
  EXPECT_THAT(ErrorOf("{\"type\": 5}\n").message(), HasSubstr("\"type\""));
  EXPECT_THAT(ErrorOf("{\"type\": \"x\", \"data\": [1]}\n").message(), HasSubstr("\"data\""));
  EXPECT_THAT(ErrorOf("{\"type\": \"x\", \"data_length\": -1}\n").message(),
              HasSubstr("non-negative integer"));
  EXPECT_THAT(ErrorOf("{\"type\": \"x\", \"data_length\": 1.5}\n").message(),
              HasSubstr("non-negative integer"));
  EXPECT_THAT(ErrorOf("{\"type\": \"x\", \"data_length\": 2}\n[]").message(),
              HasSubstr("data is not a JSON object"));
  FrameParser parser;
  parser.Append("{oops\n");
  EXPECT_FALSE(parser.Next().ok());
  parser.Append(ReferenceFrame("describe", json::object(), ""));
  EXPECT_FALSE(parser.Next().ok()) << "a stream cannot be resynchronized";
}

TEST(WyomingFrameTest, LengthsPastTheLimitsAreRefusedBeforeAnyByteIsWaitedFor) {
  FrameLimits limits;
  limits.max_data_bytes = 100;
  limits.max_payload_bytes = 10;
  EXPECT_THAT(ErrorOf("{\"type\": \"x\", \"data_length\": 101}\n", limits).message(),
              HasSubstr("data_length 101 is over the limit of 100"));
  EXPECT_THAT(ErrorOf("{\"type\": \"x\", \"payload_length\": 11}\n", limits).message(),
              HasSubstr("payload_length 11 is over the limit of 10"));
  EXPECT_THAT(
      ErrorOf("{\"type\": \"x\", \"data_length\": 99999999999999999999999}\n", limits).message(),
      HasSubstr("non-negative integer"));
  EXPECT_TRUE(ErrorOf("{\"type\": \"x\", \"data_length\": 100}\n", limits).ok());
}

TEST(WyomingFrameTest, AHeaderLinePastTheBoundIsRefusedWithoutItsEnd) {
  FrameLimits limits;
  limits.max_header_bytes = 64;
  FrameParser parser(limits);
  parser.Append(std::string(63, ' '));
  auto waiting = parser.Next();
  ASSERT_TRUE(waiting.ok());
  EXPECT_FALSE(waiting->has_value());
  parser.Append(" ");
  auto refused = parser.Next();
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("longer than 64 bytes"));
  EXPECT_EQ(parser.buffered(), 0u) << "nothing of a refused stream is kept";
  // A line of exactly the bound, its newline included, is fine.
  const std::string line = "{\"type\": \"describe\"}";
  FrameParser exact(FrameLimits{line.size() + 1, 10, 10});
  exact.Append(line + "\n");
  EXPECT_EQ(TakeOne(exact).type, "describe");
}

TEST(WyomingFrameTest, EncodedEventsAreWhatTheReferenceWrites) {
  const json data = {{"text", "Grüße"}};
  EXPECT_EQ(EncodeEvent("synthesize", data), ReferenceFrame("synthesize", data, ""));
  EXPECT_EQ(EncodeEvent("audio-chunk", {{"rate", 16000}}, "ab"),
            ReferenceFrame("audio-chunk", {{"rate", 16000}}, "ab"));
  // No data: no data_length, as the reference leaves it out.
  EXPECT_EQ(EncodeEvent("synthesize-stopped"),
            "{\"type\":\"synthesize-stopped\",\"version\":\"1.9.0\"}\n");
  // Not UTF-8: replaced, never thrown.
  FrameParser parser;
  parser.Append(EncodeEvent("error", {{"text", std::string("bad \xff byte")}}));
  EXPECT_EQ(TakeOne(parser).data["text"], "bad \xEF\xBF\xBD byte");
}

}  // namespace
}  // namespace voxserve::transport::wyoming
