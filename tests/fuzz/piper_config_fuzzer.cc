// A Piper voice's .onnx.json (engine/onnx/piper_config): parsed, then validated.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/onnx/piper_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string json(reinterpret_cast<const char*>(data), size);
  auto config = voxserve::engine::onnx::PiperVoiceConfig::Parse(json, "voice.onnx.json");
  if (config.ok()) (void)config->Validate();
  return 0;
}
