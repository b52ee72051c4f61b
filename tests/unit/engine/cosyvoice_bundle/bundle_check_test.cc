#include "engine/cosyvoice/bundle_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>

#include "engine/cosyvoice/bundle_verifier.h"
#include "engine/cosyvoice/hift_stages.h"
#include "unit/engine/cosyvoice_bundle/tiny_bundle.h"

namespace voxserve::engine::cosyvoice {
namespace {

using ::testing::AllOf;
using testing::BrokenBundle;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::TinyBundle;
using json = nlohmann::json;

json& Input(json& m, const std::string& graph, size_t i) { return m["graphs"][graph]["inputs"][i]; }

TEST(BundleCheck, TheTinyBundleIsValid) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  BundleReport report = CheckBundle(TinyBundle());
  EXPECT_TRUE(report.ok()) << report.Summary();
  EXPECT_THAT(report.Summary(), AllOf(HasSubstr("valid cosyvoice2 bundle"),
                                      HasSubstr("graph llm_step: llm_step.onnx"),
                                      HasSubstr("tensor rand_noise"), HasSubstr("[1, 80, 15000]")));
  ASSERT_TRUE(report.manifest.has_value());
  // With the optional flow_encoder_stream and the float16 and bfloat16 LLM step graphs.
  EXPECT_EQ(report.manifest->graphs.size(), 10u);
  EXPECT_EQ(report.manifest->special_ids.eos, 6561);
}

TEST(BundleCheck, TheStreamingFlowEncoderIsOptional) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  // A bundle exported before the role existed (docs/cosyvoice-bundle.md).
  BrokenBundle older("no-stream-encoder", [](json& m) { m["graphs"].erase("flow_encoder_stream"); },
                     {"flow_encoder_stream.onnx"});
  BundleReport report = CheckBundle(older.dir());
  EXPECT_TRUE(report.ok()) << report.Summary();
}

TEST(BundleCheck, AStreamingFlowEncoderIsHeldToItsContract) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  // Without its context input it would be the non-streaming signature under the streaming role.
  BrokenBundle broken("stream-encoder-inputs",
                      [](json& m) { m["graphs"]["flow_encoder_stream"]["inputs"].erase(1); });
  BundleReport report = CheckBundle(broken.dir());
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(report.Summary(),
              HasSubstr("graphs.flow_encoder_stream.inputs: 2 tensors, expected 3"));
}

TEST(BundleCheck, AMissingGraphFileIsNamed) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  BrokenBundle broken("missing", [](json&) {}, {"llm_step.onnx"});
  BundleReport report = CheckBundle(broken.dir());
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(report.problems, Contains("graph llm_step: file llm_step.onnx missing"));
}

// A bundle of format 1 (the LLM as llm_backbone + llm_decoder, before the GroupQueryAttention
// step graph) is refused with the command that remakes it.
TEST(BundleCheck, ABundleOfTheOldLlmFormatIsRefusedWithTheExportCommand) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  BrokenBundle old("format-1", [](json& m) {
    m["format_version"] = 1;
    m["graphs"]["llm_backbone"] = m["graphs"]["llm_step"];
    m["graphs"].erase("llm_step");
  });
  BundleReport report = CheckBundle(old.dir());
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(report.Summary(), AllOf(HasSubstr("format_version: 1"),
                                      HasSubstr("tools/cosyvoice_export/export.py --model-dir")));
}

// The half-precision step graphs are held to the float32 one's contract, their cache in their
// own type.
TEST(BundleCheck, AHalfPrecisionStepGraphIsHeldToItsCacheType) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  BrokenBundle broken("fp16-cache",
                      [](json& m) { Input(m, "llm_step_fp16", 3)["dtype"] = "float32"; });
  BundleReport report = CheckBundle(broken.dir());
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(report.Summary(), HasSubstr("graphs.llm_step_fp16.inputs.past_key_0: dtype float32, "
                                          "the runtime needs float16"));
}

TEST(BundleCheck, AWrongInputNameIsNamedWithWhatTheFileHas) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  BrokenBundle broken("name", [](json& m) { Input(m, "campplus", 0)["name"] = "fbank"; });
  BundleReport report = CheckBundle(broken.dir());
  EXPECT_THAT(report.problems,
              Contains("graph campplus input 'fbank': not in campplus.onnx (it has: input)"));
  EXPECT_THAT(report.problems,
              Contains("graph campplus input 'input': in campplus.onnx but not in the manifest"));
}

TEST(BundleCheck, AWrongDtypeIsNamedWithBothTypes) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  BrokenBundle broken(
      "dtype", [](json& m) { m["graphs"]["speech_tokenizer"]["outputs"][0]["dtype"] = "int32"; });
  BundleReport report = CheckBundle(broken.dir());
  EXPECT_THAT(report.problems,
              Contains("graph speech_tokenizer output 'indices': dtype: manifest int32, "
                       "speech_tokenizer_v2.onnx int64"));
}

TEST(BundleCheck, AWrongRankIsNamedWithBothShapes) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  BrokenBundle broken("rank", [](json& m) {
    m["graphs"]["speech_tokenizer"]["outputs"][0]["shape"] = json::array({"tokens"});
  });
  BundleReport report = CheckBundle(broken.dir());
  ASSERT_EQ(report.problems.size(), 1u) << report.Summary();
  EXPECT_THAT(report.problems[0],
              AllOf(HasSubstr("graph speech_tokenizer output 'indices': rank: manifest 1"),
                    HasSubstr("speech_tokenizer_v2.onnx 2")));
}

TEST(BundleCheck, AWrongFixedSizeIsNamed) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  BrokenBundle broken("dim", [](json& m) { Input(m, "campplus", 0)["shape"][2] = 40; });
  EXPECT_THAT(CheckBundle(broken.dir()).problems,
              Contains("graph campplus input 'input': dim 2: manifest 40, campplus.onnx 80"));
}

TEST(BundleCheck, TheNoiseTensorMustHaveItsRealShape) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  BrokenBundle broken("noise", [](json& m) {
    m["tensors"]["rand_noise"]["file"] = "tensors/hift_source_linear_bias.npy";
  });
  BundleReport report = CheckBundle(broken.dir());
  EXPECT_THAT(report.problems, Contains("tensor rand_noise: shape: manifest [1, 80, 15000], "
                                        "tensors/hift_source_linear_bias.npy [1]"));
  EXPECT_THAT(report.problems,
              Contains("tensor rand_noise: shape [1], the model needs [1, 80, 15000]"));
}

TEST(BundleCheck, MissingTokenizerAndTensorFilesAreNamed) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  BrokenBundle broken("tokenizer", [](json& m) {
    m["tokenizer"]["files"].push_back("tokenizer.json");
    m["tensors"]["embed_tokens"]["file"] = "tensors/nowhere.npy";
  });
  BundleReport report = CheckBundle(broken.dir());
  EXPECT_THAT(report.problems, Contains("tokenizer: file tokenizer/tokenizer.json missing"));
  EXPECT_THAT(report.problems, Contains("tensor embed_tokens: file tensors/nowhere.npy missing"));
}

TEST(BundleCheck, EveryProblemIsReportedNotJustTheFirst) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  BrokenBundle broken("several", [](json& m) { Input(m, "hift_f0", 0)["name"] = "speech_feat"; },
                      {"flow_encoder.onnx", "goldens"});
  BundleReport report = CheckBundle(broken.dir());
  EXPECT_THAT(report.problems, Contains("graph flow_encoder: file flow_encoder.onnx missing"));
  EXPECT_THAT(report.problems, Contains(HasSubstr("graph hift_f0 input 'speech_feat'")));
  EXPECT_THAT(report.problems, Contains("goldens: index goldens/index.json missing"));
  EXPECT_THAT(report.Summary(), HasSubstr("problem(s)"));
}

TEST(BundleCheck, BadManifestFieldsAreEachNamed) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  BrokenBundle broken("fields", [](json& m) {
    m["family"] = "cosyvoice9";
    m["llm"]["num_kv_heads"] = 0;
    m["sampling"].erase("top_k");
    m["graphs"]["campplus"]["file"] = "../outside.onnx";
  });
  BundleReport report = CheckBundle(broken.dir());
  EXPECT_FALSE(report.manifest.has_value());
  EXPECT_THAT(report.problems,
              Contains("family: \"cosyvoice9\" is not one of cosyvoice2, cosyvoice3"));
  EXPECT_THAT(report.problems, Contains("llm.num_kv_heads: expected an integer >= 1, found 0"));
  EXPECT_THAT(report.problems, Contains("sampling.top_k: missing"));
  EXPECT_THAT(report.problems,
              Contains(HasSubstr("graphs.campplus.file: \"../outside.onnx\" must be a relative")));
}

TEST(BundleCheck, AGraphTheRuntimeCannotFeedIsRejectedByRole) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  BrokenBundle broken("contract", [](json& m) {
    Input(m, "campplus", 0)["dtype"] = "int64";
    m["graphs"].erase("hift_decoder");
  });
  BundleReport report = CheckBundle(broken.dir());
  EXPECT_THAT(report.problems,
              Contains("graphs.campplus.inputs.input: dtype int64, the runtime needs float32"));
  EXPECT_THAT(report.problems,
              Contains("graphs.hift_decoder: missing (a cosyvoice2 bundle needs it)"));
}

TEST(BundleCheck, ACosyVoice3BundleIsCheckedAgainstItsOwnRolesAndTensors) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  // A CosyVoice2 bundle relabelled. CosyVoice3 takes sos/task_id from speech_embedding (no
  // llm_embedding needed, reference 3.5), but its causal HiFT reads a fixed noise table and its
  // f0 graph takes the mel's right context as a second input.
  BrokenBundle cv3("cv3", [](json& m) {
    m["family"] = "cosyvoice3";
    m["tensors"].erase("llm_embedding");
  });
  BundleReport report = CheckBundle(cv3.dir());
  EXPECT_THAT(report.problems,
              Contains("tensors.hift_noise_table: missing (a cosyvoice3 bundle needs it)"));
  EXPECT_THAT(report.problems, Contains("graphs.hift_f0.inputs: 1 tensors, expected 2"));
  EXPECT_THAT(report.problems, Not(Contains(HasSubstr("llm_embedding"))));
  BrokenBundle cv2("cv2-no-llm-embedding", [](json& m) { m["tensors"].erase("llm_embedding"); });
  EXPECT_THAT(CheckBundle(cv2.dir()).problems,
              Contains("tensors.llm_embedding: missing (a cosyvoice2 bundle needs it)"));
}

// check-model and every verify-bundle stage on an exported CosyVoice3 bundle (or its fp16 copy,
// whose goldens carry fp16.py's tolerances).
void ExpectCosyVoice3BundleVerifies(const std::string& cv3) {
  BundleReport report = CheckBundle(cv3);
  EXPECT_TRUE(report.ok()) << report.Summary();
  EXPECT_THAT(report.Summary(), HasSubstr("valid cosyvoice3 bundle"));
  onnx::OnnxSessionConfig config;
  config.intra_op_threads = 1;
  auto verifier = BundleVerifier::Create(cv3, config);
  ASSERT_TRUE(verifier.ok()) << verifier.status();
  for (auto add : {AddFrontendStages, AddOnnxStages, AddFlowStages, AddHiftStages, AddLlmStages}) {
    ASSERT_TRUE(add(**verifier).ok());  // verify-bundle's set (server/model_commands.cc)
  }
  const std::vector<BundleVerifier::Result> results = (*verifier)->Run();
  const std::string table = FormatResults(results);
  EXPECT_TRUE(AllPassed(results)) << table;
  std::set<std::string> passed;
  for (const auto& r : results) {
    if (r.outcome.kind == StageOutcome::Kind::kPassed) {
      passed.insert(r.stage.substr(0, r.stage.find('/')));
    }
  }
  for (const char* stage :
       {"audio.prompt_mel", "campplus", "speech_tokenizer", "frontend.align", "llm.prefill",
        "llm.decode", "flow.encoder", "flow.estimator", "flow.estimator_stream", "flow.full",
        "flow.stream", "flow.stream_encoder", "hift.f0", "hift.decoder", "hift.source",
        "hift.full", "hift.stream"}) {
    EXPECT_TRUE(passed.contains(stage)) << stage << " did not pass:\n" << table;
  }
  std::printf("%s", table.c_str());
}

TEST(BundleCheck, TheExportedCosyVoice3BundleIsValidAndVerifiesAgainstUpstream) {
  const std::string cv3 =
      testing::FixturePath("VOXSERVE_COSYVOICE3_TINY", test_paths::kCosyVoice3Tiny);
  if (!std::filesystem::exists(cv3 + "/manifest.json")) {
    GTEST_SKIP() << "no CosyVoice3 bundle (fixture cosyvoice3_tiny, VOXSERVE_COSYVOICE_REF)";
  }
  ExpectCosyVoice3BundleVerifies(cv3);
}

// fp16.py's copy: the DiT's (both estimators') and the causal HiFT decoder's MatMul/Gemm/Conv in
// float16, LayerNorm, Softmax and the rotary in float32 (upstream warns of fp16 DiT); held to the
// float32 goldens with FP16_ATOL.
TEST(BundleCheck, TheFp16CopyOfACosyVoice3BundleVerifiesWithinItsTolerances) {
  const std::string fp16 =
      testing::FixturePath("VOXSERVE_COSYVOICE3_TINY_FP16", test_paths::kCosyVoice3TinyFp16);
  if (!std::filesystem::exists(fp16 + "/manifest.json")) {
    GTEST_SKIP() << "no fp16 CosyVoice3 bundle (fixture cosyvoice3_tiny_fp16)";
  }
  ExpectCosyVoice3BundleVerifies(fp16);
}

TEST(BundleCheck, NoDirectoryOrNoManifestIsNamed) {
  EXPECT_THAT(CheckBundle("/nonexistent/bundle").problems,
              Contains("bundle /nonexistent/bundle: not a directory"));
  EXPECT_FALSE(LoadCheckedBundle("/tmp").ok());
  EXPECT_THAT(std::string(LoadCheckedBundle("/tmp").status().message()),
              HasSubstr("manifest.json missing"));
}

TEST(BundleManifest, InvalidJsonIsAnError) {
  auto parsed = ParseBundleManifest("{not json", "m.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("m.json: not valid JSON"));
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
