// Which pronunciation dictionaries a request speaks with (docs/pronunciation-dictionaries.md):
// the ones its locators name (ElevenLabs' pronunciation_dictionary_locators, on every API), in
// the order given, then its model's own lexicon files (models[].lexicons). Owns the store of
// dictionaries managed through the API and the thread its writes run on.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "service/synthesis_request.h"
#include "store/dictionary_backend.h"
#include "store/voice_backend.h"
#include "text/lexicon/lexicon.h"

namespace voxserve::service {

// ElevenLabs accepts 3 locators per request; so does voxserve.
inline constexpr size_t kMaxDictionaryLocators = 3;

struct RequestLexicons {
  std::vector<std::shared_ptr<const text::lexicon::Lexicon>> lexicons;  // precedence order
  // "pd_…@pdv_…" per locator, for the response cache's key (ResponseCacheKey::markup_version);
  // a version never changes, so the key names exactly the rules that were applied.
  std::string fingerprint;
  std::vector<std::string> cache_tags;  // DictionaryTag of each locator's dictionary

  bool empty() const { return lexicons.empty(); }
};

// The response cache's tag of what a dictionary's rules made.
std::string DictionaryTag(std::string_view id);

class PronunciationDictionaries {
 public:
  // Loads every model's lexicon files (`lexicon_files`: model id → paths; InvalidArgument
  // naming the file and what is wrong with it) and opens the store when `config.enabled()`: its
  // directory, or (dictionaries.backend postgres) the database `voices` names in
  // voices.postgres.*.
  static absl::StatusOr<std::unique_ptr<PronunciationDictionaries>> Create(
      const store::DictionaryStoreConfig& config, const store::VoiceStoreConfig& voices,
      const std::map<std::string, std::vector<std::string>>& lexicon_files);
  ~PronunciationDictionaries();  // finishes the writes under way

  // The lexicons for a request of `model_id`: NotFound "dictionary_not_found" /
  // "dictionary_version_not_found" naming the locator, InvalidArgument "too_many_dictionaries"
  // past kMaxDictionaryLocators, Unimplemented "dictionaries_off" for a locator when the store
  // is off. Answers from memory: safe on I/O threads.
  absl::StatusOr<RequestLexicons> ForRequest(const std::vector<DictionaryLocator>& locators,
                                             const std::string& model_id) const;

  // Null when the store is off (dictionaries.dir unset with the dir backend).
  store::DictionaryBackend* store() { return store_.get(); }
  const store::DictionaryBackend* store() const { return store_.get(); }
  // Runs `write` on the store's own thread (the store's writes wait for the disk: never on an I/O
  // thread). Writes run one at a time, in order.
  void RunWrite(std::function<void()> write);
  // The error for the API while the store is off (Unimplemented, "dictionaries_off").
  static absl::Status Off();

 private:
  std::unique_ptr<store::DictionaryBackend> store_;
  std::map<std::string, std::vector<std::shared_ptr<const text::lexicon::Lexicon>>, std::less<>>
      model_lexicons_;
  boost::asio::thread_pool writes_{1};
};

}  // namespace voxserve::service
