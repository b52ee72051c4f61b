#include "scheduler/worker_protocol.h"

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include "core/error.h"

namespace voxserve::scheduler::worker_protocol {
namespace {

absl::Status Malformed(const std::string& what) {
  return absl::DataLossError("malformed worker frame: " + what);
}

class Writer {
 public:
  void U32(uint32_t value) { Raw(&value, sizeof value); }
  void F64(double value) { Raw(&value, sizeof value); }
  void U64(uint64_t value) { Raw(&value, sizeof value); }
  void String(std::string_view text) {
    U32(static_cast<uint32_t>(text.size()));
    Raw(text.data(), text.size());
  }
  void Raw(const void* data, size_t size) { out_.Append(data, size); }
  // Samples are borrowed, not copied: they go to the socket from the engine's own buffer.
  void Samples(const std::vector<float>& samples) {
    out_.Borrow(samples.data(), samples.size() * sizeof(float));
  }
  PayloadPieces TakePieces() { return std::move(out_); }
  std::string Take() { return std::move(out_).Flatten(); }

 private:
  PayloadPieces out_;
};

// Reads fields front to back; every read checks what is left, so a short payload is an error.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool U32(uint32_t* value) { return Raw(value, sizeof *value); }
  bool F64(double* value) { return Raw(value, sizeof *value); }
  bool U64(uint64_t* value) { return Raw(value, sizeof *value); }
  bool String(std::string* text) {
    uint32_t size = 0;
    if (!U32(&size) || size > bytes_.size()) return false;
    text->assign(bytes_.substr(0, size));
    bytes_.remove_prefix(size);
    return true;
  }
  bool Raw(void* out, size_t size) {
    if (size > bytes_.size()) return false;
    if (size == 0) return true;  // `out` may be null then (an empty vector's data())
    std::memcpy(out, bytes_.data(), size);
    bytes_.remove_prefix(size);
    return true;
  }
  size_t left() const { return bytes_.size(); }

 private:
  std::string_view bytes_;
};

bool KnownType(uint16_t type) {
  return type >= static_cast<uint16_t>(FrameType::kReady) &&
         type <= static_cast<uint16_t>(FrameType::kRelease);
}

}  // namespace

std::string EncodeHeader(FrameType type, uint32_t payload_bytes) {
  Writer writer;
  writer.U32(kMagic);
  uint16_t version = kVersion;
  uint16_t type_value = static_cast<uint16_t>(type);
  writer.Raw(&version, sizeof version);
  writer.Raw(&type_value, sizeof type_value);
  writer.U32(payload_bytes);
  writer.U32(0);  // reserved
  return writer.Take();
}

absl::StatusOr<FrameHeader> DecodeHeader(std::string_view bytes) {
  if (bytes.size() != kHeaderBytes) {
    return Malformed("header is " + std::to_string(bytes.size()) + " bytes, expected " +
                     std::to_string(kHeaderBytes));
  }
  Reader reader(bytes);
  uint32_t magic = 0, payload_bytes = 0, reserved = 0;
  uint16_t version = 0, type = 0;
  reader.U32(&magic);
  reader.Raw(&version, sizeof version);
  reader.Raw(&type, sizeof type);
  reader.U32(&payload_bytes);
  reader.U32(&reserved);
  if (magic != kMagic) return Malformed("bad magic (not a voxserve worker stream)");
  if (version != kVersion) {
    return Malformed("protocol version " + std::to_string(version) + ", expected " +
                     std::to_string(kVersion));
  }
  if (!KnownType(type)) return Malformed("unknown frame type " + std::to_string(type));
  if (payload_bytes > kMaxFrameBytes) {
    return Malformed("payload of " + std::to_string(payload_bytes) + " bytes is over the " +
                     std::to_string(kMaxFrameBytes) + "-byte limit");
  }
  if (reserved != 0) return Malformed("reserved header field is not zero");
  return FrameHeader{static_cast<FrameType>(type), payload_bytes};
}

WireSegment WireSegment::From(const engine::SegmentInput& input) {
  WireSegment segment;
  segment.text = std::string(input.text);
  segment.voice_id = std::string(input.voice_id);
  segment.speed = input.speed;
  segment.instructions = std::string(input.instructions);
  segment.seed = input.seed;
  segment.voice_mode = input.voice_mode;
  segment.voice_profile = input.voice_profile;
  segment.phonemes = std::string(input.phonemes);
  segment.pitch = input.pitch;
  return segment;
}

engine::SegmentInput WireSegment::Input() const {
  engine::SegmentInput input;
  input.text = text;
  input.voice_id = voice_id;
  input.speed = speed;
  input.instructions = instructions;
  input.seed = seed;
  input.voice_mode = voice_mode;
  input.voice_profile = voice_profile;
  input.phonemes = phonemes;
  input.pitch = pitch;
  return input;
}

namespace {

// Bounds that only a corrupt frame would pass (a CosyVoice2 profile has 4 tensors of rank <= 2
// and one attribute).
constexpr uint32_t kMaxProfileEntries = 256;
constexpr uint32_t kMaxTensorRank = 8;
constexpr uint32_t kLastVoiceMode = static_cast<uint32_t>(engine::VoiceMode::kInstruct);

// Not store/voice_file's codec: that is a stored format (JSON metadata, a checksum, little-endian
// on any host); here both ends are one binary on one host, so the tensors go as raw native bytes.
// A segment's fields: f64 speed, voice id, text, instructions, phonemes, f64 pitch, u32 flags (1
// seed, 2 voice mode, 4 profile), u64 seed, u32 voice mode, then the profile when flagged: family,
// f64 prompt_seconds, u32 tensors {name, u32 dtype (0 f32, 1 i32), u32 rank, u64 dims, elements},
// u32 attributes {key, value}.
void WriteSegment(Writer& writer, const WireSegment& segment) {
  writer.F64(segment.speed);
  writer.String(segment.voice_id);
  writer.String(segment.text);
  writer.String(segment.instructions);
  writer.String(segment.phonemes);
  writer.F64(segment.pitch);
  const uint32_t flags =
      (segment.seed ? 1u : 0u) | (segment.voice_mode ? 2u : 0u) | (segment.voice_profile ? 4u : 0u);
  writer.U32(flags);
  writer.U64(segment.seed.value_or(0));
  writer.U32(segment.voice_mode ? static_cast<uint32_t>(*segment.voice_mode) : 0);
  if (!segment.voice_profile) return;
  const engine::VoiceProfile& profile = *segment.voice_profile;
  writer.String(profile.family);
  writer.F64(profile.prompt_seconds);
  writer.U32(static_cast<uint32_t>(profile.tensors.size()));
  for (const auto& [name, tensor] : profile.tensors) {
    writer.String(name);
    const bool floats = tensor.dtype == engine::ProfileTensor::DType::kFloat32;
    writer.U32(floats ? 0 : 1);
    writer.U32(static_cast<uint32_t>(tensor.shape.size()));
    for (int64_t dim : tensor.shape) writer.U64(static_cast<uint64_t>(dim));
    if (floats) {
      writer.Raw(tensor.floats.data(), tensor.floats.size() * sizeof(float));
    } else {
      writer.Raw(tensor.ints.data(), tensor.ints.size() * sizeof(int32_t));
    }
  }
  writer.U32(static_cast<uint32_t>(profile.attributes.size()));
  for (const auto& [key, value] : profile.attributes) {
    writer.String(key);
    writer.String(value);
  }
}

// A profile tensor's elements, checked against what is left before anything is allocated.
std::optional<std::string> ReadTensor(Reader& reader, engine::ProfileTensor* tensor) {
  uint32_t dtype = 0, rank = 0;
  if (!reader.U32(&dtype) || !reader.U32(&rank)) return "is truncated";
  if (dtype > 1) return "has unknown dtype " + std::to_string(dtype);
  if (rank > kMaxTensorRank) return "has rank " + std::to_string(rank);
  uint64_t count = 1;
  for (uint32_t d = 0; d < rank; ++d) {
    uint64_t dim = 0;
    if (!reader.U64(&dim)) return "is truncated";
    // Each element takes 4 bytes of a payload of at most kMaxFrameBytes.
    if (dim > kMaxFrameBytes || (dim != 0 && count > kMaxFrameBytes / dim)) {
      return "is larger than a frame";
    }
    count *= dim;
    tensor->shape.push_back(static_cast<int64_t>(dim));
  }
  if (count * 4 > reader.left()) return "is truncated";
  if (dtype == 0) {
    tensor->dtype = engine::ProfileTensor::DType::kFloat32;
    tensor->floats.resize(count);
    reader.Raw(tensor->floats.data(), count * sizeof(float));
  } else {
    tensor->dtype = engine::ProfileTensor::DType::kInt32;
    tensor->ints.resize(count);
    reader.Raw(tensor->ints.data(), count * sizeof(int32_t));
  }
  return std::nullopt;
}

// What is wrong with the segment's bytes, or nothing.
std::optional<std::string> ReadSegment(Reader& reader, WireSegment* segment) {
  uint32_t flags = 0, mode = 0;
  uint64_t seed = 0;
  if (!reader.F64(&segment->speed) || !reader.String(&segment->voice_id) ||
      !reader.String(&segment->text) || !reader.String(&segment->instructions) ||
      !reader.String(&segment->phonemes) || !reader.F64(&segment->pitch) || !reader.U32(&flags) ||
      !reader.U64(&seed) || !reader.U32(&mode)) {
    return "is truncated";
  }
  if (flags > 7) return "has unknown flags " + std::to_string(flags);
  if (flags & 1) segment->seed = seed;
  if (flags & 2) {
    if (mode > kLastVoiceMode) return "has unknown voice mode " + std::to_string(mode);
    segment->voice_mode = static_cast<engine::VoiceMode>(mode);
  }
  if (!(flags & 4)) return std::nullopt;
  auto profile = std::make_shared<engine::VoiceProfile>();
  uint32_t tensors = 0, attributes = 0;
  if (!reader.String(&profile->family) || !reader.F64(&profile->prompt_seconds) ||
      !reader.U32(&tensors)) {
    return "has a truncated voice profile";
  }
  if (tensors > kMaxProfileEntries) return "has " + std::to_string(tensors) + " profile tensors";
  for (uint32_t t = 0; t < tensors; ++t) {
    std::string name;
    if (!reader.String(&name)) return "has a truncated voice profile";
    auto [entry, added] = profile->tensors.try_emplace(name);
    if (!added) return "has the profile tensor '" + name + "' twice";
    if (std::optional<std::string> bad = ReadTensor(reader, &entry->second)) {
      return "has a profile tensor '" + name + "' that " + *bad;
    }
  }
  if (!reader.U32(&attributes)) return "has a truncated voice profile";
  if (attributes > kMaxProfileEntries) {
    return "has " + std::to_string(attributes) + " profile attributes";
  }
  for (uint32_t a = 0; a < attributes; ++a) {
    std::string key, value;
    if (!reader.String(&key) || !reader.String(&value)) return "has a truncated voice profile";
    profile->attributes[std::move(key)] = std::move(value);
  }
  segment->voice_profile = std::move(profile);
  return std::nullopt;
}

}  // namespace

std::string EncodeSegments(const std::vector<WireSegment>& segments) {
  Writer writer;
  writer.U32(static_cast<uint32_t>(segments.size()));
  for (const WireSegment& segment : segments) WriteSegment(writer, segment);
  return writer.Take();
}

absl::StatusOr<std::vector<WireSegment>> DecodeSegments(std::string_view payload) {
  Reader reader(payload);
  uint32_t count = 0;
  if (!reader.U32(&count)) return Malformed("batch without a segment count");
  if (count == 0 || count > kMaxBatch) {
    return Malformed("batch of " + std::to_string(count) + " segments (1.." +
                     std::to_string(kMaxBatch) + " allowed)");
  }
  std::vector<WireSegment> segments(count);
  for (uint32_t i = 0; i < count; ++i) {
    if (std::optional<std::string> bad = ReadSegment(reader, &segments[i])) {
      return Malformed("segment " + std::to_string(i) + " " + *bad);
    }
  }
  if (reader.left() != 0)
    return Malformed(std::to_string(reader.left()) + " bytes after the batch");
  return segments;
}

namespace {

// A PCM result's word timings as they travel after its samples: u32 kind, u32 count, then per
// word u64 text_begin, u64 text_end, f64 start_s, f64 end_s.
void WriteTimings(Writer& writer, const audio::PcmAudio& pcm) {
  writer.U32(static_cast<uint32_t>(pcm.timings));
  writer.U32(static_cast<uint32_t>(pcm.words.size()));
  for (const audio::WordTiming& word : pcm.words) {
    writer.U64(word.text_begin);
    writer.U64(word.text_end);
    writer.F64(word.start_s);
    writer.F64(word.end_s);
  }
}

bool ReadTimings(Reader& reader, audio::PcmAudio* pcm) {
  uint32_t kind = 0, count = 0;
  constexpr uint64_t kWordBytes = 2 * sizeof(uint64_t) + 2 * sizeof(double);
  if (!reader.U32(&kind) || kind > static_cast<uint32_t>(audio::TimingsKind::kExact) ||
      !reader.U32(&count) || count * kWordBytes > reader.left()) {
    return false;
  }
  pcm->timings = static_cast<audio::TimingsKind>(kind);
  pcm->words.resize(count);
  for (audio::WordTiming& word : pcm->words) {
    uint64_t begin = 0, end = 0;
    reader.U64(&begin);
    reader.U64(&end);
    reader.F64(&word.start_s);
    reader.F64(&word.end_s);
    word.text_begin = static_cast<size_t>(begin);
    word.text_end = static_cast<size_t>(end);
  }
  return true;
}

// One PCM block, as results and steps carry it: u32 sample rate, u32 sample count, the float
// samples (borrowed, not copied), then the timings.
void WritePcm(Writer& writer, const audio::PcmAudio& pcm) {
  writer.U32(static_cast<uint32_t>(pcm.sample_rate));
  writer.U32(static_cast<uint32_t>(pcm.samples.size()));
  writer.Samples(pcm.samples);
  WriteTimings(writer, pcm);
}

enum class EmptyPcm { kNeedsRate, kMayLackRate };  // a step may carry no audio, and no rate

// Reads WritePcm's block into *pcm. On failure, what is wrong, to follow the block's name.
std::optional<std::string> ReadPcm(Reader& reader, EmptyPcm empty, audio::PcmAudio* pcm) {
  uint32_t rate = 0, samples = 0;
  if (!reader.U32(&rate) || !reader.U32(&samples) ||
      static_cast<uint64_t>(samples) * sizeof(float) > reader.left()) {
    return "audio is truncated";
  }
  const bool rate_needed = samples > 0 || empty == EmptyPcm::kNeedsRate;
  if (rate_needed && (rate == 0 || rate > 1'000'000)) {
    return "has sample rate " + std::to_string(rate);
  }
  pcm->sample_rate = static_cast<int>(rate);
  pcm->samples.resize(samples);
  reader.Raw(pcm->samples.data(), samples * sizeof(float));
  if (!ReadTimings(reader, pcm)) return "timings are invalid";
  return std::nullopt;
}

}  // namespace

PayloadPieces ResultsPayload(const std::vector<absl::StatusOr<audio::PcmAudio>>& results) {
  Writer writer;
  writer.U32(static_cast<uint32_t>(results.size()));
  for (const auto& result : results) {
    if (result.ok()) {
      writer.U32(0);
      WritePcm(writer, *result);
    } else {
      writer.U32(static_cast<uint32_t>(result.status().code()));
      writer.String(std::string(result.status().message()));
    }
  }
  return writer.TakePieces();
}

absl::StatusOr<std::vector<absl::StatusOr<audio::PcmAudio>>> DecodeResults(
    std::string_view payload) {
  Reader reader(payload);
  uint32_t count = 0;
  if (!reader.U32(&count)) return Malformed("results without a count");
  if (count == 0 || count > kMaxBatch) {
    return Malformed("results for " + std::to_string(count) + " segments (1.." +
                     std::to_string(kMaxBatch) + " allowed)");
  }
  std::vector<absl::StatusOr<audio::PcmAudio>> results;
  results.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t code = 0;
    if (!reader.U32(&code)) return Malformed("result " + std::to_string(i) + " is truncated");
    if (code == 0) {
      audio::PcmAudio pcm;
      if (auto problem = ReadPcm(reader, EmptyPcm::kNeedsRate, &pcm)) {
        return Malformed("result " + std::to_string(i) + ": " + *problem);
      }
      results.emplace_back(std::move(pcm));
    } else {
      std::string message;
      if (code > static_cast<uint32_t>(absl::StatusCode::kUnauthenticated) ||
          !reader.String(&message)) {
        return Malformed("error of result " + std::to_string(i) + " is invalid");
      }
      results.emplace_back(absl::Status(static_cast<absl::StatusCode>(code), message));
    }
  }
  if (reader.left() != 0) {
    return Malformed(std::to_string(reader.left()) + " bytes after the results");
  }
  return results;
}

namespace {

// A status as it travels: u32 code, then the message (OK: code 0 and an empty message).
void WriteStatus(Writer& writer, const absl::Status& status) {
  writer.U32(static_cast<uint32_t>(status.code()));
  writer.String(std::string(status.message()));
}

bool ReadStatus(Reader& reader, absl::Status* status) {
  uint32_t code = 0;
  std::string message;
  if (!reader.U32(&code) || code > static_cast<uint32_t>(absl::StatusCode::kUnauthenticated) ||
      !reader.String(&message)) {
    return false;
  }
  *status = absl::Status(static_cast<absl::StatusCode>(code), message);
  return true;
}

}  // namespace

std::string EncodeBegin(uint64_t id, const WireSegment& segment) {
  Writer writer;
  writer.U64(id);
  WriteSegment(writer, segment);
  return writer.Take();
}

absl::StatusOr<std::pair<uint64_t, WireSegment>> DecodeBegin(std::string_view payload) {
  Reader reader(payload);
  std::pair<uint64_t, WireSegment> begin;
  if (!reader.U64(&begin.first)) return Malformed("begin is truncated");
  if (std::optional<std::string> bad = ReadSegment(reader, &begin.second)) {
    return Malformed("begin's segment " + *bad);
  }
  if (reader.left() != 0) return Malformed(std::to_string(reader.left()) + " bytes after begin");
  return begin;
}

std::string EncodeSequenceId(uint64_t id) {
  Writer writer;
  writer.U64(id);
  return writer.Take();
}

absl::StatusOr<uint64_t> DecodeSequenceId(std::string_view payload) {
  Reader reader(payload);
  uint64_t id = 0;
  if (!reader.U64(&id) || reader.left() != 0) return Malformed("expected one sequence id");
  return id;
}

PayloadPieces StepsPayload(const std::vector<engine::SequenceStep>& steps,
                           const engine::StreamRunnerStats& stats) {
  Writer writer;
  writer.U32(static_cast<uint32_t>(steps.size()));
  for (const engine::SequenceStep& step : steps) {
    writer.U64(step.id);
    WritePcm(writer, step.chunk);
    writer.U32(step.end ? 1 : 0);
    if (step.end) WriteStatus(writer, *step.end);
  }
  for (uint64_t figure :
       {stats.decoding, stats.prefill_waiting, stats.tokens_total, stats.vocoder_pending,
        stats.vocoder_jobs_total, stats.vocoder_batched_total}) {
    writer.U64(figure);
  }
  return writer.TakePieces();
}

absl::StatusOr<Stepped> DecodeSteps(std::string_view payload) {
  Reader reader(payload);
  uint32_t count = 0;
  if (!reader.U32(&count)) return Malformed("step without a count");
  if (count > kMaxBatch) {
    return Malformed("step for " + std::to_string(count) + " sequences (0.." +
                     std::to_string(kMaxBatch) + " allowed)");
  }
  Stepped stepped;
  std::vector<engine::SequenceStep>& steps = stepped.steps;
  steps.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    engine::SequenceStep& step = steps[i];
    if (!reader.U64(&step.id)) {
      return Malformed("step entry " + std::to_string(i) + " is truncated");
    }
    if (auto problem = ReadPcm(reader, EmptyPcm::kMayLackRate, &step.chunk)) {
      return Malformed("step entry " + std::to_string(i) + ": " + *problem);
    }
    uint32_t has_end = 0;
    if (!reader.U32(&has_end) || has_end > 1) {
      return Malformed("end of step entry " + std::to_string(i) + " is invalid");
    }
    if (has_end == 1) {
      absl::Status end;
      if (!ReadStatus(reader, &end)) {
        return Malformed("end of step entry " + std::to_string(i) + " is invalid");
      }
      step.end = end;
    }
  }
  engine::StreamRunnerStats& stats = stepped.stats;
  for (uint64_t* figure :
       {&stats.decoding, &stats.prefill_waiting, &stats.tokens_total, &stats.vocoder_pending,
        &stats.vocoder_jobs_total, &stats.vocoder_batched_total}) {
    if (!reader.U64(figure)) return Malformed("the step's runner figures are truncated");
  }
  if (reader.left() != 0) return Malformed(std::to_string(reader.left()) + " bytes after the step");
  return stepped;
}

void PayloadPieces::Append(const void* data, size_t size) {
  if (size == 0) return;
  if (pieces_.empty() || pieces_.back().borrowed != nullptr) {
    pieces_.push_back({nullptr, fields_.size(), 0});
  }
  fields_.append(static_cast<const char*>(data), size);
  pieces_.back().size += size;
  size_ += size;
}

void PayloadPieces::Borrow(const void* data, size_t size) {
  if (size == 0) return;
  pieces_.push_back({static_cast<const char*>(data), 0, size});
  size_ += size;
}

std::vector<std::string_view> PayloadPieces::Views() const {
  std::vector<std::string_view> views;
  views.reserve(pieces_.size());
  for (const Piece& piece : pieces_) {
    views.emplace_back(piece.borrowed != nullptr ? piece.borrowed : fields_.data() + piece.offset,
                       piece.size);
  }
  return views;
}

std::string PayloadPieces::Flatten() && {
  if (pieces_.size() <= 1 && (pieces_.empty() || pieces_.front().borrowed == nullptr)) {
    return std::move(fields_);
  }
  std::string flat;
  flat.reserve(size_);
  for (std::string_view view : Views()) flat.append(view);
  return flat;
}

std::string EncodeResults(const std::vector<absl::StatusOr<audio::PcmAudio>>& results) {
  return ResultsPayload(results).Flatten();
}

std::string EncodeSteps(const std::vector<engine::SequenceStep>& steps,
                        const engine::StreamRunnerStats& stats) {
  return StepsPayload(steps, stats).Flatten();
}

std::string EncodeU32(uint32_t value) {
  Writer writer;
  writer.U32(value);
  return writer.Take();
}

absl::StatusOr<uint32_t> DecodeU32(std::string_view payload) {
  Reader reader(payload);
  uint32_t value = 0;
  if (!reader.U32(&value) || reader.left() != 0) return Malformed("expected one 32-bit number");
  return value;
}

}  // namespace voxserve::scheduler::worker_protocol
