// CosyVoice3's silent-token guard (CosyVoice3Model.llm_job, cli/model.py:102, :121-128): of a run
// of silent or breath tokens (the manifest's special_ids.silent_tokens, model.py:423) only the
// first kMaxRun go on to the flow. The LLM's own history (the RAS window, max_len) still counts
// every token: the guard sits between the decoder and the flow, as upstream's does.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace voxserve::engine::cosyvoice {

// One piece's filter (upstream's counter lives in one llm_job call, one piece); plain data, one
// thread at a time. With no silent ids (CosyVoice2) it keeps every token.
class SilentRunFilter {
 public:
  static constexpr int kMaxRun = 5;  // max_silent_token_num (model.py:102)

  SilentRunFilter() = default;
  explicit SilentRunFilter(std::span<const int64_t> silent_ids);

  // Whether `token` goes to the flow: false for a silent token past the first kMaxRun of its run.
  bool Keep(int64_t token);
  // A new piece: the run starts again.
  void Reset() { run_ = 0; }

 private:
  std::vector<int64_t> silent_;  // sorted
  int run_ = 0;
};

}  // namespace voxserve::engine::cosyvoice
