// The process's one ONNX Runtime environment.
#pragma once

namespace Ort {
struct Env;
}

namespace voxserve::engine::onnx {

// ORT wants exactly one Env per process, created before and outliving every session
// (onnxruntime_cxx_api.h). Created on first use with ORT's log messages routed to spdlog, and
// deliberately never destroyed, so no session can outlive it at exit. Safe cross thread.
// Throws Ort::Exception when ORT cannot start: call it inside OnnxSession's exception boundary.
Ort::Env& OrtEnvironment();

}  // namespace voxserve::engine::onnx
