// OnnxSession's internals, shared by its source files (onnx_session.cc: loading and runs;
// provider_memory.cc: provider buffers; graph_session.cc: graphs built in memory). Not for use
// outside src/engine/onnx: nothing else in voxserve calls ORT directly.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "engine/onnx/onnx_session.h"

namespace voxserve::engine::onnx {

// The session options of `config` (threads, optimization, arena, provider). FailedPrecondition
// when the CUDA provider is asked for and cannot start; the message does not name a model.
absl::Status BuildSessionOptions(const OnnxSessionConfig& config, Ort::SessionOptions& options);

// The memory the session's provider computes in: the device memory its inputs or outputs are
// consumed in (ORT's own MemoryInfo for them) when there is one, else the configured provider's
// (CUDA device memory for cuda, host memory for cpu).
Ort::MemoryInfo ProviderMemory(const Ort::Session& session, const OnnxSessionConfig& config);

struct OnnxSession::Impl {
  Impl(Ort::Session s, const OnnxSessionConfig& config);

  // Arena mode shrink: a Run whose inputs hold more elements than the typical sentences the
  // arena is kept for gives its blocks back at its end, so a rare long input does not pin its
  // memory for the life of the process; the others reuse the arena's blocks (no page faults).
  const Ort::RunOptions& OptionsFor(size_t input_elements) const {
    return input_elements > shrink_above ? shrink : keep;
  }

  mutable Ort::Session session;  // Run is thread-safe (see the class comment)
  const Ort::RunOptions keep;    // the same for many Runs; only read by ORT
  const Ort::RunOptions shrink;
  const size_t shrink_above;
  Ort::MemoryInfo host_memory;      // where kHost views are
  Ort::MemoryInfo provider_memory;  // where kProvider views are (ProviderMemory)
  bool provider_is_host = true;
};

}  // namespace voxserve::engine::onnx
