#include "store/voice_store.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "core/error.h"
#include "spdlog/spdlog.h"
#include "store/durable_file.h"
#include "text/utf8.h"
#include "text/visible_text.h"

namespace voxserve::store {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kIdPrefix = "voice_";
constexpr size_t kIdHexDigits = 24;  // 96 random bits: collisions are not a concern
constexpr std::string_view kSuffix = ".voice";
constexpr size_t kMaxNameChars = 64;  // OpenAI documents no limit; 64 fits any UI label

std::string ErrnoText() { return std::strerror(errno); }

}  // namespace

std::string VoiceNameKey(std::string_view model, std::string_view name) {
  return std::string(model) + '\n' + text::LookAlikeKey(name);
}

bool IsVoiceId(std::string_view id) {
  if (id.size() != kIdPrefix.size() + kIdHexDigits || id.substr(0, kIdPrefix.size()) != kIdPrefix) {
    return false;
  }
  for (char c : id.substr(kIdPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string NewVoiceId(uint64_t& state) {
  std::mt19937_64 generator(state);
  std::string id(kIdPrefix);
  for (int word = 0; word < 2; ++word) {
    uint64_t bits = generator();
    for (int i = 0; i < 12; ++i) id.push_back("0123456789abcdef"[(bits >> (4 * i)) & 0xf]);
  }
  state = generator();
  return id;
}

absl::StatusOr<std::string> VoiceStoreConfig::PostgresDsn() const {
  if (!postgres_dsn.empty()) return postgres_dsn;
  if (!postgres_dsn_env.empty()) {
    const char* value = std::getenv(postgres_dsn_env.c_str());
    if (value == nullptr || *value == '\0') {
      return core::InvalidArgument("voices.postgres.dsn_env: the environment variable " +
                                   postgres_dsn_env + " is not set or empty");
    }
    return std::string(value);
  }
  if (!postgres_dsn_file.empty()) {
    std::ifstream in(postgres_dsn_file, std::ios::binary);
    if (!in) {
      return core::InvalidArgument("voices.postgres.dsn_file: cannot read " + postgres_dsn_file +
                                   ": " + ErrnoText());
    }
    std::string dsn((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!dsn.empty() && absl::ascii_isspace(static_cast<unsigned char>(dsn.back()))) {
      dsn.pop_back();
    }
    if (dsn.empty()) {
      return core::InvalidArgument("voices.postgres.dsn_file: " + postgres_dsn_file + " is empty");
    }
    return dsn;
  }
  return core::InvalidArgument(
      "voices.backend is postgres but none of voices.postgres.dsn, voices.postgres.dsn_env or "
      "voices.postgres.dsn_file is set");
}

absl::Status VoiceStoreConfig::Validate() const {
  if (backend != "dir" && backend != "postgres") {
    return core::InvalidArgument("voices.backend must be dir or postgres, not " +
                                 core::Quoted(backend));
  }
  if (postgres_resync_ms < 100 || postgres_resync_ms > 3'600'000) {
    return core::InvalidArgument("voices.postgres.resync_ms must be 100..3600000");
  }
  if (postgres_statement_timeout_ms < 100 || postgres_statement_timeout_ms > 600'000) {
    return core::InvalidArgument("voices.postgres.statement_timeout_ms must be 100..600000");
  }
  if (postgres_idle_in_transaction_timeout_ms < 100 ||
      postgres_idle_in_transaction_timeout_ms > 600'000) {
    return core::InvalidArgument(
        "voices.postgres.idle_in_transaction_timeout_ms must be 100..600000");
  }
  if (max_count < 1 || max_count > 1'000'000) {
    return core::InvalidArgument("voices.max_count must be 1..1000000");
  }
  if (max_bytes < (1u << 20)) return core::InvalidArgument("voices.max_bytes must be >= 1048576");
  if (max_upload_bytes < 1024 || max_upload_bytes > (1ull << 30)) {
    return core::InvalidArgument("voices.max_upload_bytes must be 1024..1073741824");
  }
  if (max_pending < 1 || max_pending > 1024) {
    return core::InvalidArgument("voices.max_pending must be 1..1024");
  }
  return absl::OkStatus();
}

absl::Status ValidateVoiceName(std::string_view name) {
  auto bad = [](const std::string& why) {
    return core::InvalidArgument("name " + why, "name", "invalid_voice_name");
  };
  if (name.empty()) return bad("must not be empty");
  if (absl::Status utf8 = text::ValidateUtf8(name, "name"); !utf8.ok()) return utf8;
  if (text::CountCodePoints(name) > kMaxNameChars) return bad("must be at most 64 characters");
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) return bad("must not contain control characters");
    if (c == '/' || c == '\\') return bad("must not contain '/' or '\\'");
  }
  // A right-to-left override or a zero-width space makes a name that looks like another one.
  if (std::optional<text::InvisibleCharacter> hidden = text::FirstInvisibleCharacter(name)) {
    return bad(absl::StrFormat(
        "must not contain invisible or format characters (U+%04X at character %d): they make "
        "names that look like other names",
        static_cast<uint32_t>(hidden->code_point), hidden->index + 1));
  }
  if (name.find("..") != std::string_view::npos) return bad("must not contain '..'");
  if (text::TrimWhitespace(name).size() != name.size()) {
    return bad("must not start or end with white space");
  }
  if (absl::AsciiStrToLower(std::string(name.substr(0, kIdPrefix.size()))) == kIdPrefix) {
    return bad("must not start with 'voice_' (voice ids do)");
  }
  return absl::OkStatus();
}

VoiceStore::Reservation::Reservation(VoiceStore* store, VoiceIndex::Hold hold)
    : VoiceReservation(hold.id), store_(store), hold_(std::move(hold)) {}

VoiceStore::Reservation::~Reservation() {
  if (committed_) return;  // Store released the hold when it indexed the voice
  std::lock_guard lock(store_->mutex_);
  store_->index_.Release(hold_);
}

VoiceStore::VoiceStore(VoiceStoreConfig config) : config_(std::move(config)) {}

absl::StatusOr<std::unique_ptr<VoiceStore>> VoiceStore::Create(VoiceStoreConfig config) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  if (config.dir.empty()) return core::InvalidArgument("voices.dir is not set");
  std::unique_ptr<VoiceStore> store(new VoiceStore(std::move(config)));
  if (absl::Status status = store->LoadAll(); !status.ok()) return status;
  return store;
}

std::string VoiceStore::PathFor(std::string_view id) const {
  return (fs::path(config_.dir) / (std::string(id) + std::string(kSuffix))).string();
}

absl::Status VoiceStore::LoadAll() {
  auto entries = OpenStoreDirectory(config_.dir, "voices.dir", "voices");
  if (!entries.ok()) return entries.status();
  std::vector<StoredVoice> loaded;
  std::error_code ec;
  for (const fs::directory_entry& entry : *entries) {
    const std::string file = entry.path().filename().string();
    const bool named_like_voice = file.size() > kSuffix.size() && file.ends_with(kSuffix) &&
                                  IsVoiceId(file.substr(0, file.size() - kSuffix.size()));
    if (!named_like_voice || !entry.is_regular_file(ec)) {
      spdlog::warn("voices: skipping {}: not a voice file name", entry.path().string());
      continue;
    }
    auto bytes = ReadWhole(entry.path().string(), config_.max_bytes, "voices.max_bytes");
    auto decoded =
        bytes.ok() ? DecodeVoiceFile(*bytes) : absl::StatusOr<DecodedVoice>(bytes.status());
    if (!decoded.ok()) {
      spdlog::warn("voices: skipping {}: {}", entry.path().string(),
                   std::string(decoded.status().message()));
      continue;
    }
    if (decoded->metadata.id + std::string(kSuffix) != file) {
      spdlog::warn("voices: skipping {}: its id is {}", entry.path().string(),
                   decoded->metadata.id);
      continue;
    }
    loaded.push_back({std::move(decoded->metadata), bytes->size()});
  }
  std::sort(loaded.begin(), loaded.end(), [](const StoredVoice& a, const StoredVoice& b) {
    return std::tie(a.metadata.created_at, a.metadata.id) <
           std::tie(b.metadata.created_at, b.metadata.id);
  });
  std::lock_guard lock(mutex_);
  for (StoredVoice& voice : loaded) {
    // Bounds are checked on registration; files already here are kept even if the operator
    // lowered the limits (nothing is deleted behind their back), new ones are refused.
    const std::string id = voice.metadata.id, model = voice.metadata.model,
                      name = voice.metadata.name;
    if (!index_.Add(std::move(voice))) {  // oldest first: the oldest keeps a shared name
      spdlog::warn(
          "voices: {}: model {} already has a voice named like '{}'; it answers by its "
          "id only",
          id, model, name);
    }
  }
  spdlog::info("voices: {} cloned voice(s) in {} ({} bytes)", index_.size(), config_.dir,
               index_.total_bytes());
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<VoiceReservation>> VoiceStore::Reserve(std::string_view model,
                                                                      std::string_view name) {
  if (absl::Status status = ValidateVoiceName(name); !status.ok()) return status;
  std::lock_guard lock(mutex_);
  auto hold = index_.Reserve(model, name, config_.max_count);
  if (!hold.ok()) return hold.status();
  return std::unique_ptr<VoiceReservation>(new Reservation(this, *std::move(hold)));
}

absl::StatusOr<StoredVoice> VoiceStore::Commit(VoiceReservation& held, std::string_view model,
                                               std::string_view name, VoiceMetadata metadata,
                                               const engine::VoiceProfile& profile) {
  auto* mine = dynamic_cast<Reservation*>(&held);
  if (mine == nullptr || mine->store_ != this) {
    return core::Internal("voice store: a reservation of another store");
  }
  return Store(*mine, model, name, std::move(metadata), profile, /*keep_created_at=*/false);
}

absl::Status VoiceStore::Import(const VoiceMetadata& metadata,
                                const engine::VoiceProfile& profile) {
  if (!IsVoiceId(metadata.id)) {
    return core::InvalidArgument("not a voice id: " + core::Quoted(metadata.id));
  }
  if (absl::Status status = ValidateVoiceName(metadata.name); !status.ok()) return status;
  absl::StatusOr<VoiceIndex::Hold> hold;
  {
    std::lock_guard lock(mutex_);
    hold = index_.Reserve(metadata.model, metadata.name, config_.max_count, metadata.id);
  }
  if (!hold.ok()) return hold.status();
  Reservation reservation(this, *std::move(hold));
  auto stored = Store(reservation, metadata.model, metadata.name, metadata, profile,
                      /*keep_created_at=*/true);
  return stored.ok() ? absl::OkStatus() : stored.status();
}

absl::StatusOr<StoredVoice> VoiceStore::Store(Reservation& reservation, std::string_view model,
                                              std::string_view name, VoiceMetadata metadata,
                                              const engine::VoiceProfile& profile,
                                              bool keep_created_at) {
  if (reservation.committed_ || reservation.hold_.key != VoiceNameKey(model, name)) {
    return core::Internal("voice store: reservation does not match the voice");
  }
  metadata.id = reservation.id();
  metadata.model = std::string(model);
  metadata.name = std::string(name);
  if (!keep_created_at) {
    metadata.created_at = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
  }
  const std::string bytes = EncodeVoiceFile(metadata, profile);
  bool fail_before_rename = false;
  {
    std::lock_guard lock(mutex_);
    // Pending registrations are not counted in bytes (their size is unknown until now); two
    // racing past this check may together pass the bound by at most one profile each.
    if (index_.total_bytes() + bytes.size() > config_.max_bytes) {
      return core::InsufficientStorage(
          "the voice store is full (voices.max_bytes = " + std::to_string(config_.max_bytes) +
              "); delete a voice first",
          "voice_storage_full");
    }
    fail_before_rename = std::exchange(fail_before_rename_, false);
  }
  const std::string path = PathFor(metadata.id);
  if (fail_before_rename) {
    (void)WriteAndSync(TempPathFor(path), bytes);
    return core::Internal("voice store: simulated crash before rename");
  }
  if (absl::Status status = ReplaceDurably(path, bytes); !status.ok()) return status;
  std::error_code ec;
  if (absl::Status status = SyncDirectory(config_.dir); !status.ok()) {
    fs::remove(path, ec);
    return status;
  }
  StoredVoice stored{std::move(metadata), bytes.size()};
  std::lock_guard lock(mutex_);
  reservation.committed_ = true;
  index_.Release(reservation.hold_);
  index_.Add(stored);
  return stored;
}

absl::StatusOr<engine::VoiceProfile> VoiceStore::LoadProfile(std::string_view id) const {
  if (!Get(id))
    return core::NotFound("no cloned voice " + core::Quoted(id), "voice", "voice_not_found");
  auto bytes = ReadWhole(PathFor(id), config_.max_bytes, "voices.max_bytes");
  if (!bytes.ok())
    return core::Internal("voice " + std::string(id) + ": " +
                          std::string(bytes.status().message()));
  auto decoded = DecodeVoiceFile(*bytes);
  if (!decoded.ok()) {
    return core::Internal("voice " + std::string(id) + ": " +
                          std::string(decoded.status().message()));
  }
  return std::move(decoded->profile);
}

absl::Status VoiceStore::Delete(std::string_view id) {
  std::lock_guard lock(mutex_);
  if (!index_.Contains(id)) {
    return core::NotFound("no cloned voice " + core::Quoted(id), "voice_id", "voice_not_found");
  }
  // unlink is atomic: the name is gone or it is not. Done under the lock so a registration of
  // the same name cannot slip in between the file and the index disagreeing.
  if (::unlink(PathFor(id).c_str()) != 0 && errno != ENOENT) {
    return core::Internal("cannot delete voice " + std::string(id) + ": " + ErrnoText());
  }
  if (absl::Status status = SyncDirectory(config_.dir); !status.ok()) {
    spdlog::warn("voices: {}", std::string(status.message()));
  }
  index_.Remove(id);
  return absl::OkStatus();
}

}  // namespace voxserve::store
