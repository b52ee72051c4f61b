// The multipart/form-data reader against forms as real clients write them and as they break.
#include "transport/http/multipart_form.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace voxserve::transport::http {
namespace {

using namespace std::string_view_literals;

// Byte for byte what Python's requests 2.28 (urllib3 1.26) sends for
// requests.post(url, data={"name": "Alice", "model": "cosy"},
//               files={"audio_sample": ("a.wav", b"RIFF\r\n--x\r\nWAVE", "audio/wav")})
// with its random boundary replaced.
constexpr std::string_view kRequestsType =
    "multipart/form-data; boundary=8b5a1cd1b3a54e5c9a0ebd1f2c3d4e5f";
constexpr std::string_view kRequestsBody =
    "--8b5a1cd1b3a54e5c9a0ebd1f2c3d4e5f\r\n"
    "Content-Disposition: form-data; name=\"name\"\r\n\r\n"
    "Alice\r\n"
    "--8b5a1cd1b3a54e5c9a0ebd1f2c3d4e5f\r\n"
    "Content-Disposition: form-data; name=\"model\"\r\n\r\n"
    "cosy\r\n"
    "--8b5a1cd1b3a54e5c9a0ebd1f2c3d4e5f\r\n"
    "Content-Disposition: form-data; name=\"audio_sample\"; filename=\"a.wav\"\r\n"
    "Content-Type: audio/wav\r\n\r\n"
    "RIFF\r\n--x\r\nWAVE\r\n"
    "--8b5a1cd1b3a54e5c9a0ebd1f2c3d4e5f--\r\n";

// What curl 7.88 sends for -F name=Bob -F "audio_sample=@b.flac;type=audio/flac".
constexpr std::string_view kCurlType =
    "multipart/form-data; boundary=------------------------d74496d66958873e";
constexpr std::string_view kCurlBody =
    "--------------------------d74496d66958873e\r\n"
    "Content-Disposition: form-data; name=\"name\"\r\n\r\n"
    "Bob\r\n"
    "--------------------------d74496d66958873e\r\n"
    "Content-Disposition: form-data; name=\"audio_sample\"; filename=\"b.flac\"\r\n"
    "Content-Type: audio/flac\r\n\r\n"
    "fLaC\0\x01\x02"
    "\r\n--------------------------d74496d66958873e--\r\n"sv;

TEST(MultipartForm, ReadsAFormFromPythonRequests) {
  auto parts = ParseMultipartForm(kRequestsType, kRequestsBody);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 3u);
  EXPECT_EQ((*parts)[0].name, "name");
  EXPECT_EQ((*parts)[0].body, "Alice");
  EXPECT_FALSE((*parts)[0].filename);
  EXPECT_EQ((*parts)[1].body, "cosy");
  EXPECT_EQ((*parts)[2].name, "audio_sample");
  EXPECT_EQ((*parts)[2].filename, "a.wav");
  EXPECT_EQ((*parts)[2].content_type, "audio/wav");
  // CRLF and "--" inside the file are data, not delimiters (the boundary does not follow).
  EXPECT_EQ((*parts)[2].body, "RIFF\r\n--x\r\nWAVE");
}

TEST(MultipartForm, ReadsAFormFromCurlWithBinaryContent) {
  std::string body(kCurlBody.data(), kCurlBody.size());
  auto parts = ParseMultipartForm(kCurlType, body);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[1].body, std::string_view("fLaC\0\x01\x02", 7));
  EXPECT_EQ((*parts)[1].content_type, "audio/flac");
}

TEST(MultipartForm, AcceptsQuotedBoundariesPreambleEpilogueAndOddCase) {
  auto parts = ParseMultipartForm("Multipart/Form-Data; charset=utf-8; BOUNDARY=\"a b:c\"",
                                  "preamble to ignore\r\n--a b:c  \r\n"
                                  "content-disposition: FORM-DATA; name=transcript\r\n\r\n"
                                  "hello \"world\"\r\n--a b:c--epilogue to ignore");
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0].name, "transcript");
  EXPECT_EQ((*parts)[0].body, "hello \"world\"");
}

TEST(MultipartForm, ReadsEscapedAndExtendedFilenamesAndEmptyValues) {
  auto parts = ParseMultipartForm(
      "multipart/form-data; boundary=XyZ",
      "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"my \\\"take\\\".wav\"\r\n"
      "\r\n\r\n--XyZ\r\nContent-Disposition: form-data; name=\"g\"; "
      "filename*=UTF-8''%C3%A9t%C3%A9.wav\r\n\r\nx\r\n--XyZ--");
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].filename, "my \"take\".wav");
  EXPECT_EQ((*parts)[0].body, "");
  EXPECT_EQ((*parts)[1].filename, "\xc3\xa9t\xc3\xa9.wav");
}

TEST(MultipartForm, TheContentTypeMustBeAFormWithAValidBoundary) {
  auto json = ParseMultipartForm("application/json", "{}");
  EXPECT_EQ(core::DetailOf(json.status()).reason, core::ErrorReason::kUnsupportedMediaType);
  EXPECT_EQ(ParseMultipartForm("", "").status().code(), absl::StatusCode::kInvalidArgument);
  for (std::string_view type :
       {"multipart/form-data", "multipart/form-data; boundary=",
        "multipart/form-data; boundary=\"\"", "multipart/form-data; boundary=\"trailing \"",
        "multipart/form-data; boundary=\"unterminated", "multipart/form-data; boundary=a{b}",
        "multipart/form-data; boundary"}) {
    auto parsed = ParseMultipartForm(type, "--a\r\n");
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << type;
  }
  EXPECT_TRUE(MultipartBoundary("multipart/form-data; boundary=" + std::string(70, 'b')).ok());
  EXPECT_FALSE(MultipartBoundary("multipart/form-data; boundary=" + std::string(71, 'b')).ok());
}

TEST(MultipartForm, RefusesTruncatedAndMalformedBodies) {
  const std::string type = "multipart/form-data; boundary=B";
  const std::string part = "Content-Disposition: form-data; name=\"a\"\r\n\r\nvalue";
  struct Case {
    std::string what, body, message;
  };
  std::vector<Case> cases = {
      {"empty", "", "no opening boundary"},
      {"no boundary at all", "just text", "no opening boundary"},
      {"cut inside a part", "--B\r\n" + part, "no closing boundary"},
      {"cut after a boundary", "--B\r\n" + part + "\r\n--B", "truncated"},
      {"cut inside headers", "--B\r\nContent-Disposition: form-data; na", "truncated"},
      {"LF line ends", "--B\nContent-Disposition: form-data; name=a\n\nv\n--B--", "CRLF"},
      {"junk after a boundary", "--B junk\r\n" + part + "\r\n--B--", "CRLF"},
      {"no disposition", "--B\r\nContent-Type: text/plain\r\n\r\nv\r\n--B--",
       "no Content-Disposition"},
      {"no headers", "--B\r\n\r\nv\r\n--B--", "no Content-Disposition"},
      {"not form-data", "--B\r\nContent-Disposition: attachment; name=a\r\n\r\nv\r\n--B--",
       "not form-data"},
      {"no name", "--B\r\nContent-Disposition: form-data; filename=a\r\n\r\nv\r\n--B--",
       "no field name"},
      {"header without colon", "--B\r\nContent-Disposition form-data\r\n\r\nv\r\n--B--", "no name"},
      {"folded header", "--B\r\nContent-Disposition: form-data;\r\n name=a\r\n\r\nv\r\n--B--",
       "folded"},
      {"two dispositions",
       "--B\r\nContent-Disposition: form-data; name=a\r\nContent-Disposition: form-data; "
       "name=b\r\n\r\nv\r\n--B--",
       "two Content-Disposition"},
      {"bad parameter", "--B\r\nContent-Disposition: form-data; name\r\n\r\nv\r\n--B--",
       "name=value"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseMultipartForm(type, c.body);
    ASSERT_FALSE(parsed.ok()) << c.what;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_EQ(core::DetailOf(parsed.status()).code, "invalid_multipart") << c.what;
    EXPECT_NE(parsed.status().message().find(c.message), std::string::npos)
        << c.what << ": " << parsed.status().message();
  }
}

TEST(MultipartForm, EnforcesThePartAndHeaderLimits) {
  const std::string type = "multipart/form-data; boundary=B";
  std::string body;
  for (int i = 0; i < 5; ++i) {
    body +=
        "--B\r\nContent-Disposition: form-data; name=\"f" + std::to_string(i) + "\"\r\n\r\nv\r\n";
  }
  body += "--B--";
  MultipartLimits limits;
  limits.max_parts = 5;
  EXPECT_TRUE(ParseMultipartForm(type, body, limits).ok());
  limits.max_parts = 4;
  EXPECT_NE(ParseMultipartForm(type, body, limits).status().message().find("more than 4 parts"),
            std::string::npos);
  limits = {};
  limits.max_part_header_bytes = 64;
  std::string long_header = "--B\r\nContent-Disposition: form-data; name=\"" +
                            std::string(100, 'n') + "\"\r\n\r\nv\r\n--B--";
  EXPECT_NE(ParseMultipartForm(type, long_header, limits).status().message().find("exceed 64"),
            std::string::npos);
}

}  // namespace
}  // namespace voxserve::transport::http
