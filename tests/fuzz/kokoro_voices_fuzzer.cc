// One .npy array of a Kokoro voice pack (engine/onnx/kokoro_voices: the NPZ's members).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/onnx/kokoro_voices.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view npy(reinterpret_cast<const char*>(data), size);
  (void)voxserve::engine::onnx::ParseNpyStyles(npy, "voices.npz:af_heart.npy");
  return 0;
}
