// engine/engine_options.h documents each engine's `options` for the configuration reference;
// these tests hold that list to what the engines' own parsers accept: the same keys (taken from
// the "allowed:" list an unknown key gets), integer ranges that hold at both ends, and
// documented defaults that parse.
#include "engine/engine_options.h"

#include <gtest/gtest.h>

#include <functional>
#include <regex>
#include <set>
#include <string>

#include "engine/cosyvoice/cosyvoice_engine.h"
#include "engine/engine_factory.h"
#include "engine/onnx/kokoro_voice.h"
#include "engine/onnx/onnx_session_config.h"
#include "engine/onnx/piper_voice.h"
#include "engine/tone/tone_engine.h"

namespace voxserve::engine {
namespace {

using SetOption = std::function<absl::Status(const std::string& key, const std::string& value)>;

// A fresh config of the engine per call, so one Set cannot hide another's failure.
SetOption SetterOf(std::string_view engine) {
  if (engine == "piper") {
    return [](const std::string& k, const std::string& v) {
      return onnx::PiperEngineConfig{}.Set(k, v);
    };
  }
  if (engine == "kokoro") {
    return [](const std::string& k, const std::string& v) {
      return onnx::KokoroEngineConfig{}.Set(k, v);
    };
  }
  if (engine == "cosyvoice") {
    return [](const std::string& k, const std::string& v) {
      return cosyvoice::CosyVoiceEngineConfig{}.Set(k, v);
    };
  }
  if (engine == "tone") {
    return [](const std::string& k, const std::string& v) { return ToneConfig{}.Set(k, v); };
  }
  if (engine == "onnx") {
    return [](const std::string& k, const std::string& v) {
      return onnx::OnnxSessionConfig{}.Set(k, v);
    };
  }
  // espeak parses its options inside the factory; an unknown one fails before anything loads.
  return [](const std::string& k, const std::string& v) -> absl::Status {
    if (k != "data_path") return CreateEngine({"e", "espeak", "", {{k, v}}}).status();
    return absl::OkStatus();  // a real folder would be needed to load; the key is known
  };
}

std::set<std::string> Split(const std::string& list) {
  std::set<std::string> keys;
  std::regex word("[a-z_][a-z0-9_]*");  // option names may end in digits (cuda_tf32)
  for (std::sregex_iterator it(list.begin(), list.end(), word), end; it != end; ++it) {
    keys.insert(it->str());
  }
  return keys;
}

std::set<std::string> Documented(std::string_view engine) {
  std::set<std::string> keys;
  for (const EngineOptionsDoc& doc : EngineOptionDocs()) {
    if (doc.engine != engine) continue;
    for (const EngineOptionDoc& option : doc.options) keys.insert(std::string(option.key));
  }
  return keys;
}

TEST(EngineOptionDocs, ListEveryEngineOnce) {
  std::vector<std::string> engines;
  for (const EngineOptionsDoc& doc : EngineOptionDocs()) engines.emplace_back(doc.engine);
  EXPECT_EQ(engines,
            (std::vector<std::string>{"espeak", "piper", "kokoro", "cosyvoice", "tone", "onnx"}));
}

TEST(EngineOptionDocs, DocumentExactlyTheKeysEachEngineAccepts) {
  std::set<std::string> session = Documented("onnx");
  EXPECT_EQ(session, Split(onnx::OnnxSessionConfig::KnownKeys()));
  for (std::string_view engine : {"espeak", "piper", "kokoro", "cosyvoice", "tone"}) {
    SCOPED_TRACE(std::string(engine));
    absl::Status unknown = SetterOf(engine)("no_such_option", "1");
    ASSERT_FALSE(unknown.ok());
    std::string message(unknown.message());
    size_t allowed = message.find("(allowed: ");
    ASSERT_NE(allowed, std::string::npos) << message;
    std::set<std::string> accepted = Split(message.substr(allowed + 10));
    std::set<std::string> documented = Documented(engine);
    if (RunsOnnxSessions(engine)) documented.insert(session.begin(), session.end());
    EXPECT_EQ(documented, accepted);
  }
}

TEST(EngineOptionDocs, RangesAndDefaultsAreWhatTheParsersAccept) {
  for (const EngineOptionsDoc& doc : EngineOptionDocs()) {
    SetOption set = SetterOf(doc.engine);
    for (const EngineOptionDoc& option : doc.options) {
      std::string key(option.key);
      SCOPED_TRACE(std::string(doc.engine) + "." + key);
      EXPECT_FALSE(option.description.empty());
      std::string bounds(option.bounds);
      std::smatch range;
      if (option.type == "integer") {
        ASSERT_TRUE(std::regex_match(bounds, range, std::regex(R"((\d+)\.\.(\d+))"))) << bounds;
        long long lo = std::stoll(range[1]), hi = std::stoll(range[2]);
        EXPECT_TRUE(set(key, std::to_string(lo)).ok());
        EXPECT_TRUE(set(key, std::to_string(hi)).ok());
        EXPECT_FALSE(set(key, std::to_string(lo - 1)).ok());
        EXPECT_FALSE(set(key, std::to_string(hi + 1)).ok());
      } else if (option.type == "boolean") {
        EXPECT_TRUE(set(key, "true").ok());
        EXPECT_TRUE(set(key, "false").ok());
        EXPECT_FALSE(set(key, "maybe").ok());
      }
      std::string fallback(option.default_value);
      if (!fallback.empty() && fallback.find(' ') == std::string::npos &&
          fallback.find('<') == std::string::npos) {
        EXPECT_TRUE(set(key, fallback).ok()) << fallback;
      }
    }
  }
}

// The session's listed values: each passes Validate, another does not.
TEST(EngineOptionDocs, ListedSessionValuesAreTheValidOnes) {
  for (const EngineOptionDoc& option : EngineOptionDocs().back().options) {
    if (option.type != "string" || option.bounds.empty()) continue;
    std::string key(option.key);
    for (const std::string& value : Split(std::string(option.bounds))) {
      onnx::OnnxSessionConfig config;
      ASSERT_TRUE(config.Set(key, value).ok()) << key << "=" << value;
      EXPECT_TRUE(config.Validate().ok()) << key << "=" << value;
    }
    onnx::OnnxSessionConfig config;
    ASSERT_TRUE(config.Set(key, "nonsense").ok());
    EXPECT_FALSE(config.Validate().ok()) << key;
  }
}

}  // namespace
}  // namespace voxserve::engine
