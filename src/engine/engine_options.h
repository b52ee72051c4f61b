// What each engine takes under a model's `options` (YAML models[].options): key, type, default,
// bounds, meaning. Only documentation: the engines' own Set() functions parse the options, and
// tests/unit/engine/engine_options_test.cc holds these lists to what they accept, so the
// configuration reference (docs/configuration.md, `voxserve config-reference`) cannot drift.
#pragma once

#include <span>
#include <string_view>

namespace voxserve::engine {

struct EngineOptionDoc {
  std::string_view key;
  std::string_view type;           // integer, number, boolean, string
  std::string_view default_value;  // a literal, or a phrase ("from the .onnx.json")
  std::string_view bounds;         // "1..256", "cpu, cuda"; empty = any
  std::string_view description;
};

struct EngineOptionsDoc {
  std::string_view engine;  // models[].engine, or "onnx" for the session options below
  std::string_view summary;
  std::span<const EngineOptionDoc> options;
};

// espeak, piper, kokoro, cosyvoice, tone, then "onnx": the ONNX Runtime session options that
// piper, kokoro and cosyvoice take too (RunsOnnxSessions).
std::span<const EngineOptionsDoc> EngineOptionDocs();

}  // namespace voxserve::engine
