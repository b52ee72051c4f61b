#include "text/ssml/ssml_document.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "text/ssml/say_as.h"
#include "text/xml_reader.h"

namespace voxserve::text::ssml {
namespace {

constexpr std::string_view kWrapOpen = "<speak>";
constexpr std::string_view kWrapClose = "</speak>";

bool IsXmlSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view SkipXmlSpace(std::string_view text) {
  while (!text.empty() && IsXmlSpace(text.front())) text.remove_prefix(1);
  return text;
}

// After an optional XML declaration: what the document starts with.
std::string_view AfterDeclaration(std::string_view text) {
  text = SkipXmlSpace(text);
  if (text.starts_with("<?xml")) {
    const size_t end = text.find("?>");
    if (end == std::string_view::npos) return text;
    text = SkipXmlSpace(text.substr(end + 2));
  }
  return text;
}

bool StartsWithSpeak(std::string_view text) {
  if (!text.starts_with("<speak")) return false;
  if (text.size() == 6) return true;
  const char next = text[6];
  return next == '>' || next == '/' || IsXmlSpace(next);
}

std::optional<double> ParseNumber(std::string_view text) {
  double value = 0;
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// Breaks by strength, in seconds: Azure's documented values (x-weak 250 ms ... x-strong
// 1250 ms; "medium", the default of a bare <break/>, 750 ms).
std::optional<double> StrengthSeconds(std::string_view strength) {
  if (strength == "none") return 0.0;
  if (strength == "x-weak") return 0.25;
  if (strength == "weak") return 0.5;
  if (strength == "medium") return 0.75;
  if (strength == "strong") return 1.0;
  if (strength == "x-strong") return 1.25;
  return std::nullopt;
}

// "500ms", "1.5s" (SSML 1.1's time designation; a unit is required).
std::optional<double> TimeSeconds(std::string_view time) {
  double scale = 1.0;
  if (time.ends_with("ms")) {
    scale = 0.001;
    time.remove_suffix(2);
  } else if (time.ends_with("s")) {
    time.remove_suffix(1);
  } else {
    return std::nullopt;
  }
  std::optional<double> value = ParseNumber(time);
  if (!value || *value < 0) return std::nullopt;
  return *value * scale;
}

// A relative change "+10%" / "-20%" as a factor; nullopt when `text` is not one.
std::optional<double> RelativePercent(std::string_view text) {
  if (text.size() < 3 || (text.front() != '+' && text.front() != '-') || !text.ends_with("%")) {
    return std::nullopt;
  }
  std::optional<double> value = ParseNumber(text.substr(1, text.size() - 2));
  if (!value) return std::nullopt;
  return 1.0 + (text.front() == '-' ? -*value : *value) / 100.0;
}

// Rate keywords as factors of the voice's natural rate (SSML leaves the values to the
// processor; these are close to Azure's and Google's).
std::optional<double> ParseRate(std::string_view rate) {
  if (rate == "x-slow") return 0.5;
  if (rate == "slow") return 0.75;
  if (rate == "medium" || rate == "default") return 1.0;
  if (rate == "fast") return 1.25;
  if (rate == "x-fast") return 1.75;
  std::optional<double> factor = RelativePercent(rate);
  if (!factor && rate.ends_with("%")) {  // SSML 1.1: "50%" is half the default rate
    std::optional<double> value = ParseNumber(rate.substr(0, rate.size() - 1));
    if (value) factor = *value / 100.0;
  }
  if (!factor) factor = ParseNumber(rate);  // a plain factor, as Azure takes
  if (!factor || *factor <= 0) return std::nullopt;
  return factor;
}

std::optional<double> ParsePitch(std::string_view pitch) {
  if (pitch == "x-low") return 0.6;
  if (pitch == "low") return 0.8;
  if (pitch == "medium" || pitch == "default") return 1.0;
  if (pitch == "high") return 1.2;
  if (pitch == "x-high") return 1.4;
  if (std::optional<double> factor = RelativePercent(pitch); factor && *factor > 0) return factor;
  if (pitch.size() > 3 && (pitch.front() == '+' || pitch.front() == '-') && pitch.ends_with("st")) {
    std::optional<double> semitones = ParseNumber(pitch.substr(1, pitch.size() - 3));
    if (!semitones) return std::nullopt;
    return std::pow(2.0, (pitch.front() == '-' ? -*semitones : *semitones) / 12.0);
  }
  return std::nullopt;
}

std::optional<double> ParseVolumeDb(std::string_view volume) {
  if (volume == "silent") return kSilentDb;
  if (volume == "x-soft") return -12.0;
  if (volume == "soft") return -6.0;
  if (volume == "medium" || volume == "default") return 0.0;
  if (volume == "loud") return 6.0;
  if (volume == "x-loud") return 12.0;
  if (volume.size() > 3 && (volume.front() == '+' || volume.front() == '-') &&
      volume.ends_with("dB")) {
    std::optional<double> db = ParseNumber(volume.substr(1, volume.size() - 3));
    if (!db) return std::nullopt;
    return volume.front() == '-' ? -*db : *db;
  }
  if (std::optional<double> factor = RelativePercent(volume); factor && *factor >= 0) {
    return *factor == 0 ? kSilentDb : 20.0 * std::log10(*factor);
  }
  return std::nullopt;
}

std::string PrimaryLanguage(std::string_view tag) {
  std::string primary(tag.substr(0, tag.find_first_of("-_")));
  for (char& c : primary) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return primary;
}

// One open element and what it does to the text inside it.
struct Frame {
  enum class Role {
    kSpoken,   // its text is spoken (speak, p, s, prosody, voice, unknown elements, ...)
    kSilent,   // its content is not speech (metadata, desc, lexicon)
    kSayAs,    // text collected, spoken expanded at its end
    kSub,      // content replaced by the alias
    kPhoneme,  // content spoken as the IPA in ph
  };
  Role role = Role::kSpoken;
  double rate = 1.0;
  double pitch = 1.0;
  double volume_db = 0.0;
  std::string voice;
  std::string language;
  bool boundary = false;  // <s> or <p>: a sentence boundary at either end
  SayAs say_as;
  std::string alias;
  std::string phonemes;
  std::string collected;
  // Namespace prefixes this element declares (xmlns:p="uri"), with their URIs.
  std::vector<std::pair<std::string, std::string>> prefixes;
};

class Parser : public XmlHandler {
 public:
  Parser(const ParseOptions& options, size_t wrap_shift)
      : options_(options), wrap_shift_(wrap_shift) {}

  absl::StatusOr<std::vector<SpeechItem>> Run(std::string_view document) {
    if (document.size() > static_cast<size_t>(INT32_MAX)) {
      return core::PayloadTooLarge("SSML document too large", options_.field);
    }
    XmlReader reader(
        "SSML", [this](const std::string& message, XmlPosition at) { return Error(message, at); });
    reader_ = &reader;
    absl::Status status = reader.Read(document, *this);
    reader_ = nullptr;
    if (!status.ok()) return status;
    return std::move(items_);
  }

 private:
  void OnStart(std::string_view name, const char** attributes) override { Start(name, attributes); }
  void OnEnd(std::string_view /*name*/) override { End(); }
  void OnText(std::string_view text) override { Text(text); }

  // "... at line L, column C": in the client's text (a wrapper added around a fragment is not
  // counted).
  absl::Status Error(const std::string& message, XmlPosition at) const {
    uint64_t column = at.column;
    if (at.line == 1) column = column > wrap_shift_ ? column - wrap_shift_ : 1;
    return core::InvalidArgument(
        message + " at line " + std::to_string(at.line) + ", column " + std::to_string(column),
        options_.field, "invalid_ssml");
  }

  void Fail(const std::string& message) { reader_->Fail(message); }
  bool Failed() const { return reader_->failed(); }

  static std::optional<std::string_view> Attribute(const char** attributes, std::string_view key) {
    return XmlReader::Attribute(attributes, key);
  }

  bool InSilent() const {
    for (const Frame& frame : stack_) {
      if (frame.role == Frame::Role::kSilent) return true;
    }
    return false;
  }

  // The innermost element collecting its text (say-as, sub, phoneme), or null.
  Frame* Collector() {
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      if (it->role != Frame::Role::kSpoken && it->role != Frame::Role::kSilent) return &*it;
    }
    return nullptr;
  }

  void Start(std::string_view qualified_name, const char** attributes) {
    if (Failed()) return;
    if (static_cast<int>(stack_.size()) >= options_.max_depth) {
      return Fail("SSML nested deeper than " + std::to_string(options_.max_depth) + " elements");
    }
    Frame frame;
    std::string_view name;
    if (!ResolveName(qualified_name, attributes, frame, name)) return;  // failed
    if (stack_.empty() && name != "speak") {
      return Fail("the root element must be <speak>, not <" + std::string(qualified_name) + ">");
    }
    if (!stack_.empty()) {
      const Frame& parent = stack_.back();
      frame.rate = parent.rate;
      frame.pitch = parent.pitch;
      frame.volume_db = parent.volume_db;
      frame.voice = parent.voice;
      frame.language = parent.language;
      if (parent.role == Frame::Role::kSilent) frame.role = Frame::Role::kSilent;
    } else {
      frame.language = options_.language;
    }
    if (auto lang = Attribute(attributes, "xml:lang")) frame.language = PrimaryLanguage(*lang);
    if (frame.role != Frame::Role::kSilent) {
      if (!Configure(name, attributes, frame)) return;  // failed
    }
    if (frame.boundary) boundary_ = true;
    stack_.push_back(std::move(frame));
  }

  // XML Namespaces, so that no element is skipped without a word. A default namespace, where
  // one is set, must be SSML's. A prefixed element is SSML's own when its prefix is declared
  // with SSML's namespace (<s:break xmlns:s="...synthesis">); a prefix bound elsewhere or not
  // declared names a vendor element, transparent (Amazon Polly's <amazon:effect> is written
  // without a declaration), unless it carries the name of an SSML element: "<x:break>" is no
  // break, and is refused rather than ignored. Sets `local` to the name to act on.
  bool ResolveName(std::string_view name, const char** attributes, Frame& frame,
                   std::string_view& local) {
    static constexpr std::string_view kSsmlNamespace = "http://www.w3.org/2001/10/synthesis";
    for (const char** a = attributes; a != nullptr && *a != nullptr; a += 2) {
      const std::string_view attribute = a[0];
      if (attribute == "xmlns" && std::string_view(a[1]) != kSsmlNamespace) {
        Fail("<" + std::string(name) + "> is in namespace " + core::Quoted(a[1]) +
             ", not SSML's (" + std::string(kSsmlNamespace) + ")");
        return false;
      }
      if (attribute.starts_with("xmlns:")) {
        frame.prefixes.emplace_back(attribute.substr(6), a[1]);
      }
    }
    local = name;
    const size_t colon = name.find(':');
    if (colon == std::string_view::npos) return true;
    const std::string_view prefix = name.substr(0, colon);
    std::optional<std::string_view> uri;
    auto find = [&](const Frame& f) {
      for (const auto& [declared, bound] : f.prefixes) {
        if (declared == prefix) uri = bound;
      }
    };
    for (const Frame& f : stack_) find(f);  // outermost first: the innermost declaration wins
    find(frame);
    if (uri == kSsmlNamespace) {
      local = name.substr(colon + 1);
      return true;
    }
    static constexpr std::string_view kSsmlElements[] = {
        "speak",    "p",     "s",      "paragraph", "sentence", "break",    "prosody",
        "emphasis", "voice", "say-as", "sub",       "phoneme",  "metadata", "desc",
        "lexicon",  "meta",  "lang",   "audio",     "mark"};
    const std::string_view suffix = name.substr(colon + 1);
    if (std::find(std::begin(kSsmlElements), std::end(kSsmlElements), suffix) !=
        std::end(kSsmlElements)) {
      Fail("<" + std::string(name) + "> is not SSML's <" + std::string(suffix) + ">: its prefix " +
           core::Quoted(prefix) +
           (uri ? " is bound to " + core::Quoted(*uri) : std::string(" is not declared")) +
           " (write <" + std::string(suffix) + ">)");
      return false;
    }
    return true;
  }

  // What element `name` does; false (after Fail) for an attribute it cannot take.
  bool Configure(std::string_view name, const char** attributes, Frame& frame) {
    auto bad = [&](std::string_view attribute, std::string_view value, std::string_view allowed) {
      Fail("<" + std::string(name) + "> " + std::string(attribute) + " " + core::Quoted(value) +
           " is not valid: " + std::string(allowed));
      return false;
    };
    if (name == "p" || name == "s" || name == "paragraph" || name == "sentence") {
      frame.boundary = true;
    } else if (name == "break") {
      double seconds = 0.75;
      if (auto time = Attribute(attributes, "time")) {
        std::optional<double> parsed = TimeSeconds(*time);
        if (!parsed) return bad("time", *time, "use e.g. \"500ms\" or \"1.5s\"");
        if (*parsed > options_.max_break_seconds) {
          return bad(
              "time", *time,
              "at most " + std::to_string(static_cast<int>(options_.max_break_seconds)) + " s");
        }
        seconds = *parsed;
      } else if (auto strength = Attribute(attributes, "strength")) {
        std::optional<double> parsed = StrengthSeconds(*strength);
        if (!parsed) {
          return bad("strength", *strength, "none, x-weak, weak, medium, strong or x-strong");
        }
        seconds = *parsed;
      }
      if (seconds > 0 && Collector() == nullptr) {
        SpeechItem item;
        item.kind = SpeechItem::Kind::kBreak;
        item.break_seconds = seconds;
        items_.push_back(std::move(item));
      }
    } else if (name == "prosody") {
      if (auto rate = Attribute(attributes, "rate")) {
        std::optional<double> factor = ParseRate(*rate);
        if (!factor) {
          return bad("rate", *rate,
                     "x-slow, slow, medium, fast, x-fast, a percentage (\"80%\", \"+10%\") or a "
                     "factor (\"1.2\")");
        }
        frame.rate *= *factor;
      }
      if (auto pitch = Attribute(attributes, "pitch")) {
        std::optional<double> factor = ParsePitch(*pitch);
        if (!factor) {
          return bad("pitch", *pitch,
                     "x-low, low, medium, high, x-high, \"+10%\" or \"-2st\" (Hz are not taken)");
        }
        frame.pitch *= *factor;
      }
      if (auto volume = Attribute(attributes, "volume")) {
        std::optional<double> db = ParseVolumeDb(*volume);
        if (!db) {
          return bad("volume", *volume, "silent, x-soft, soft, medium, loud, x-loud or \"+6dB\"");
        }
        frame.volume_db =
            (*db == kSilentDb || frame.volume_db == kSilentDb) ? kSilentDb : frame.volume_db + *db;
      }
    } else if (name == "emphasis") {
      // Emphasis as every engine can render it: a little slower and louder (or, reduced,
      // faster and softer).
      std::string_view level = Attribute(attributes, "level").value_or("moderate");
      if (level == "strong") {
        frame.rate *= 0.85;
        frame.volume_db += 4.0;
      } else if (level == "moderate") {
        frame.rate *= 0.92;
        frame.volume_db += 2.0;
      } else if (level == "reduced") {
        frame.rate *= 1.08;
        frame.volume_db -= 4.0;
      } else if (level != "none") {
        return bad("level", level, "strong, moderate, none or reduced");
      }
      if (frame.volume_db < kSilentDb / 2) frame.volume_db = kSilentDb;
    } else if (name == "voice") {
      if (auto voice = Attribute(attributes, "name")) {
        if (voice->empty()) return bad("name", *voice, "a voice id (GET /v1/voices)");
        frame.voice = std::string(*voice);
      }
    } else if (name == "say-as") {
      auto interpret = Attribute(attributes, "interpret-as");
      if (!interpret) {
        Fail("<say-as> needs an interpret-as attribute");
        return false;
      }
      frame.role = Frame::Role::kSayAs;
      frame.say_as.interpret_as = std::string(*interpret);
      frame.say_as.format = std::string(Attribute(attributes, "format").value_or(""));
      frame.say_as.language = frame.language;
    } else if (name == "sub") {
      auto alias = Attribute(attributes, "alias");
      if (!alias) {
        Fail("<sub> needs an alias attribute");
        return false;
      }
      frame.role = Frame::Role::kSub;
      frame.alias = std::string(*alias);
    } else if (name == "phoneme") {
      auto ph = Attribute(attributes, "ph");
      if (!ph || ph->empty()) {
        Fail("<phoneme> needs a ph attribute");
        return false;
      }
      std::string_view alphabet = Attribute(attributes, "alphabet").value_or("ipa");
      if (alphabet != "ipa") {
        return bad("alphabet", alphabet, "only \"ipa\" is supported");
      }
      frame.role = Frame::Role::kPhoneme;
      frame.phonemes = std::string(*ph);
    } else if (name == "metadata" || name == "desc" || name == "lexicon" || name == "meta") {
      frame.role = Frame::Role::kSilent;
    }
    // Anything else (speak, lang, audio, mark, vendor elements): transparent, text spoken.
    return true;
  }

  void End() {
    if (Failed() || stack_.empty()) return;
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    if (frame.boundary) boundary_ = true;
    switch (frame.role) {
      case Frame::Role::kSpoken:
      case Frame::Role::kSilent:
        return;
      case Frame::Role::kSayAs:
        return Speak(ExpandSayAs(frame.say_as, frame.collected), frame, /*verbatim=*/true);
      case Frame::Role::kSub:
        return Speak(frame.alias, frame, /*verbatim=*/true);
      case Frame::Role::kPhoneme:
        if (Frame* outer = Collector(); outer != nullptr) {
          outer->collected += frame.collected;  // inside say-as or sub: only its letters count
          return;
        }
        return SpeakPhonemes(frame);
    }
  }

  void Text(std::string_view text) {
    if (Failed() || stack_.empty() || InSilent()) return;
    Speak(text, stack_.back());
  }

  // `text` in the prosody and voice of `state`: to the innermost collecting element, or as
  // spoken text, merged into the item before when nothing separates them.
  void Speak(std::string_view text, const Frame& state, bool verbatim = false) {
    if (Frame* collector = Collector(); collector != nullptr) {
      collector->collected += text;
      return;
    }
    std::string collapsed;
    for (char c : text) {
      if (IsXmlSpace(c)) {
        if (collapsed.empty() || collapsed.back() != ' ') collapsed += ' ';
      } else {
        collapsed += c;
      }
    }
    if (collapsed.empty()) return;
    if (!items_.empty() && !boundary_) {
      SpeechItem& last = items_.back();
      if (last.kind == SpeechItem::Kind::kText && last.phonemes.empty() &&
          last.verbatim == verbatim && last.rate == state.rate && last.pitch == state.pitch &&
          last.volume_db == state.volume_db && last.voice == state.voice) {
        if (last.text.back() == ' ' && collapsed.front() == ' ') collapsed.erase(0, 1);
        last.text += collapsed;
        return;
      }
    }
    if (collapsed == " ") {
      // Whitespace between elements starts no item, but still parts the words around it.
      if (!items_.empty() && !boundary_ && items_.back().kind == SpeechItem::Kind::kText &&
          !items_.back().text.empty() && items_.back().text.back() != ' ') {
        items_.back().text += ' ';
      }
      return;
    }
    SpeechItem item;
    item.text = std::move(collapsed);
    item.verbatim = verbatim;
    Style(item, state);
    items_.push_back(std::move(item));
  }

  void SpeakPhonemes(const Frame& frame) {
    SpeechItem item;
    item.text = frame.collected;
    item.phonemes = frame.phonemes;
    Style(item, frame);
    items_.push_back(std::move(item));
  }

  void Style(SpeechItem& item, const Frame& state) {
    item.rate = state.rate;
    item.pitch = state.pitch;
    item.volume_db = state.volume_db;
    item.voice = state.voice;
    item.starts_sentence = boundary_;
    boundary_ = false;
  }

  const ParseOptions& options_;
  const size_t wrap_shift_;
  XmlReader* reader_ = nullptr;  // while Run reads
  std::vector<Frame> stack_;
  std::vector<SpeechItem> items_;
  bool boundary_ = false;  // a <s>/<p> edge passed since the last item
};

}  // namespace

bool LooksLikeSsml(std::string_view text) { return StartsWithSpeak(AfterDeclaration(text)); }

StreamStart ClassifyStreamStart(std::string_view start) {
  auto decided = [start] { return LooksLikeSsml(start) ? StreamStart::kSsml : StreamStart::kText; };
  if (start.size() > kMaxUndecidedStreamBytes) return decided();
  std::string_view rest = SkipXmlSpace(start);
  constexpr std::string_view kDeclaration = "<?xml";
  if (rest.starts_with(kDeclaration)) {
    const size_t end = rest.find("?>");
    if (end == std::string_view::npos) return StreamStart::kUndecided;
    rest = SkipXmlSpace(rest.substr(end + 2));
  } else if (kDeclaration.starts_with(rest)) {
    return StreamStart::kUndecided;  // "", "<", "<?x"
  }
  constexpr std::string_view kSpeak = "<speak";
  if (kSpeak.starts_with(rest)) return StreamStart::kUndecided;  // "<spe", "<speak": what next?
  return decided();
}

absl::StatusOr<std::vector<SpeechItem>> ParseSsml(std::string_view document,
                                                  const ParseOptions& options) {
  // A document (an XML declaration, a DOCTYPE or <speak> first) is parsed as sent: its root
  // must be <speak>. Anything else is a fragment.
  if (LooksLikeSsml(document) || SkipXmlSpace(document).starts_with("<?xml") ||
      SkipXmlSpace(document).starts_with("<!")) {
    return Parser(options, 0).Run(document);
  }
  std::string wrapped;
  wrapped.reserve(document.size() + kWrapOpen.size() + kWrapClose.size());
  wrapped.append(kWrapOpen).append(document).append(kWrapClose);
  return Parser(options, kWrapOpen.size()).Run(wrapped);
}

}  // namespace voxserve::text::ssml
