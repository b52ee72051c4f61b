// Absolute paths a test binary reads: its fixtures' outputs in the build tree, the source tree,
// the server binary. voxserve_test_paths() (tests/CMakeLists.txt) defines the ones a binary
// names in one file it generates for that binary. As -D flags on every file they made ccache miss
// every file of the binary in a clone at another path: ccache cannot rewrite a path inside a
// definition.
#pragma once

namespace voxserve::test_paths {

extern const char kSourceDir[];              // the source tree
extern const char kVoxserveBin[];            // the voxserve binary of this build tree
extern const char kBpeCases[];               // tests/unit/text's fixture bpe_test_vocab
extern const char kNormalizationCases[];     // tests/unit/text/normalization
extern const char kCosyVoiceBundle[];        // the fixture cosyvoice_tiny_bundle
extern const char kDynamicBatchEstimator[];  // the fixture cosyvoice_flow_dynamic
extern const char kFlowStreamOracles[];      // the fixture cosyvoice_flow_stream
extern const char kHiftOracles[];            // the fixture cosyvoice_hift_oracles
extern const char kModeCases[];              // the fixture cosyvoice_mode_cases
extern const char kCosyVoice3Tiny[];         // the fixture cosyvoice3_tiny
extern const char kCosyVoice3TinyFp16[];     // the fixture cosyvoice3_tiny_fp16
extern const char kFrontendCases[];          // the fixture cosyvoice_frontend_cases
extern const char kTestModels[];             // the fixture onnx_test_models
extern const char kFeatureOracles[];         // the fixture feature_oracles

}  // namespace voxserve::test_paths
