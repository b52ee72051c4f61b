// Incremental text → whole sentences: what the gRPC bidirectional call and the WebSocket receive
// from a client that sends text as an LLM writes it. A sentence is handed out as soon as it is
// certain to be complete, so its audio can start before the client has sent the next one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "text/sentence_splitter.h"

namespace voxserve::text {

// One per stream; not thread-safe (the stream serializes its calls). The splitter is borrowed
// and must outlive the accumulator.
//
// When is a boundary final? ICU decides a sentence break by looking ahead past spaces, quotes and
// digits to the first letter ("e.g. apples" joins, "Hello. World" splits), and the abbreviation
// filter keeps "Mr. Smith" whole. So a boundary counts only once a letter (any script) follows
// it; the text after the last such boundary waits for more text or a flush. The result is the
// same however the text was cut into pieces, down to single bytes inside a UTF-8 sequence.
class TextAccumulator {
 public:
  // `max_pending_chars` (> 0) bounds the text held back and every sentence handed out: longer
  // text is cut at the last clause mark or space within the limit (as SentenceSplitter::Split
  // cuts long sentences), so a client that never ends a sentence still gets its audio.
  TextAccumulator(const SentenceSplitter& splitter, std::size_t max_pending_chars);

  // Appends a piece of UTF-8 (a multi-byte sequence may continue in the next piece) and returns
  // the sentences now complete, trimmed, in order. InvalidArgument (param "text") for bytes
  // that can never become UTF-8; the piece is then ignored and the accumulator unchanged.
  absl::StatusOr<std::vector<std::string>> Append(std::string_view piece);

  // Everything pending as sentences, the unfinished last one included; empties the accumulator.
  // InvalidArgument if the text ends inside a UTF-8 sequence (the accumulator is unchanged).
  absl::StatusOr<std::vector<std::string>> Flush();

  // Bytes held back (pending text plus an unfinished UTF-8 sequence).
  std::size_t pending_bytes() const { return pending_.size() + partial_.size(); }

 private:
  void TakeFinalSentences(std::vector<std::string>& out);
  void CutOversizedPending(std::vector<std::string>& out);

  const SentenceSplitter& splitter_;
  const std::size_t max_pending_chars_;
  std::string pending_;  // valid UTF-8 not yet handed out
  std::string partial_;  // the start of a UTF-8 sequence whose remaining bytes have not arrived
};

}  // namespace voxserve::text
