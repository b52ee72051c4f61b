#include "transport/http/speech_request_parser.h"

#include <chrono>
#include <limits>
#include <optional>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "core/error.h"
#include "nlohmann/json.hpp"
#include "text/utf8.h"
#include "transport/http/dictionary_locators_field.h"
#include "transport/http/json_body.h"
#include "transport/http/seed_field.h"
#include "transport/http/text_normalization_field.h"

namespace voxserve::transport::http {
namespace {

using nlohmann::json;

absl::Status WrongType(const std::string& field, const char* expected) {
  return core::InvalidArgument(field + " must be " + expected, field, "invalid_type");
}

absl::Status Missing(const std::string& field) {
  return core::InvalidArgument(field + " is required", field, "missing_field");
}

// Reads an optional string field; absent or null leaves *out untouched.
absl::Status ReadString(const json& body, const std::string& field, std::string* out) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_string()) return WrongType(field, "a string");
  *out = it->get<std::string>();
  return absl::OkStatus();
}

absl::Status ReadRequiredString(const json& body, const std::string& field, std::string* out) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return Missing(field);
  return ReadString(body, field, out);
}

absl::Status ReadNumber(const json& body, const std::string& field, double* out) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_number()) return WrongType(field, "a number");
  *out = it->get<double>();
  return absl::OkStatus();
}

absl::Status ReadTimeout(const json& body, service::SynthesisRequest* request) {
  auto it = body.find("timeout_ms");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_number_integer()) return WrongType("timeout_ms", "an integer");
  request->timeout = std::chrono::milliseconds(it->get<long long>());
  return absl::OkStatus();
}

absl::Status ReadFormat(const json& body, const std::string& default_format,
                        service::SynthesisRequest* request) {
  std::string name = default_format;
  if (absl::Status status = ReadString(body, "response_format", &name); !status.ok()) {
    return status;
  }
  auto format = audio::ParseAudioFormat(name);
  if (!format.ok()) return format.status();
  request->format = *format;
  return absl::OkStatus();
}

// A voxserve extension on both routes (telephony: pcm at 8 or 16 kHz); the service checks the
// rate against the format.
absl::Status ReadSampleRate(const json& body, service::SynthesisRequest* request) {
  auto it = body.find("sample_rate");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_number_integer() || it->get<long long>() <= 0 ||
      it->get<long long>() > std::numeric_limits<int>::max()) {
    return WrongType("sample_rate", "a positive integer (Hz)");
  }
  request->sample_rate = static_cast<int>(it->get<long long>());
  return absl::OkStatus();
}

// vLLM-Omni's inline voice prompt: ref_audio, the recording in base64 (or a data: URI of it;
// never a URL: the server fetches nothing), and ref_text, its transcript.
absl::Status ReadInlinePrompt(const json& body, service::SynthesisRequest* request) {
  std::string encoded;
  if (absl::Status status = ReadString(body, "ref_audio", &encoded); !status.ok()) return status;
  if (absl::Status status = ReadString(body, "ref_text", &request->prompt_text); !status.ok()) {
    return status;
  }
  if (encoded.empty()) {
    if (!request->prompt_text.empty()) {
      return core::InvalidArgument("ref_text needs ref_audio (the recording it transcribes)",
                                   "ref_audio", "missing_audio");
    }
    return absl::OkStatus();
  }
  std::string_view data = encoded;
  if (data.starts_with("data:")) {
    size_t comma = data.find(',');
    if (comma == std::string_view::npos || !data.substr(0, comma).ends_with(";base64")) {
      return core::InvalidArgument("ref_audio must be base64 or a data: URI with ;base64",
                                   "ref_audio", "invalid_audio");
    }
    data.remove_prefix(comma + 1);
  }
  if (!absl::Base64Unescape(absl::string_view(data.data(), data.size()), &request->prompt_audio) ||
      request->prompt_audio.empty()) {
    return core::InvalidArgument("ref_audio is not valid base64", "ref_audio", "invalid_audio");
  }
  return absl::OkStatus();
}

// OpenAI accepts a voice name or a custom-voice object {"id": "..."}. With an inline prompt
// (ref_audio) the voice may be left out, and is ignored.
absl::Status ReadOpenAiVoice(const json& body, std::string* voice) {
  auto it = body.find("voice");
  if (it == body.end() || it->is_null()) {
    auto ref = body.find("ref_audio");
    if (ref != body.end() && ref->is_string() && !ref->get<std::string>().empty()) {
      return absl::OkStatus();
    }
    return Missing("voice");
  }
  if (it->is_string()) {
    *voice = it->get<std::string>();
  } else if (it->is_object() && it->contains("id") && (*it)["id"].is_string()) {
    *voice = (*it)["id"].get<std::string>();
  } else {
    return WrongType("voice", "a voice name or an object with a string \"id\"");
  }
  if (voice->empty())
    return core::InvalidArgument("voice must not be empty", "voice", "empty_voice");
  return absl::OkStatus();
}

// The sampling seed (CosyVoice; engines that do not sample ignore it), the same range on every
// API (seed_field.h).
absl::Status ReadSeed(const json& body, service::SynthesisRequest* request) {
  auto it = body.find("seed");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  auto seed = ParseSeed(*it);
  if (!seed.ok()) return seed.status();
  request->seed = *seed;
  return absl::OkStatus();
}

absl::Status ReadTextNormalization(const json& body, service::SynthesisRequest* request) {
  auto found = body.find(kTextNormalizationField);
  auto normalize = ParseTextNormalization(found == body.end() ? nullptr : &*found);
  if (!normalize.ok()) return normalize.status();
  request->normalize_text = *normalize;
  return absl::OkStatus();
}

absl::Status ReadDictionaryLocators(const json& body, service::SynthesisRequest* request) {
  auto found = body.find(kDictionaryLocatorsField);
  if (found == body.end() || found->is_null()) return absl::OkStatus();
  auto locators = ParseDictionaryLocators(*found);
  if (!locators.ok()) return locators.status();
  request->dictionaries = *std::move(locators);
  return absl::OkStatus();
}

// The fields both routes share for cloned voices and sampling: instructions (OpenAI's),
// voice_mode (docs/cosyvoice-generation.md, "Modes"), seed, apply_text_normalization; and
// input_format ("ssml" or "text", docs/ssml.md) and pronunciation_dictionary_locators
// (docs/pronunciation-dictionaries.md), checked by the service.
absl::Status ReadVoiceOptions(const json& body, service::SynthesisRequest* request) {
  for (absl::Status status : {ReadString(body, "instructions", &request->instructions),
                              ReadString(body, "voice_mode", &request->voice_mode),
                              ReadSeed(body, request), ReadTextNormalization(body, request),
                              ReadString(body, "input_format", &request->input_format),
                              ReadDictionaryLocators(body, request)}) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();  // their limits are the service's (service::CheckRequestOptions)
}

absl::Status ReadTimestamps(const json& body, ParsedSpeechRequest* parsed) {
  auto found = body.find("timestamps");
  auto mode = ParseTimestampsMode(found == body.end() ? nullptr : &*found);
  if (!mode.ok()) return mode.status();
  parsed->timestamps = *mode;
  return absl::OkStatus();
}

// OpenAI's /v1/audio/speech streams by default (its stream_format defaults to "audio"), so voice
// agents reading the response as a stream hear the first sentence while the rest is made.
// "stream": false (voxserve's, as on /v1/synthesize) asks for the whole file with a
// Content-Length; timestamps without a stream_format keep the whole JSON answer, since raw audio
// has no room for them. Needs the timestamps read first.
absl::Status ReadOpenAiStream(const json& body, ParsedSpeechRequest* parsed) {
  std::string stream_format;
  if (absl::Status status = ReadString(body, "stream_format", &stream_format); !status.ok()) {
    return status;
  }
  std::optional<bool> stream;
  if (auto found = body.find("stream"); found != body.end() && !found->is_null()) {
    if (!found->is_boolean()) return WrongType("stream", "a boolean");
    stream = found->get<bool>();
  }
  if (stream_format == "audio") {
    parsed->stream = StreamMode::kAudio;
  } else if (stream_format == "sse") {
    parsed->stream = StreamMode::kSse;
  } else if (!stream_format.empty()) {
    return core::InvalidArgument("stream_format must be \"audio\" or \"sse\"", "stream_format",
                                 "invalid_stream_format");
  }
  if (!stream_format.empty() && stream == false) {
    return core::InvalidArgument(
        "stream false asks for the whole file, stream_format for a stream: send one of them",
        "stream", "invalid_stream_format");
  }
  if (stream_format.empty()) {
    const bool whole = stream == false || (!stream && parsed->timestamps != TimestampsMode::kNone);
    if (whole) {
      parsed->stream = StreamMode::kNone;
    } else {
      // As on /v1/synthesize: with timestamps the stream is SSE.
      parsed->stream =
          parsed->timestamps == TimestampsMode::kNone ? StreamMode::kAudio : StreamMode::kSse;
    }
  }
  if (parsed->stream == StreamMode::kAudio && parsed->timestamps != TimestampsMode::kNone) {
    return core::InvalidArgument(
        "timestamps cannot travel in a raw audio stream: use stream_format \"sse\" or "
        "\"stream\": false (a JSON body with the audio and its timestamps)",
        "timestamps", "invalid_timestamps");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ParsedSpeechRequest> ParseOpenAiSpeechRequest(const HttpRequest& request) {
  auto body = ParseJsonObject(request);
  if (!body.ok()) return body.status();
  ParsedSpeechRequest parsed;
  service::SynthesisRequest& synthesis = parsed.synthesis;
  synthesis.text_field = "input";
  for (absl::Status status :
       {ReadRequiredString(*body, "model", &synthesis.model),
        ReadRequiredString(*body, "input", &synthesis.text),
        ReadOpenAiVoice(*body, &synthesis.voice), ReadFormat(*body, "mp3", &synthesis),
        ReadNumber(*body, "speed", &synthesis.speed), ReadVoiceOptions(*body, &synthesis),
        ReadInlinePrompt(*body, &synthesis), ReadTimeout(*body, &synthesis),
        ReadSampleRate(*body, &synthesis), ReadTimestamps(*body, &parsed)}) {
    if (!status.ok()) return status;
  }
  if (absl::Status status = ReadOpenAiStream(*body, &parsed); !status.ok()) return status;
  synthesis.streaming = parsed.stream != StreamMode::kNone;
  return parsed;
}

absl::StatusOr<ParsedSpeechRequest> ParseSynthesizeRequest(const HttpRequest& request) {
  auto body = ParseJsonObject(request);
  if (!body.ok()) return body.status();
  ParsedSpeechRequest parsed;
  service::SynthesisRequest& synthesis = parsed.synthesis;
  synthesis.text_field = "text";
  for (absl::Status status :
       {ReadRequiredString(*body, "text", &synthesis.text),
        ReadString(*body, "voice", &synthesis.voice), ReadString(*body, "model", &synthesis.model),
        ReadFormat(*body, "wav", &synthesis), ReadNumber(*body, "speed", &synthesis.speed),
        ReadVoiceOptions(*body, &synthesis), ReadInlinePrompt(*body, &synthesis),
        ReadTimeout(*body, &synthesis), ReadSampleRate(*body, &synthesis),
        ReadTimestamps(*body, &parsed)}) {
    if (!status.ok()) return status;
  }
  auto stream = body->find("stream");
  if (stream != body->end() && !stream->is_null()) {
    if (!stream->is_boolean()) return WrongType("stream", "a boolean");
    // A raw audio stream has no room for timings: with timestamps the stream is SSE.
    if (stream->get<bool>()) {
      parsed.stream =
          parsed.timestamps == TimestampsMode::kNone ? StreamMode::kAudio : StreamMode::kSse;
    }
  }
  synthesis.streaming = parsed.stream != StreamMode::kNone;
  return parsed;
}

}  // namespace voxserve::transport::http
