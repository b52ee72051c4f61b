// What a change to a pronunciation dictionary costs the `dir` store (issue 39): a dictionary of
// --rules rules, then --writes add-rules of one rule each, --max-versions kept (32, the
// default). Prints the time per change (first and last 20, median), the bytes written per change
// (wchar of /proc/self/io: what went through write()), the store's size on disk, and the
// process's memory (VmRSS) for the store as written and as loaded again at a restart.
//
//   build/bin/dictionary_store_bench [--rules 10000] [--writes 64] [--max-versions 32]
//   build/bin/dictionary_store_bench --rules 100 --writes 400 --max-versions 1000
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "store/dictionary_store.h"

namespace {

namespace fs = std::filesystem;
using voxserve::store::DictionaryStore;
using voxserve::store::DictionaryStoreConfig;
using voxserve::text::lexicon::Lexeme;
using voxserve::text::lexicon::Lexicon;

// A field of a /proc file ("VmRSS:", "wchar:") as a number (kB for VmRSS, bytes for wchar).
long long ProcField(const char* file, std::string_view field) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(field)) return std::atoll(line.c_str() + field.size());
  }
  return -1;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

Lexeme Rule(int i) {
  Lexeme lexeme;
  lexeme.graphemes = {"term" + std::to_string(i)};
  lexeme.alias = "alias number " + std::to_string(i);
  return lexeme;
}

long long DiskBytes(const fs::path& dir) {
  long long total = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) total += static_cast<long long>(entry.file_size());
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  int rules = 10'000;
  int writes = 64;
  int max_versions = 32;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--rules") rules = std::atoi(argv[i + 1]);
    if (flag == "--writes") writes = std::atoi(argv[i + 1]);
    if (flag == "--max-versions") max_versions = std::atoi(argv[i + 1]);
  }
  const fs::path dir =
      fs::temp_directory_path() / ("voxserve-dict-bench-" + std::to_string(getpid()));
  DictionaryStoreConfig config;
  config.dir = dir.string();
  config.max_versions = max_versions;
  config.max_bytes = 4ull << 30;
  config.limits.max_rules = static_cast<size_t>(rules + writes + 1);

  const long long rss_start = ProcField("/proc/self/status", "VmRSS:");
  std::vector<double> first_ms;
  std::vector<double> last_ms;
  long long written_last = 0;  // bytes written by the last 20 changes
  {
    auto store = DictionaryStore::Create(config);
    if (!store.ok()) {
      std::fprintf(stderr, "%s\n", std::string(store.status().message()).c_str());
      return 1;
    }
    Lexicon lexicon;
    for (int i = 0; i < rules; ++i) lexicon.lexemes.push_back(Rule(i));
    auto added = (*store)->Add("bench", "", std::move(lexicon));
    if (!added.ok()) {
      std::fprintf(stderr, "%s\n", std::string(added.status().message()).c_str());
      return 1;
    }
    for (int w = 0; w < writes; ++w) {
      const long long wchar_before = ProcField("/proc/self/io", "wchar:");
      const auto start = std::chrono::steady_clock::now();
      auto updated = (*store)->Update(added->id, [&](const Lexicon& latest) {
        Lexicon next = latest;
        next.lexemes.push_back(Rule(rules + w));
        return absl::StatusOr<Lexicon>(std::move(next));
      });
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (!updated.ok()) {
        std::fprintf(stderr, "%s\n", std::string(updated.status().message()).c_str());
        return 1;
      }
      if (w < 20) first_ms.push_back(ms);
      if (w >= writes - 20) {
        last_ms.push_back(ms);
        written_last += ProcField("/proc/self/io", "wchar:") - wchar_before;
      }
    }
    const long long rss_written = ProcField("/proc/self/status", "VmRSS:");
    std::printf("dictionary of %d rules, %d add-rules of one rule, %d versions kept\n", rules,
                writes, max_versions);
    std::printf("  change: first 20 median %.2f ms, last 20 median %.2f ms\n", Median(first_ms),
                Median(last_ms));
    std::printf("  bytes written per change (last 20): %.0f\n",
                static_cast<double>(written_last) / std::min(20, writes));
    std::printf("  store on disk: %.1f MB\n", DiskBytes(dir) / 1e6);
    std::printf("  memory (VmRSS growth) as written: %.1f MB\n", (rss_written - rss_start) / 1e3);
  }
  {
    ::malloc_trim(0);  // the first store's memory back to the system, so growth is the new one's
    const long long rss_before = ProcField("/proc/self/status", "VmRSS:");
    const auto start = std::chrono::steady_clock::now();
    auto reopened = DictionaryStore::Create(config);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!reopened.ok()) return 1;
    std::printf("  restart: loaded in %.0f ms, memory (VmRSS growth) %.1f MB\n", ms,
                (ProcField("/proc/self/status", "VmRSS:") - rss_before) / 1e3);
  }
  fs::remove_all(dir);
  return 0;
}
