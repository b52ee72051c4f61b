#include "text/xml_reader.h"

#include <expat.h>

#include <memory>

#include "core/error.h"

namespace voxserve::text {

struct XmlReader::Callbacks {
  static XmlReader& Of(void* self) { return *static_cast<XmlReader*>(self); }
  static void XMLCALL Start(void* self, const XML_Char* name, const XML_Char** attributes) {
    XmlReader& reader = Of(self);
    if (!reader.failed()) reader.handler_->OnStart(name, attributes);
  }
  static void XMLCALL End(void* self, const XML_Char* name) {
    XmlReader& reader = Of(self);
    if (!reader.failed()) reader.handler_->OnEnd(name);
  }
  static void XMLCALL Text(void* self, const XML_Char* text, int length) {
    XmlReader& reader = Of(self);
    if (!reader.failed()) {
      reader.handler_->OnText(std::string_view(text, static_cast<size_t>(length)));
    }
  }
  static void XMLCALL Doctype(void* self, const XML_Char*, const XML_Char*, const XML_Char*, int) {
    XmlReader& reader = Of(self);
    reader.Fail("a DOCTYPE is not allowed in " + reader.kind_ + " (entities are refused)");
  }
  static void XMLCALL EntityDecl(void* self, const XML_Char*, int, const XML_Char*, int,
                                 const XML_Char*, const XML_Char*, const XML_Char*,
                                 const XML_Char*) {
    XmlReader& reader = Of(self);
    reader.Fail("entity declarations are not allowed in " + reader.kind_);
  }
};

XmlReader::XmlReader(std::string kind, ErrorAt error_at)
    : kind_(std::move(kind)), error_at_(std::move(error_at)) {}

XmlReader::~XmlReader() = default;

absl::Status XmlReader::Read(std::string_view document, XmlHandler& handler) {
  if (document.size() > static_cast<size_t>(INT32_MAX)) {
    return core::PayloadTooLarge(kind_ + " document too large");
  }
  std::unique_ptr<XML_ParserStruct, decltype(&XML_ParserFree)> parser(XML_ParserCreate("UTF-8"),
                                                                      &XML_ParserFree);
  if (!parser) return core::Internal("cannot create an XML parser");
  parser_ = parser.get();
  handler_ = &handler;
  error_ = absl::OkStatus();
  XML_SetUserData(parser.get(), this);
  XML_SetElementHandler(parser.get(), &Callbacks::Start, &Callbacks::End);
  XML_SetCharacterDataHandler(parser.get(), &Callbacks::Text);
  XML_SetStartDoctypeDeclHandler(parser.get(), &Callbacks::Doctype);
  XML_SetEntityDeclHandler(parser.get(), &Callbacks::EntityDecl);
  XML_SetParamEntityParsing(parser.get(), XML_PARAM_ENTITY_PARSING_NEVER);
  const XML_Status status =
      XML_Parse(parser.get(), document.data(), static_cast<int>(document.size()), XML_TRUE);
  if (error_.ok() && status != XML_STATUS_OK) {
    error_ =
        error_at_(kind_ + " is not well-formed: " + XML_ErrorString(XML_GetErrorCode(parser.get())),
                  Position());
  }
  parser_ = nullptr;
  handler_ = nullptr;
  return error_;
}

void XmlReader::Fail(const std::string& message) {
  if (parser_ == nullptr) return;
  if (error_.ok()) error_ = error_at_(message, Position());
  XML_StopParser(static_cast<XML_Parser>(parser_), XML_FALSE);
}

XmlPosition XmlReader::Position() const {
  auto* parser = static_cast<XML_Parser>(parser_);
  return {static_cast<uint64_t>(XML_GetCurrentLineNumber(parser)),
          static_cast<uint64_t>(XML_GetCurrentColumnNumber(parser)) + 1};
}

std::optional<std::string_view> XmlReader::Attribute(const char** attributes,
                                                     std::string_view name) {
  for (const char** a = attributes; a != nullptr && a[0] != nullptr; a += 2) {
    if (name == a[0]) return std::string_view(a[1]);
  }
  return std::nullopt;
}

}  // namespace voxserve::text
