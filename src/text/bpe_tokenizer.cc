#include "text/bpe_tokenizer.h"

#include <unicode/normalizer2.h>
#include <unicode/regex.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <functional>
#include <mutex>
#include <queue>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "core/error.h"
#include "text/bpe_files.h"
#include "text/byte_level.h"
#include "text/utf8.h"

namespace voxserve::text {
namespace {

// Qwen2's pre-tokenizer (HF tokenization_qwen2.py PRETOKENIZE_REGEX, the same Split pattern in
// Qwen2's tokenizer.json). python3-regex's and Oniguruma's \s (HF slow and fast) are the
// White_Space property; ICU's documentation defines its \s as [\t\n\f\r\p{Z}], which lacks
// U+000B and U+0085 (ICU 72 in fact matches White_Space: the test case "vt_nel" passes either
// way), so \s is spelled \p{White_Space} and \S \P{White_Space} to say what is meant.
constexpr char16_t kPreTokenizePattern[] =
    u"(?i:'s|'t|'re|'ve|'m|'ll|'d)"
    u"|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+"
    u"|\\p{N}"
    u"| ?[^\\p{White_Space}\\p{L}\\p{N}]+[\\r\\n]*"
    u"|\\p{White_Space}*[\\r\\n]+"
    u"|\\p{White_Space}+(?!\\P{White_Space})"
    u"|\\p{White_Space}+";

// Pre-tokens up to this many bytes have their merges cached: words repeat, long runs do not.
constexpr std::size_t kMaxCachedPieceBytes = 64;
// Bound on cached pieces (about 1 MB); a full cache is emptied rather than grown.
constexpr std::size_t kCacheCapacity = 16384;

struct Merge {
  int32_t rank;
  int32_t merged_id;
};

uint64_t PairKey(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

// Debian's Abseil has its own string_view, so heterogeneous lookups need one of those.
absl::string_view Key(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// A node of the byte trie of added tokens.
struct TrieNode {
  std::vector<std::pair<unsigned char, int32_t>> children;
  int32_t token = -1;  // index into added tokens when a token ends here
};

}  // namespace

struct Qwen2Tokenizer::Impl {
  std::array<int32_t, 256> byte_id{};
  absl::flat_hash_map<std::string, int32_t> vocab;  // raw bytes -> id
  std::vector<std::string> id_bytes;                // id -> raw bytes (vocabulary ids)
  std::vector<int32_t> id_added;                    // id -> index into added, or -1
  absl::flat_hash_map<uint64_t, Merge> merges;
  std::vector<AddedToken> added;
  absl::flat_hash_map<std::string, int32_t> added_ids;  // content -> id
  std::vector<TrieNode> trie{1};
  std::unique_ptr<icu::RegexPattern> pattern;
  const icu::Normalizer2* nfc = nullptr;

  mutable std::mutex cache_mutex;
  mutable absl::flat_hash_map<std::string, std::vector<int32_t>> cache;

  void AddToTrie(std::string_view content, int32_t index) {
    int32_t node = 0;
    for (char ch : content) {
      const auto byte = static_cast<unsigned char>(ch);
      int32_t next = -1;
      for (const auto& [b, child] : trie[node].children) {
        if (b == byte) next = child;
      }
      if (next < 0) {
        next = static_cast<int32_t>(trie.size());
        trie[node].children.emplace_back(byte, next);
        trie.emplace_back();
      }
      node = next;
    }
    trie[node].token = index;
  }

  // Length of the longest added token at the start of `text`, and its index; {0, -1} if none.
  std::pair<std::size_t, int32_t> LongestAddedAt(std::string_view text) const {
    std::pair<std::size_t, int32_t> best{0, -1};
    int32_t node = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      int32_t next = -1;
      for (const auto& [b, child] : trie[node].children) {
        if (b == static_cast<unsigned char>(text[i])) next = child;
      }
      if (next < 0) break;
      node = next;
      if (trie[node].token >= 0) best = {i + 1, trie[node].token};
    }
    return best;
  }

  // BPE of one pre-token: start from single bytes and apply the lowest-ranked merge first
  // (leftmost among equals) until none applies, as HF's fast BPE (Word::merge_all) does. A
  // heap of candidate pairs over a linked list of symbols keeps this O(n log n) in the piece.
  void MergePiece(std::string_view bytes, std::vector<int32_t>* out) const {
    struct Symbol {
      int32_t id;
      int32_t prev;
      int32_t next;
    };
    struct Candidate {
      int32_t rank, pos, left, right, merged;
      bool operator>(const Candidate& o) const {
        return rank != o.rank ? rank > o.rank : pos > o.pos;
      }
    };
    const auto n = static_cast<int32_t>(bytes.size());
    std::vector<Symbol> symbols(bytes.size());
    for (int32_t i = 0; i < n; ++i) {
      symbols[i] = {byte_id[static_cast<unsigned char>(bytes[i])], i - 1, i + 1 < n ? i + 1 : -1};
    }
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
    auto consider = [&](int32_t pos) {
      const int32_t right = symbols[pos].next;
      if (right < 0) return;
      const auto it = merges.find(PairKey(symbols[pos].id, symbols[right].id));
      if (it == merges.end()) return;
      heap.push({it->second.rank, pos, symbols[pos].id, symbols[right].id, it->second.merged_id});
    };
    for (int32_t i = 0; i + 1 < n; ++i) consider(i);
    while (!heap.empty()) {
      const Candidate top = heap.top();
      heap.pop();
      Symbol& left = symbols[top.pos];
      // Stale: the left symbol was merged away or grew, or its right neighbour changed.
      if (left.id != top.left || left.next < 0 || symbols[left.next].id != top.right) continue;
      Symbol& right = symbols[left.next];
      left.id = top.merged;
      left.next = right.next;
      if (right.next >= 0) symbols[right.next].prev = top.pos;
      right.id = -1;
      if (left.prev >= 0) consider(left.prev);
      consider(top.pos);
    }
    for (int32_t i = 0; i >= 0 && i < n; i = symbols[i].next) out->push_back(symbols[i].id);
  }

  void EncodePiece(std::string_view bytes, std::vector<int32_t>* out) const {
    if (bytes.size() == 1) {
      out->push_back(byte_id[static_cast<unsigned char>(bytes[0])]);
      return;
    }
    const bool cacheable = bytes.size() <= kMaxCachedPieceBytes;
    if (cacheable) {
      std::lock_guard<std::mutex> lock(cache_mutex);
      const auto it = cache.find(Key(bytes));
      if (it != cache.end()) {
        out->insert(out->end(), it->second.begin(), it->second.end());
        return;
      }
    }
    const std::size_t first = out->size();
    MergePiece(bytes, out);
    if (cacheable) {
      std::vector<int32_t> ids(out->begin() + static_cast<std::ptrdiff_t>(first), out->end());
      std::lock_guard<std::mutex> lock(cache_mutex);
      if (cache.size() >= kCacheCapacity) cache.clear();
      cache.emplace(std::string(bytes), std::move(ids));
    }
  }

  // Text between added tokens: NFC, pre-tokenize, BPE each pre-token.
  absl::Status EncodePlain(std::string_view utf8, std::vector<int32_t>* out) const {
    UErrorCode status = U_ZERO_ERROR;
    icu::UnicodeString text = icu::UnicodeString::fromUTF8(
        icu::StringPiece(utf8.data(), static_cast<int32_t>(utf8.size())));
    if (!nfc->isNormalized(text, status)) text = nfc->normalize(text, status);
    if (U_FAILURE(status)) {
      return core::Internal(absl::StrFormat("NFC normalization failed: %s", u_errorName(status)));
    }
    std::unique_ptr<icu::RegexMatcher> matcher(pattern->matcher(text, status));
    if (U_FAILURE(status)) {
      return core::Internal(absl::StrFormat("pre-tokenizer: %s", u_errorName(status)));
    }
    std::string piece;
    int32_t done = 0;
    auto emit = [&](int32_t start, int32_t end) {
      piece.clear();
      text.tempSubStringBetween(start, end).toUTF8String(piece);
      EncodePiece(piece, out);
    };
    while (matcher->find(status)) {
      const int32_t start = matcher->start(status);
      const int32_t end = matcher->end(status);
      if (start > done) emit(done, start);  // the pattern covers every character; never taken
      emit(start, end);
      done = end;
    }
    if (U_FAILURE(status)) {
      return core::InvalidArgument(
          absl::StrFormat("text could not be pre-tokenized (ICU regex: %s)", u_errorName(status)));
    }
    if (done < text.length()) emit(done, text.length());
    return absl::OkStatus();
  }
};

Qwen2Tokenizer::Qwen2Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Qwen2Tokenizer::~Qwen2Tokenizer() = default;

// Everything both entry points share, once vocab.json is read (`id_bytes`: id -> raw bytes).
absl::StatusOr<std::unique_ptr<Qwen2Tokenizer::Impl>> Qwen2Tokenizer::Build(
    std::vector<std::string> id_bytes, std::string_view vocab_where,
    std::vector<std::pair<std::string, std::string>> merges, std::string_view merges_where,
    std::vector<AddedToken> added_tokens, std::span<const std::string_view> extra_special_tokens) {
  auto impl = std::make_unique<Impl>();
  impl->id_bytes = std::move(id_bytes);
  const auto base_size = static_cast<int32_t>(impl->id_bytes.size());
  impl->vocab.reserve(impl->id_bytes.size());
  for (int32_t id = 0; id < base_size; ++id) impl->vocab.emplace(impl->id_bytes[id], id);
  for (int b = 0; b < 256; ++b) {
    const auto it = impl->vocab.find(std::string(1, static_cast<char>(b)));
    if (it == impl->vocab.end()) {
      return core::InvalidArgument(absl::StrFormat(
          "%s: the single-byte token for byte 0x%02X ('%s') is missing; a byte-level vocabulary "
          "holds all 256",
          vocab_where, b, BytesToByteLevel(std::string(1, static_cast<char>(b)))));
    }
    impl->byte_id[b] = it->second;
  }

  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const auto l = impl->vocab.find(left);
    const auto r = impl->vocab.find(right);
    const auto m = impl->vocab.find(left + right);
    if (l == impl->vocab.end() || r == impl->vocab.end() || m == impl->vocab.end()) {
      return core::InvalidArgument(
          absl::StrFormat("%s: merge %d ('%s %s') names a token that vocab.json lacks",
                          merges_where, rank + 1, BytesToByteLevel(left), BytesToByteLevel(right)));
    }
    // A repeated merge keeps its last rank, as both HF tokenizers do (they build a dict).
    impl->merges[PairKey(l->second, r->second)] = {static_cast<int32_t>(rank), m->second};
  }

  // add_special_tokens() (HF): a token already added only becomes special; one that is a whole
  // vocabulary token keeps that id; a new one takes the next id (the current size), in order.
  int32_t next_id = base_size;
  for (const AddedToken& token : added_tokens) next_id = std::max(next_id, token.id + 1);
  for (std::string_view content : extra_special_tokens) {
    bool known = false;
    for (AddedToken& token : added_tokens) {
      if (token.content == content) {
        token.special = true;
        known = true;
      }
    }
    if (known) continue;
    const auto in_vocab = impl->vocab.find(Key(content));
    added_tokens.push_back(
        {std::string(content), in_vocab != impl->vocab.end() ? in_vocab->second : next_id++, true});
  }

  // Added ids may reuse vocabulary ids, follow them, or leave a gap, as HF's added_tokens_decoder
  // allows (CosyVoice's random-weight bundles keep the real ids 151643.. over a 256-byte
  // vocabulary, so the embedding table keeps its real height). Ids in a gap decode as "not
  // assigned". The id tables are sized by the largest id, so ids past kMaxTokenId (8x the
  // largest vocabulary in use, Gemma's 256k) are a broken config, not a vocabulary.
  constexpr int64_t kMaxTokenId = 1 << 21;
  const auto limit = std::max<int64_t>(
      static_cast<int64_t>(base_size) + static_cast<int64_t>(added_tokens.size()), kMaxTokenId);
  int32_t size = base_size;
  for (const AddedToken& token : added_tokens) {
    if (token.content.empty() || !ValidateUtf8(token.content, "added token").ok()) {
      return core::InvalidArgument("an added token is empty or not valid UTF-8");
    }
    if (token.id < 0 || token.id >= limit) {
      return core::InvalidArgument(absl::StrFormat(
          "added token '%s' has id %d; ids run 0..%d",
          token.content, token.id, limit - 1));
    }
    if (!impl->added_ids.emplace(token.content, token.id).second) {
      return core::InvalidArgument(
          absl::StrFormat("added token '%s' appears twice", token.content));
    }
    size = std::max(size, token.id + 1);
  }
  impl->id_added.assign(static_cast<std::size_t>(size), -1);
  for (const AddedToken& token : added_tokens) {
    int32_t& slot = impl->id_added[static_cast<std::size_t>(token.id)];
    if (slot >= 0) {
      return core::InvalidArgument(absl::StrFormat("added tokens '%s' and '%s' share id %d",
                                                   impl->added[slot].content, token.content,
                                                   token.id));
    }
    slot = static_cast<int32_t>(impl->added.size());
    impl->AddToTrie(token.content, slot);
    impl->added.push_back(token);
  }
  impl->id_bytes.resize(static_cast<std::size_t>(size));

  UErrorCode status = U_ZERO_ERROR;
  impl->nfc = icu::Normalizer2::getNFCInstance(status);
  UParseError parse_error;
  impl->pattern.reset(
      icu::RegexPattern::compile(icu::UnicodeString(kPreTokenizePattern), 0, parse_error, status));
  if (U_FAILURE(status)) {
    return core::Internal(
        absl::StrFormat("ICU could not build the pre-tokenizer: %s", u_errorName(status)));
  }
  return impl;
}

absl::StatusOr<std::unique_ptr<Qwen2Tokenizer>> Qwen2Tokenizer::FromText(
    std::string_view vocab_json, std::string_view merges_txt, std::vector<AddedToken> added_tokens,
    std::span<const std::string_view> extra_special_tokens) {
  return FromText(vocab_json, "vocab.json", merges_txt, "merges.txt", std::move(added_tokens),
                  extra_special_tokens);
}

absl::StatusOr<std::unique_ptr<Qwen2Tokenizer>> Qwen2Tokenizer::FromText(
    std::string_view vocab_json, std::string_view vocab_where, std::string_view merges_txt,
    std::string_view merges_where, std::vector<AddedToken> added_tokens,
    std::span<const std::string_view> extra_special_tokens) {
  auto vocab = ParseBpeVocab(vocab_json, vocab_where);
  if (!vocab.ok()) return vocab.status();
  auto merges = ParseBpeMerges(merges_txt, merges_where);
  if (!merges.ok()) return merges.status();
  auto impl = Build(std::move(*vocab), vocab_where, std::move(*merges), merges_where,
                    std::move(added_tokens), extra_special_tokens);
  if (!impl.ok()) return impl.status();
  return std::unique_ptr<Qwen2Tokenizer>(new Qwen2Tokenizer(std::move(*impl)));
}

absl::StatusOr<std::unique_ptr<Qwen2Tokenizer>> Qwen2Tokenizer::Load(
    const std::string& vocab_json_path, const std::string& merges_txt_path,
    std::vector<AddedToken> added_tokens) {
  auto vocab = ReadTokenizerFile(vocab_json_path);
  if (!vocab.ok()) return vocab.status();
  auto merges = ReadTokenizerFile(merges_txt_path);
  if (!merges.ok()) return merges.status();
  return FromText(*vocab, vocab_json_path, *merges, merges_txt_path, std::move(added_tokens), {});
}

absl::StatusOr<std::unique_ptr<Qwen2Tokenizer>> Qwen2Tokenizer::Create(
    const std::string& directory, std::span<const std::string_view> extra_special_tokens) {
  std::vector<AddedToken> added;
  const std::string config_path = directory + "/tokenizer_config.json";
  if (std::ifstream(config_path).good()) {
    auto config = ReadTokenizerFile(config_path);
    if (!config.ok()) return config.status();
    auto parsed = ParseAddedTokensDecoder(*config, config_path);
    if (!parsed.ok()) return parsed.status();
    added = std::move(*parsed);
  }
  const std::string vocab_path = directory + "/vocab.json";
  const std::string merges_path = directory + "/merges.txt";
  auto vocab = ReadTokenizerFile(vocab_path);
  if (!vocab.ok()) return vocab.status();
  auto merges = ReadTokenizerFile(merges_path);
  if (!merges.ok()) return merges.status();
  return FromText(*vocab, vocab_path, *merges, merges_path, std::move(added), extra_special_tokens);
}

absl::StatusOr<std::vector<int32_t>> Qwen2Tokenizer::Encode(std::string_view utf8) const {
  if (absl::Status valid = ValidateUtf8(utf8, "text"); !valid.ok()) return valid;
  std::vector<int32_t> ids;
  ids.reserve(utf8.size() / 3 + 1);
  std::size_t plain_start = 0;
  std::size_t i = 0;
  while (i < utf8.size()) {
    const auto [length, index] = impl_->LongestAddedAt(utf8.substr(i));
    if (index < 0) {
      ++i;
      continue;
    }
    if (plain_start < i) {
      if (absl::Status s = impl_->EncodePlain(utf8.substr(plain_start, i - plain_start), &ids);
          !s.ok()) {
        return s;
      }
    }
    ids.push_back(impl_->added[static_cast<std::size_t>(index)].id);
    i += length;
    plain_start = i;
  }
  if (plain_start < utf8.size()) {
    if (absl::Status s = impl_->EncodePlain(utf8.substr(plain_start), &ids); !s.ok()) return s;
  }
  return ids;
}

absl::StatusOr<std::string> Qwen2Tokenizer::Decode(std::span<const int32_t> ids,
                                                   bool skip_special_tokens) const {
  std::string bytes;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) {
      return core::InvalidArgument(
          absl::StrFormat("token id %d is outside the vocabulary (0..%d)", id, vocab_size() - 1));
    }
    const int32_t added = impl_->id_added[static_cast<std::size_t>(id)];
    if (added >= 0) {
      const AddedToken& token = impl_->added[static_cast<std::size_t>(added)];
      if (!(skip_special_tokens && token.special)) bytes += token.content;
    } else if (static_cast<std::size_t>(id) < impl_->id_bytes.size() &&
               !impl_->id_bytes[static_cast<std::size_t>(id)].empty()) {
      bytes += impl_->id_bytes[static_cast<std::size_t>(id)];
    } else {
      return core::InvalidArgument(absl::StrFormat("token id %d is not assigned", id));
    }
  }
  return DecodeUtf8Lossy(bytes);
}

std::optional<int32_t> Qwen2Tokenizer::TokenId(std::string_view token) const {
  if (const auto it = impl_->added_ids.find(Key(token)); it != impl_->added_ids.end()) {
    return it->second;
  }
  const std::optional<std::string> bytes = ByteLevelToBytes(token);
  if (!bytes) return std::nullopt;
  const auto it = impl_->vocab.find(*bytes);
  if (it == impl_->vocab.end()) return std::nullopt;
  return it->second;
}

int32_t Qwen2Tokenizer::vocab_size() const { return static_cast<int32_t>(impl_->id_added.size()); }

std::span<const AddedToken> Qwen2Tokenizer::added_tokens() const { return impl_->added; }

}  // namespace voxserve::text
