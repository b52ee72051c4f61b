// Expat set up once for the XML voxserve reads from clients (SSML documents, PLS lexicons): UTF-8,
// and no DTD at all. A DOCTYPE or an entity declaration stops the parse, so entities can only be
// the five predefined ones and character references: neither an entity expansion bomb nor an
// external entity can happen, whichever format is read. Errors carry the position in the
// document.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace voxserve::text {

struct XmlPosition {
  uint64_t line = 0;    // 1-based
  uint64_t column = 0;  // 1-based, in bytes
};

// What a format's parser does with the document's events. `attributes` is expat's layout:
// name, value, name, value, ..., nullptr.
class XmlHandler {
 public:
  virtual ~XmlHandler() = default;
  virtual void OnStart(std::string_view name, const char** attributes) = 0;
  virtual void OnEnd(std::string_view name) = 0;
  virtual void OnText(std::string_view text) = 0;
};

// One document at a time; not safe cross thread.
class XmlReader {
 public:
  // Turns a message and where it happened into the format's error (its field and code).
  using ErrorAt = std::function<absl::Status(const std::string& message, XmlPosition at)>;

  // `kind` names the format in messages ("SSML", "PLS").
  XmlReader(std::string kind, ErrorAt error_at);
  ~XmlReader();
  XmlReader(const XmlReader&) = delete;
  XmlReader& operator=(const XmlReader&) = delete;

  // Parses the whole document into `handler`. The first failure is returned: one the handler
  // reported with Fail, the DTD ban, or expat's own ("<kind> is not well-formed: ...").
  absl::Status Read(std::string_view document, XmlHandler& handler);

  // From a handler: ends the parse with `message` at the current position (the first one
  // counts). Later events are not delivered.
  void Fail(const std::string& message);
  bool failed() const { return !error_.ok(); }

  // An attribute's value by name, from OnStart's `attributes`.
  static std::optional<std::string_view> Attribute(const char** attributes, std::string_view name);

 private:
  struct Callbacks;  // expat's C callbacks
  XmlPosition Position() const;

  const std::string kind_;
  const ErrorAt error_at_;
  void* parser_ = nullptr;  // XML_Parser while Read runs
  XmlHandler* handler_ = nullptr;
  absl::Status error_;
};

}  // namespace voxserve::text
