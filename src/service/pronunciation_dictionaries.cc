#include "service/pronunciation_dictionaries.h"

#include <boost/asio/post.hpp>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "store/open_backends.h"

namespace voxserve::service {
namespace {

absl::StatusOr<text::lexicon::Lexicon> ReadLexiconFile(const std::string& model,
                                                       const std::string& path,
                                                       const text::lexicon::LexiconLimits& limits) {
  const std::string where = "models[" + model + "].lexicons: " + path;
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::InvalidArgument(where + ": cannot be read", "lexicons");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  auto lexicon = text::lexicon::ParseLexicon(bytes.str(), limits);
  if (!lexicon.ok()) {
    return core::InvalidArgument(where + ": " + std::string(lexicon.status().message()), "lexicons",
                                 "invalid_dictionary");
  }
  return lexicon;
}

}  // namespace

std::string DictionaryTag(std::string_view id) { return "dictionary:" + std::string(id); }

absl::StatusOr<std::unique_ptr<PronunciationDictionaries>> PronunciationDictionaries::Create(
    const store::DictionaryStoreConfig& config, const store::VoiceStoreConfig& voices,
    const std::map<std::string, std::vector<std::string>>& lexicon_files) {
  auto dictionaries = std::make_unique<PronunciationDictionaries>();
  for (const auto& [model, paths] : lexicon_files) {
    for (const std::string& path : paths) {
      auto lexicon = ReadLexiconFile(model, path, config.limits);
      if (!lexicon.ok()) return lexicon.status();
      dictionaries->model_lexicons_[model].push_back(
          std::make_shared<const text::lexicon::Lexicon>(*std::move(lexicon)));
    }
  }
  auto store = store::OpenDictionaryBackend(config, voices);
  if (!store.ok()) return store.status();
  dictionaries->store_ = *std::move(store);
  return dictionaries;
}

PronunciationDictionaries::~PronunciationDictionaries() { writes_.join(); }

absl::Status PronunciationDictionaries::Off() {
  return core::MakeError(absl::StatusCode::kUnimplemented,
                         "pronunciation dictionaries are off on this server (set "
                         "dictionaries.dir, or dictionaries.backend postgres, to enable them)",
                         "pronunciation_dictionary_locators", "dictionaries_off");
}

absl::StatusOr<RequestLexicons> PronunciationDictionaries::ForRequest(
    const std::vector<DictionaryLocator>& locators, const std::string& model_id) const {
  constexpr const char* kField = "pronunciation_dictionary_locators";
  RequestLexicons out;
  if (locators.size() > kMaxDictionaryLocators) {
    return core::InvalidArgument(std::string(kField) + " holds " + std::to_string(locators.size()) +
                                     " locators; at most " +
                                     std::to_string(kMaxDictionaryLocators) + " are allowed",
                                 kField, "too_many_dictionaries");
  }
  if (!locators.empty() && !store_) return Off();
  for (size_t i = 0; i < locators.size(); ++i) {
    auto version = store_->Version(locators[i].id, locators[i].version_id);
    if (!version.ok()) {
      const core::ErrorDetail detail = core::DetailOf(version.status());
      return core::NotFound(std::string(kField) + "[" + std::to_string(i) +
                                "]: " + std::string(version.status().message()),
                            kField, detail.code.empty() ? "dictionary_not_found" : detail.code);
    }
    out.lexicons.push_back(version->lexicon);
    out.fingerprint += locators[i].id + "@" + version->version_id + ";";
    out.cache_tags.push_back(DictionaryTag(locators[i].id));
  }
  if (auto it = model_lexicons_.find(model_id); it != model_lexicons_.end()) {
    out.lexicons.insert(out.lexicons.end(), it->second.begin(), it->second.end());
  }
  return out;
}

void PronunciationDictionaries::RunWrite(std::function<void()> write) {
  boost::asio::post(writes_, std::move(write));
}

}  // namespace voxserve::service
