// The worker IPC framing: what round-trips, and that every malformed input is a clear DataLoss
// error (never a crash, never an allocation the length field asks for).
#include "scheduler/worker_protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <thread>

namespace voxserve::scheduler::worker_protocol {
namespace {

using ::testing::HasSubstr;

std::string Header(FrameType type, uint32_t payload_bytes) {
  return EncodeHeader(type, payload_bytes);
}

template <typename T>
void Poke(std::string& bytes, size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

class SocketPair : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  void TearDown() override {
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  void CloseWriter() {
    ::close(fds_[1]);
    fds_[1] = -1;
  }
  void SendRaw(const std::string& bytes) {
    ASSERT_EQ(::write(fds_[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  int fds_[2] = {-1, -1};
};

TEST(WorkerProtocolTest, HeaderRoundTrips) {
  auto header = DecodeHeader(Header(FrameType::kResults, 1234));
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->type, FrameType::kResults);
  EXPECT_EQ(header->payload_bytes, 1234u);
}

TEST(WorkerProtocolTest, HeaderOfTheWrongSizeIsRejected) {
  std::string header = Header(FrameType::kPing, 0);
  auto decoded = DecodeHeader(std::string_view(header).substr(0, 10));
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(decoded.status().message(), HasSubstr("10 bytes"));
}

TEST(WorkerProtocolTest, BadMagicIsRejected) {
  std::string header = Header(FrameType::kPing, 0);
  header[0] = 'X';
  EXPECT_THAT(DecodeHeader(header).status().message(), HasSubstr("bad magic"));
}

TEST(WorkerProtocolTest, OtherVersionIsRejected) {
  std::string header = Header(FrameType::kPing, 0);
  Poke<uint16_t>(header, 4, kVersion + 1);
  EXPECT_THAT(DecodeHeader(header).status().message(),
              HasSubstr("protocol version " + std::to_string(kVersion + 1)));
}

TEST(WorkerProtocolTest, UnknownTypeIsRejected) {
  std::string header = Header(FrameType::kPing, 0);
  Poke<uint16_t>(header, 6, 99);
  EXPECT_THAT(DecodeHeader(header).status().message(), HasSubstr("unknown frame type 99"));
}

TEST(WorkerProtocolTest, OversizedLengthIsRejectedBeforeAnyAllocation) {
  std::string header = Header(FrameType::kResults, 0);
  Poke<uint32_t>(header, 8, 0xFFFFFFF0u);
  auto decoded = DecodeHeader(header);
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(decoded.status().message(), HasSubstr("over the"));
}

TEST(WorkerProtocolTest, NonZeroReservedFieldIsRejected) {
  std::string header = Header(FrameType::kPing, 0);
  Poke<uint32_t>(header, 12, 7);
  EXPECT_THAT(DecodeHeader(header).status().message(), HasSubstr("reserved"));
}

TEST(WorkerProtocolTest, SegmentsRoundTrip) {
  std::vector<WireSegment> segments = {{"Hello there.", "en-us", 1.0}, {"你好。", "cmn+f3", 1.5}};
  auto decoded = DecodeSegments(EncodeSegments(segments));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(decoded->size(), 2u);
  EXPECT_EQ((*decoded)[1].text, "你好。");
  EXPECT_EQ((*decoded)[1].voice_id, "cmn+f3");
  EXPECT_EQ((*decoded)[1].speed, 1.5);
}

TEST(WorkerProtocolTest, EveryTruncationOfABatchIsAnError) {
  std::string payload = EncodeSegments({{"Hello there.", "en-us", 1.0}});
  for (size_t size = 0; size < payload.size(); ++size) {
    auto decoded = DecodeSegments(std::string_view(payload).substr(0, size));
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << "size " << size;
  }
}

TEST(WorkerProtocolTest, BatchWithTrailingBytesIsRejected) {
  std::string payload = EncodeSegments({{"Hi.", "en-us", 1.0}}) + "x";
  EXPECT_THAT(DecodeSegments(payload).status().message(), HasSubstr("1 bytes after the batch"));
}

TEST(WorkerProtocolTest, EmptyOrHugeBatchCountIsRejected) {
  EXPECT_THAT(DecodeSegments(EncodeU32(0)).status().message(), HasSubstr("batch of 0"));
  EXPECT_THAT(DecodeSegments(EncodeU32(1u << 30)).status().message(), HasSubstr("segments"));
}

TEST(WorkerProtocolTest, StringLengthPastTheEndIsRejected) {
  std::string payload = EncodeSegments({{"Hi.", "en-us", 1.0}});
  Poke<uint32_t>(payload, 4 + 8, 0x7FFFFFFFu);  // the voice id's length
  EXPECT_EQ(DecodeSegments(payload).status().code(), absl::StatusCode::kDataLoss);
}

TEST(WorkerProtocolTest, ResultsRoundTripSamplesExactly) {
  audio::PcmAudio pcm;
  pcm.sample_rate = 22050;
  pcm.samples = {0.0f, -0.5f, 0.25f, 1.0f};
  std::vector<absl::StatusOr<audio::PcmAudio>> results = {
      pcm, absl::InvalidArgumentError("no such voice")};
  auto decoded = DecodeResults(EncodeResults(results));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(decoded->size(), 2u);
  ASSERT_TRUE((*decoded)[0].ok());
  EXPECT_EQ((*decoded)[0]->samples, pcm.samples);
  EXPECT_EQ((*decoded)[0]->sample_rate, 22050);
  EXPECT_EQ((*decoded)[1].status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*decoded)[1].status().message(), "no such voice");
}

TEST(WorkerProtocolTest, ResultsCarryTheirWordTimings) {
  audio::PcmAudio pcm;
  pcm.sample_rate = 22050;
  pcm.samples.assign(10, 0.1f);
  pcm.timings = audio::TimingsKind::kExact;
  pcm.words = {{0, 5, 0.0, 0.25}, {6, 11, 0.3, 0.5}};
  auto decoded = DecodeResults(EncodeResults({pcm}));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_TRUE((*decoded)[0].ok());
  EXPECT_EQ((*decoded)[0]->timings, audio::TimingsKind::kExact);
  ASSERT_EQ((*decoded)[0]->words.size(), 2u);
  EXPECT_EQ((*decoded)[0]->words[1].text_begin, 6u);
  EXPECT_EQ((*decoded)[0]->words[1].text_end, 11u);
  EXPECT_DOUBLE_EQ((*decoded)[0]->words[1].start_s, 0.3);
  EXPECT_DOUBLE_EQ((*decoded)[0]->words[1].end_s, 0.5);
}

TEST(WorkerProtocolTest, StepChunksCarryTheirWordTimings) {
  engine::SequenceStep step;
  step.id = 7;
  step.chunk.sample_rate = 24000;
  step.chunk.samples.assign(3, 0.2f);
  step.chunk.timings = audio::TimingsKind::kEstimated;
  step.chunk.words = {{2, 4, 0.1, 0.2}};
  step.end = absl::OkStatus();
  auto decoded = DecodeSteps(EncodeSteps({step}));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(decoded->steps.size(), 1u);
  EXPECT_EQ(decoded->steps[0].chunk.timings, audio::TimingsKind::kEstimated);
  ASSERT_EQ(decoded->steps[0].chunk.words.size(), 1u);
  EXPECT_EQ(decoded->steps[0].chunk.words[0].text_end, 4u);
}

TEST(WorkerProtocolTest, UnknownTimingsKindIsRejected) {
  audio::PcmAudio pcm;
  pcm.sample_rate = 24000;
  pcm.samples.assign(1, 0.1f);
  std::string payload = EncodeResults({pcm});
  Poke<uint32_t>(payload, 16 + sizeof(float), 9);  // the timings kind, after the one sample
  EXPECT_THAT(DecodeResults(payload).status().message(), HasSubstr("timings"));
}

TEST(WorkerProtocolTest, EveryTruncationOfResultsIsAnError) {
  audio::PcmAudio pcm;
  pcm.sample_rate = 24000;
  pcm.samples.assign(5, 0.1f);
  pcm.timings = audio::TimingsKind::kExact;
  pcm.words = {{0, 2, 0.0, 0.1}};
  std::string payload = EncodeResults({pcm, absl::InternalError("x")});
  for (size_t size = 0; size < payload.size(); ++size) {
    auto decoded = DecodeResults(std::string_view(payload).substr(0, size));
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << "size " << size;
  }
}

TEST(WorkerProtocolTest, SampleCountPastTheEndIsRejected) {
  audio::PcmAudio pcm;
  pcm.sample_rate = 24000;
  pcm.samples.assign(2, 0.1f);
  std::string payload = EncodeResults({pcm});
  Poke<uint32_t>(payload, 12, 0xFFFFFFFFu);  // the sample count
  EXPECT_THAT(DecodeResults(payload).status().message(), HasSubstr("truncated"));
}

TEST(WorkerProtocolTest, InvalidStatusCodeIsRejected) {
  std::string payload = EncodeU32(1) + EncodeU32(1000) + EncodeU32(0);
  EXPECT_THAT(DecodeResults(payload).status().message(), HasSubstr("invalid"));
}

TEST(WorkerProtocolTest, RandomGarbageNeverCrashesTheDecoders) {
  std::mt19937 random(11);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes(random() % 64, '\0');
    for (char& byte : bytes) byte = static_cast<char>(random());
    // Any answer is fine as long as it is an answer; sanitizers catch the rest.
    (void)DecodeSegments(bytes);
    (void)DecodeResults(bytes);
    if (bytes.size() >= kHeaderBytes) (void)DecodeHeader(bytes.substr(0, kHeaderBytes));
  }
}

TEST_F(SocketPair, FrameTravelsOverASocket) {
  ASSERT_TRUE(WriteFrame(fds_[1], FrameType::kReady, EncodeU32(42)).ok());
  auto frame = ReadFrame(fds_[0]);
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->type, FrameType::kReady);
  EXPECT_EQ(*DecodeU32(frame->payload), 42u);
}

TEST_F(SocketPair, LargeFrameTravelsWhole) {
  std::string payload(3 << 20, 'a');  // larger than a socket buffer: several writes and reads
  std::thread writer([&] { ASSERT_TRUE(WriteFrame(fds_[1], FrameType::kResults, payload).ok()); });
  auto frame = ReadFrame(fds_[0]);
  writer.join();
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->payload.size(), payload.size());
}

TEST_F(SocketPair, PeerClosedIsUnavailable) {
  CloseWriter();
  auto frame = ReadFrame(fds_[0]);
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(SocketPair, PeerClosedMidFrameIsUnavailable) {
  SendRaw(Header(FrameType::kResults, 100) + "only a part");
  CloseWriter();
  auto frame = ReadFrame(fds_[0]);
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(frame.status().message(), HasSubstr("mid-frame"));
}

TEST_F(SocketPair, SilentPeerTimesOut) {
  auto frame = ReadFrame(fds_[0], std::chrono::steady_clock::now() + std::chrono::milliseconds(20));
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(SocketPair, GarbageOnTheSocketIsDataLoss) {
  SendRaw(std::string(kHeaderBytes, 'z'));
  auto frame = ReadFrame(fds_[0]);
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(SocketPair, WritingToAClosedPeerIsUnavailableNotASignal) {
  ::close(fds_[0]);
  fds_[0] = -1;
  absl::Status status = WriteFrame(fds_[1], FrameType::kPing, {});
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
}

TEST_F(SocketPair, GatheredResultsArriveAsTheirEncoding) {
  // Samples borrowed from the results go out in the same bytes EncodeResults would produce.
  audio::PcmAudio pcm;
  pcm.sample_rate = 22050;
  pcm.samples.assign(100'000, 0.25f);  // larger than one default socket buffer
  pcm.samples[7] = -1.0f;
  pcm.words = {{0, 3, 0.0, 0.1}};
  pcm.timings = audio::TimingsKind::kExact;
  std::vector<absl::StatusOr<audio::PcmAudio>> results = {pcm, absl::NotFoundError("no voice"),
                                                          pcm};
  PayloadPieces pieces = ResultsPayload(results);
  EXPECT_EQ(pieces.size(), EncodeResults(results).size());
  std::thread writer(
      [&] { ASSERT_TRUE(WriteFramePieces(fds_[1], FrameType::kResults, pieces).ok()); });
  FrameBuffer buffer;
  auto type = ReadFrameInto(fds_[0], &buffer);
  writer.join();
  ASSERT_TRUE(type.ok()) << type.status();
  EXPECT_EQ(*type, FrameType::kResults);
  EXPECT_EQ(buffer.view(), EncodeResults(results));
  auto decoded = DecodeResults(buffer.view());
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(decoded->size(), 3u);
  EXPECT_EQ((*decoded)[2]->samples, pcm.samples);
  EXPECT_EQ((*decoded)[1].status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SocketPair, ReusedFrameBufferHoldsEachFrameExactly) {
  // Growing, shrinking after a frame over the kept size (9 MiB), and empty.
  FrameBuffer buffer;
  for (const std::string& payload :
       {std::string(5000, 'a'), std::string(9 << 20, 'b'), std::string("bc"), std::string()}) {
    std::thread writer(
        [&] { ASSERT_TRUE(WriteFrame(fds_[1], FrameType::kResults, payload).ok()); });
    auto type = ReadFrameInto(fds_[0], &buffer);
    writer.join();
    ASSERT_TRUE(type.ok()) << type.status();
    EXPECT_EQ(buffer.view(), payload);
  }
}

TEST_F(SocketPair, FrameReadIntoABufferStillRejectsGarbageAndTruncation) {
  FrameBuffer buffer;
  SendRaw(Header(FrameType::kResults, 100) + "only a part");
  CloseWriter();
  auto type = ReadFrameInto(fds_[0], &buffer);
  EXPECT_EQ(type.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(type.status().message(), HasSubstr("mid-frame"));
}

TEST_F(SocketPair, GarbageReadIntoABufferIsDataLoss) {
  FrameBuffer buffer;
  SendRaw(std::string(kHeaderBytes, 'z'));
  EXPECT_EQ(ReadFrameInto(fds_[0], &buffer).status().code(), absl::StatusCode::kDataLoss);
}

TEST(WorkerProtocolTest, StepsPayloadMatchesEncodeSteps) {
  std::vector<engine::SequenceStep> steps(2);
  steps[0].id = 4;
  steps[0].chunk.sample_rate = 24000;
  steps[0].chunk.samples = {0.5f, -0.5f};
  steps[1].id = 5;
  steps[1].end = absl::OkStatus();
  PayloadPieces pieces = StepsPayload(steps);
  std::string joined;
  for (std::string_view view : pieces.Views()) joined += view;
  EXPECT_EQ(joined, EncodeSteps(steps));
  EXPECT_EQ(pieces.size(), joined.size());
}

TEST(WorkerProtocolTest, StepsRoundTripWithChunksAndEnds) {
  std::vector<engine::SequenceStep> steps(3);
  steps[0].id = 1;
  steps[0].chunk.sample_rate = 24000;
  steps[0].chunk.samples = {0.25f, -0.5f};
  steps[1].id = 0xFFFF'FFFF'FFFFull;
  steps[1].chunk.sample_rate = 24000;
  steps[1].chunk.samples = {1.0f};
  steps[1].end = absl::OkStatus();
  steps[2].id = 3;
  steps[2].end = absl::InternalError("went wrong");

  auto decoded = DecodeSteps(EncodeSteps(steps));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(decoded->steps.size(), 3u);
  EXPECT_EQ(decoded->steps[0].id, 1u);
  EXPECT_EQ(decoded->steps[0].chunk.samples, (std::vector<float>{0.25f, -0.5f}));
  EXPECT_FALSE(decoded->steps[0].end.has_value());
  EXPECT_EQ(decoded->steps[1].id, 0xFFFF'FFFF'FFFFull);
  ASSERT_TRUE(decoded->steps[1].end.has_value());
  EXPECT_TRUE(decoded->steps[1].end->ok());
  ASSERT_TRUE(decoded->steps[2].end.has_value());
  EXPECT_EQ(decoded->steps[2].end->code(), absl::StatusCode::kInternal);
  EXPECT_EQ(decoded->steps[2].end->message(), "went wrong");
  EXPECT_TRUE(decoded->steps[2].chunk.samples.empty());
}

TEST(WorkerProtocolTest, AStepCarriesTheRunnersFigures) {
  engine::StreamRunnerStats stats{3, 2, 1'000'000'007, 4, 77, 150};
  std::vector<engine::SequenceStep> steps(1);
  steps[0].id = 9;
  std::string payload = EncodeSteps(steps, stats);
  auto decoded = DecodeSteps(payload);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->stats, stats);
  EXPECT_EQ(decoded->steps[0].id, 9u);
  EXPECT_THAT(
      DecodeSteps(std::string_view(payload).substr(0, payload.size() - 8)).status().message(),
      HasSubstr("runner figures"));
}

TEST(WorkerProtocolTest, AnEmptyStepIsValid) {
  auto decoded = DecodeSteps(EncodeSteps({}));
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(decoded->steps.empty());
}

TEST(WorkerProtocolTest, TruncatedOrPaddedStepsAreDataLoss) {
  std::vector<engine::SequenceStep> steps(1);
  steps[0].chunk.sample_rate = 16000;
  steps[0].chunk.samples = {0.1f, 0.2f};
  std::string payload = EncodeSteps(steps);
  for (size_t cut : {size_t{3}, size_t{10}, payload.size() - 1}) {
    auto decoded = DecodeSteps(std::string_view(payload).substr(0, cut));
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << cut;
  }
  EXPECT_THAT(DecodeSteps(payload + "x").status().message(), HasSubstr("after the step"));
}

TEST(WorkerProtocolTest, BeginAndReleaseRoundTrip) {
  auto begin = DecodeBegin(EncodeBegin(42, {"Hello there.", "a4", 1.5}));
  ASSERT_TRUE(begin.ok()) << begin.status();
  EXPECT_EQ(begin->first, 42u);
  EXPECT_EQ(begin->second.text, "Hello there.");
  EXPECT_EQ(begin->second.voice_id, "a4");
  EXPECT_EQ(begin->second.speed, 1.5);
  EXPECT_EQ(*DecodeSequenceId(EncodeSequenceId(7)), 7u);
  EXPECT_EQ(DecodeSequenceId("abc").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeBegin("abc").status().code(), absl::StatusCode::kDataLoss);
}

// A cloned voice's segment (CosyVoice in a worker): every field of engine::SegmentInput arrives,
// the profile's tensors bit for bit.
WireSegment ClonedVoiceSegment() {
  auto profile = std::make_shared<engine::VoiceProfile>();
  profile->family = "cosyvoice2";
  profile->prompt_seconds = 2.25;
  engine::ProfileTensor mel;
  mel.shape = {3, 2};
  mel.floats = {0.5f, -1.25f, 3.0f, 1e-30f, -0.0f, 7.75f};
  profile->tensors["prompt_mel"] = mel;
  engine::ProfileTensor tokens;
  tokens.dtype = engine::ProfileTensor::DType::kInt32;
  tokens.shape = {4};
  tokens.ints = {0, 6560, 17, 2};
  profile->tensors["prompt_speech_tokens"] = tokens;
  engine::ProfileTensor empty;
  empty.shape = {0};
  profile->tensors["empty"] = empty;
  profile->attributes["transcript"] = "Hello, it's me.";
  WireSegment segment{"Speak.", "voice_0123", 1.25};
  segment.instructions = "Whisper it.";
  segment.seed = 0xFFFFFFFFFFFFFFFFull;
  segment.voice_mode = engine::VoiceMode::kInstruct;
  segment.voice_profile = std::move(profile);
  segment.phonemes = "həlˈoʊ";
  segment.pitch = 1.4;
  return segment;
}

TEST(WorkerProtocolTest, AClonedVoicesSegmentRoundTripsWithEveryField) {
  const WireSegment sent = ClonedVoiceSegment();
  for (bool begin : {false, true}) {
    WireSegment got;
    if (begin) {
      auto decoded = DecodeBegin(EncodeBegin(9, sent));
      ASSERT_TRUE(decoded.ok()) << decoded.status();
      got = decoded->second;
    } else {
      auto decoded = DecodeSegments(EncodeSegments({sent, {"Plain.", "en-us", 1.0}}));
      ASSERT_TRUE(decoded.ok()) << decoded.status();
      ASSERT_EQ(decoded->size(), 2u);
      EXPECT_FALSE((*decoded)[1].seed.has_value());  // unset stays unset
      EXPECT_FALSE((*decoded)[1].voice_mode.has_value());
      EXPECT_EQ((*decoded)[1].voice_profile, nullptr);
      got = (*decoded)[0];
    }
    engine::SegmentInput input = got.Input();
    EXPECT_EQ(input.text, "Speak.");
    EXPECT_EQ(input.instructions, "Whisper it.");
    EXPECT_EQ(input.phonemes, "həlˈoʊ");  // SSML <phoneme>, <prosody pitch>
    EXPECT_EQ(input.pitch, 1.4);
    EXPECT_EQ(input.seed, sent.seed);
    EXPECT_EQ(input.voice_mode, engine::VoiceMode::kInstruct);
    ASSERT_NE(input.voice_profile, nullptr);
    const engine::VoiceProfile& p = *input.voice_profile;
    EXPECT_EQ(p.family, "cosyvoice2");
    EXPECT_EQ(p.prompt_seconds, 2.25);
    ASSERT_EQ(p.tensors.size(), 3u);
    const engine::ProfileTensor& mel = p.tensors.at("prompt_mel");
    EXPECT_EQ(mel.shape, (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(
        std::memcmp(mel.floats.data(), sent.voice_profile->tensors.at("prompt_mel").floats.data(),
                    6 * sizeof(float)),
        0);  // -0.0 and the denormal too
    EXPECT_EQ(p.tensors.at("prompt_speech_tokens").ints, (std::vector<int32_t>{0, 6560, 17, 2}));
    EXPECT_EQ(p.tensors.at("prompt_speech_tokens").dtype, engine::ProfileTensor::DType::kInt32);
    EXPECT_TRUE(p.tensors.at("empty").floats.empty());
    EXPECT_EQ(p.attributes.at("transcript"), "Hello, it's me.");
  }
  // From() and Input() are inverse views of one another.
  engine::SegmentInput input = sent.Input();
  WireSegment again = WireSegment::From(input);
  EXPECT_EQ(again.voice_profile, sent.voice_profile);
  EXPECT_EQ(again.instructions, sent.instructions);
}

TEST(WorkerProtocolTest, EveryTruncationOfAClonedVoicesBeginIsAnError) {
  std::string payload = EncodeBegin(3, ClonedVoiceSegment());
  for (size_t size = 0; size < payload.size(); ++size) {
    auto decoded = DecodeBegin(std::string_view(payload).substr(0, size));
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << "size " << size;
  }
}

TEST(WorkerProtocolTest, ACorruptProfileIsRejectedByName) {
  const WireSegment sent = ClonedVoiceSegment();
  const std::string payload = EncodeBegin(3, sent);
  // Offsets: u64 id, f64 speed, then the strings "voice_0123", "Speak.", "Whisper it.", the
  // phonemes, and f64 pitch.
  const size_t flags = 8 + 8 + (4 + 10) + (4 + 6) + (4 + 11) + (4 + sent.phonemes.size()) + 8;
  std::string bad = payload;
  Poke<uint32_t>(bad, flags, 8);
  EXPECT_THAT(DecodeBegin(bad).status().message(), HasSubstr("unknown flags 8"));
  bad = payload;
  Poke<uint32_t>(bad, flags + 4 + 8, 9);
  EXPECT_THAT(DecodeBegin(bad).status().message(), HasSubstr("unknown voice mode 9"));
  // The profile: family "cosyvoice2", f64 seconds, u32 tensor count, then the first tensor
  // (std::map order: "empty"): its name, u32 dtype, u32 rank, u64 dim.
  const size_t profile = flags + 4 + 8 + 4;
  const size_t count = profile + (4 + 10) + 8;
  bad = payload;
  Poke<uint32_t>(bad, count, 100000);
  EXPECT_THAT(DecodeBegin(bad).status().message(), HasSubstr("100000 profile tensors"));
  const size_t dtype = count + 4 + (4 + 5);
  bad = payload;
  Poke<uint32_t>(bad, dtype, 2);
  EXPECT_THAT(DecodeBegin(bad).status().message(), HasSubstr("'empty' that has unknown dtype 2"));
  bad = payload;
  Poke<uint32_t>(bad, dtype + 4, 99);
  EXPECT_THAT(DecodeBegin(bad).status().message(), HasSubstr("has rank 99"));
  bad = payload;
  Poke<uint64_t>(bad, dtype + 8, uint64_t{1} << 40);  // a dimension no frame could hold
  EXPECT_THAT(DecodeBegin(bad).status().message(), HasSubstr("larger than a frame"));
  bad = payload;
  Poke<uint64_t>(bad, dtype + 8, 1000);  // more elements than the payload has
  EXPECT_THAT(DecodeBegin(bad).status().message(), HasSubstr("'empty' that is truncated"));
  // A name given twice: a copy of "empty" named "abcde" (sent first, std::map order), whose
  // name is then overwritten with "empty".
  WireSegment twice = ClonedVoiceSegment();
  auto copied = std::make_shared<engine::VoiceProfile>(*twice.voice_profile);
  copied->tensors["abcde"] = copied->tensors.at("empty");
  twice.voice_profile = copied;
  bad = EncodeBegin(3, twice);
  bad.replace(count + 4 + 4, 5, "empty");
  EXPECT_THAT(DecodeBegin(bad).status().message(),
              HasSubstr("has the profile tensor 'empty' twice"));
}

TEST(WorkerProtocolTest, StreamingFrameTypesAreKnown) {
  for (FrameType type :
       {FrameType::kBegin, FrameType::kStep, FrameType::kStepped, FrameType::kRelease}) {
    auto header = DecodeHeader(EncodeHeader(type, 0));
    ASSERT_TRUE(header.ok()) << header.status();
    EXPECT_EQ(header->type, type);
  }
}

}  // namespace
}  // namespace voxserve::scheduler::worker_protocol
