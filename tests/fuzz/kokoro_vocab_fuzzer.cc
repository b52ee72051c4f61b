// A Kokoro config.json's "vocab" (engine/onnx/kokoro_phonemes), then tokenizing a phoneme string
// with whatever vocabulary it gave.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/onnx/kokoro_phonemes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string json(reinterpret_cast<const char*>(data), size);
  auto vocab = voxserve::engine::onnx::ParseKokoroVocab(json, "config.json");
  if (vocab.ok()) {
    (void)voxserve::engine::onnx::KokoroTokenChunks(U"həlˈoʊ, wˈɜːld. ðɪs ɪz ɐ tˈɛst!", *vocab, 8);
  }
  return 0;
}
