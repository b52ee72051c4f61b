// The in-memory index both voice backends answer from (store/voice_index.h): holds on names and
// ids, the count limit, names that read alike, bytes.
#include "store/voice_index.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace voxserve::store {
namespace {

StoredVoice Voice(std::string id, std::string name, int64_t created_at, size_t bytes,
                  std::string model = "cosyvoice") {
  StoredVoice voice;
  voice.metadata.id = std::move(id);
  voice.metadata.model = std::move(model);
  voice.metadata.name = std::move(name);
  voice.metadata.created_at = created_at;
  voice.file_bytes = bytes;
  return voice;
}

TEST(VoiceIndexTest, AHeldNameIsTakenUntilReleased) {
  VoiceIndex index;
  auto first = index.Reserve("cosyvoice", "Narrator", 10);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(IsVoiceId(first->id));
  auto again = index.Reserve("cosyvoice", "narrator", 10);  // reads alike
  ASSERT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(core::DetailOf(again.status()).code, "voice_name_taken");
  EXPECT_TRUE(index.Reserve("other-model", "Narrator", 10).ok());  // names are per model
  index.Release(*first);
  EXPECT_TRUE(index.Reserve("cosyvoice", "Narrator", 10).ok());
}

TEST(VoiceIndexTest, TheLimitCountsStoredAndHeldVoices) {
  VoiceIndex index;
  index.Add(Voice("voice_aaaaaaaaaaaaaaaaaaaaaaaa", "a", 1, 100));
  auto held = index.Reserve("cosyvoice", "b", 2);
  ASSERT_TRUE(held.ok());
  auto full = index.Reserve("cosyvoice", "c", 2);
  ASSERT_EQ(full.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(core::DetailOf(full.status()).code, "voice_limit_reached");
  index.Release(*held);
  EXPECT_TRUE(index.Reserve("cosyvoice", "c", 2).ok());
}

TEST(VoiceIndexTest, AGivenIdIsKeptUnlessTaken) {
  VoiceIndex index;
  const std::string id = "voice_0123456789abcdef01234567";
  auto held = index.Reserve("cosyvoice", "imported", 10, id);
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(held->id, id);
  auto taken = index.Reserve("cosyvoice", "another", 10, id);
  EXPECT_EQ(taken.status().code(), absl::StatusCode::kAlreadyExists);
  index.Release(*held);
  index.Add(Voice(id, "imported", 1, 10));
  EXPECT_EQ(index.Reserve("cosyvoice", "another", 10, id).status().code(),
            absl::StatusCode::kAlreadyExists);
}

TEST(VoiceIndexTest, OfNamesThatReadAlikeTheFirstIndexedKeepsTheName) {
  VoiceIndex index;
  EXPECT_TRUE(index.Add(Voice("voice_aaaaaaaaaaaaaaaaaaaaaaaa", "Anna", 1, 10)));
  EXPECT_FALSE(index.Add(Voice("voice_bbbbbbbbbbbbbbbbbbbbbbbb", "ANNA", 2, 20)));
  EXPECT_EQ(index.FindByName("cosyvoice", "anna")->metadata.id, "voice_aaaaaaaaaaaaaaaaaaaaaaaa");
  ASSERT_TRUE(index.Get("voice_bbbbbbbbbbbbbbbbbbbbbbbb"));  // by its id only
  // Removing the younger one leaves the name with its holder; removing the holder frees it.
  index.Remove("voice_bbbbbbbbbbbbbbbbbbbbbbbb");
  EXPECT_TRUE(index.FindByName("cosyvoice", "Anna"));
  index.Remove("voice_aaaaaaaaaaaaaaaaaaaaaaaa");
  EXPECT_FALSE(index.FindByName("cosyvoice", "Anna"));
  EXPECT_EQ(index.size(), 0u);
}

TEST(VoiceIndexTest, BytesFollowAddsReplacementsAndRemovals) {
  VoiceIndex index;
  index.Add(Voice("voice_aaaaaaaaaaaaaaaaaaaaaaaa", "a", 1, 100));
  index.Add(Voice("voice_bbbbbbbbbbbbbbbbbbbbbbbb", "b", 2, 50));
  EXPECT_EQ(index.total_bytes(), 150u);
  index.Add(Voice("voice_aaaaaaaaaaaaaaaaaaaaaaaa", "a", 1, 70));  // the same id again
  EXPECT_EQ(index.total_bytes(), 120u);
  EXPECT_EQ(index.size(), 2u);
  index.Remove("voice_bbbbbbbbbbbbbbbbbbbbbbbb");
  index.Remove("voice_cccccccccccccccccccccccc");  // unknown: nothing
  EXPECT_EQ(index.total_bytes(), 70u);
  index.Clear();
  EXPECT_EQ(index.total_bytes(), 0u);
  EXPECT_FALSE(index.Get("voice_aaaaaaaaaaaaaaaaaaaaaaaa"));
}

TEST(VoiceIndexTest, ListsOldestFirstWithinAModel) {
  VoiceIndex index;
  index.Add(Voice("voice_aaaaaaaaaaaaaaaaaaaaaaaa", "late", 30, 1));
  index.Add(Voice("voice_bbbbbbbbbbbbbbbbbbbbbbbb", "early", 10, 1));
  index.Add(Voice("voice_cccccccccccccccccccccccc", "other", 20, 1, "kokoro"));
  std::vector<StoredVoice> all = index.List("");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].metadata.name, "early");
  EXPECT_EQ(all[1].metadata.name, "other");
  EXPECT_EQ(all[2].metadata.name, "late");
  std::vector<StoredVoice> mine = index.List("cosyvoice");
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0].metadata.name, "early");
}

}  // namespace
}  // namespace voxserve::store
