// The one expat set-up behind SSML and PLS (text/xml_reader.h): the DTD ban, positions in
// errors, and a handler's Fail ending the parse.
#include "text/xml_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"

namespace voxserve::text {
namespace {

using ::testing::HasSubstr;

struct Recorder : XmlHandler {
  XmlReader* reader = nullptr;
  std::vector<std::string> events;
  std::string fail_at;  // an element whose start fails the parse
  void OnStart(std::string_view name, const char** attributes) override {
    events.push_back("<" + std::string(name) +
                     " id=" + std::string(XmlReader::Attribute(attributes, "id").value_or("-")));
    if (name == fail_at) reader->Fail("no " + fail_at + " here");
  }
  void OnEnd(std::string_view name) override { events.push_back("</" + std::string(name)); }
  void OnText(std::string_view text) override { events.push_back(std::string(text)); }
};

absl::Status Read(std::string_view document, Recorder& recorder) {
  XmlReader reader("TEST", [](const std::string& message, XmlPosition at) {
    return core::InvalidArgument(message + " @" + std::to_string(at.line) + ":" +
                                 std::to_string(at.column));
  });
  recorder.reader = &reader;
  return reader.Read(document, recorder);
}

TEST(XmlReader, DeliversElementsAttributesAndText) {
  Recorder recorder;
  ASSERT_TRUE(Read(R"(<a id="1">hi<b/></a>)", recorder).ok());
  EXPECT_EQ(recorder.events, (std::vector<std::string>{"<a id=1", "hi", "<b id=-", "</b", "</a"}));
}

TEST(XmlReader, NoDtdSoNoEntityCanExpand) {
  Recorder recorder;
  const absl::Status laughs = Read(
      "<?xml version=\"1.0\"?>\n<!DOCTYPE a [<!ENTITY l \"lol\"><!ENTITY m \"&l;&l;&l;\">]>\n"
      "<a>&m;</a>",
      recorder);
  EXPECT_THAT(laughs.message(), HasSubstr("a DOCTYPE is not allowed in TEST"));
  EXPECT_THAT(laughs.message(), HasSubstr("@2:"));
  EXPECT_TRUE(recorder.events.empty());
  Recorder external;
  EXPECT_FALSE(Read("<!DOCTYPE a SYSTEM \"file:///etc/passwd\"><a/>", external).ok());
  EXPECT_TRUE(external.events.empty());
}

TEST(XmlReader, AMalformedDocumentNamesItsKindAndPosition) {
  Recorder recorder;
  const absl::Status status = Read("<a>\n  <b></a>", recorder);
  EXPECT_THAT(status.message(), HasSubstr("TEST is not well-formed: mismatched tag @2:"));
}

TEST(XmlReader, AHandlersFailEndsTheParseAndTheFirstFailureCounts) {
  Recorder recorder;
  recorder.fail_at = "b";
  const absl::Status status = Read("<a><b>text</b><c/></a>", recorder);
  EXPECT_THAT(status.message(), HasSubstr("no b here @1:4"));
  EXPECT_EQ(recorder.events, (std::vector<std::string>{"<a id=-", "<b id=-"}));
}

}  // namespace
}  // namespace voxserve::text
