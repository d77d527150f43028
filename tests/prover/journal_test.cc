// ProverJournal: round trips, the pending index across a reopen, inclusion
// and refusal marks, and the retention sweep by time, which keeps entries
// still pending submission.
#include "prover/journal.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/store/temp_dir.h"

namespace layerproof::prover {
namespace {

v1::JournalEntry Entry(char id_byte, int64_t created_at) {
  v1::JournalEntry e;
  e.set_request_id(std::string(16, id_byte));
  e.set_salt(std::string(32, 's'));
  e.set_seed(42);
  e.add_prompt_token_ids(1);
  e.add_prompt_token_ids(5);
  e.add_output_token_ids(7);
  e.mutable_sampling()->set_top_p(1);
  e.set_finish_reason(v1::FINISH_REASON_MAX_TOKENS);
  e.set_commitment_envelope(std::string("envelope-") + id_byte);
  e.set_created_at_unix_nanos(created_at);
  return e;
}

std::vector<std::string> Ids(const std::vector<v1::JournalEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.request_id());
  return out;
}

TEST(JournalTest, PutGetRoundTrip) {
  store::fixture::TempDir dir("lp_journal");
  auto journal = ProverJournal::Open(dir.path());
  ASSERT_TRUE(journal.ok()) << journal.status();
  const v1::JournalEntry e = Entry('a', 1000);
  ASSERT_TRUE((*journal)->Put(e).ok());
  auto got = (*journal)->Get(e.request_id());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->SerializeAsString(), e.SerializeAsString());
  EXPECT_EQ((*journal)->Put(e).code(), absl::StatusCode::kAlreadyExists);
  auto missing = (*journal)->Get(std::string(16, 'z'));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  v1::JournalEntry short_id = e;
  short_id.set_request_id("abc");
  EXPECT_EQ((*journal)->Put(short_id).message(),
            "JournalEntry.request_id: got 3 bytes, want 16");
}

TEST(JournalTest, ReopenKeepsEntriesAndPendingQueue) {
  store::fixture::TempDir dir("lp_journal");
  v1::LogInclusion inclusion;
  inclusion.set_leaf_index(3);
  inclusion.set_tree_size(4);
  inclusion.set_checkpoint("note");
  {
    auto journal = ProverJournal::Open(dir.path());
    ASSERT_TRUE(journal.ok()) << journal.status();
    for (char c : {'a', 'b', 'c'}) {
      ASSERT_TRUE((*journal)->Put(Entry(c, 1000)).ok());
    }
    ASSERT_TRUE((*journal)->SetInclusion(std::string(16, 'b'), inclusion).ok());
    ASSERT_TRUE(
        (*journal)->MarkRefused(std::string(16, 'c'), 3, "bad record").ok());
    auto pending = (*journal)->Pending();
    ASSERT_TRUE(pending.ok());
    EXPECT_EQ(Ids(*pending), std::vector<std::string>{std::string(16, 'a')});
  }
  auto journal = ProverJournal::Open(dir.path());
  ASSERT_TRUE(journal.ok()) << journal.status();
  auto pending = (*journal)->Pending();
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(Ids(*pending), std::vector<std::string>{std::string(16, 'a')});
  auto b = (*journal)->Get(std::string(16, 'b'));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->inclusion().leaf_index(), 3u);
  EXPECT_EQ(b->inclusion().checkpoint(), "note");
  auto c = (*journal)->Get(std::string(16, 'c'));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->refused_code(), 3);
  EXPECT_EQ(c->refused_message(), "bad record");
  EXPECT_FALSE(c->has_inclusion());
  EXPECT_EQ((*journal)->SetInclusion(std::string(16, 'q'), inclusion).code(),
            absl::StatusCode::kNotFound);
}

TEST(JournalTest, SweepDeletesOnlyLoggedEntriesOlderThanTheCutoff) {
  store::fixture::TempDir dir("lp_journal");
  auto journal = ProverJournal::Open(dir.path());
  ASSERT_TRUE(journal.ok()) << journal.status();
  // Inserted out of time order: the sweep follows the time index.
  ASSERT_TRUE((*journal)->Put(Entry('c', 3000)).ok());
  ASSERT_TRUE((*journal)->Put(Entry('a', 1000)).ok());
  ASSERT_TRUE((*journal)->Put(Entry('b', 2000)).ok());
  v1::LogInclusion inclusion;
  inclusion.set_leaf_index(0);
  inclusion.set_tree_size(1);
  ASSERT_TRUE((*journal)->SetInclusion(std::string(16, 'a'), inclusion).ok());
  ASSERT_TRUE((*journal)->MarkRefused(std::string(16, 'b'), 7, "no").ok());
  ASSERT_TRUE((*journal)->SetInclusion(std::string(16, 'c'), inclusion).ok());
  auto swept = (*journal)->DeleteOlderThan(2500);
  ASSERT_TRUE(swept.ok()) << swept.status();
  EXPECT_EQ(swept->deleted, 2u);
  EXPECT_EQ(swept->pending_kept, 0u);
  EXPECT_EQ((*journal)->Get(std::string(16, 'a')).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ((*journal)->Get(std::string(16, 'b')).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE((*journal)->Get(std::string(16, 'c')).ok());
  auto again = (*journal)->DeleteOlderThan(2500);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->deleted, 0u);
}

// Regression: the sweep deleted every entry older than the cutoff, also
// those the log had not yet acknowledged, so a commitment journaled while
// the log was down for longer than the retention was never submitted.
TEST(JournalTest, SweepKeepsEntriesPendingSubmission) {
  store::fixture::TempDir dir("lp_journal");
  auto journal = ProverJournal::Open(dir.path());
  ASSERT_TRUE(journal.ok()) << journal.status();
  const std::vector<std::pair<char, int64_t>> entries = {
      {'a', 1000}, {'b', 1500}, {'c', 2000}};
  for (const auto& [id, t] : entries) {
    ASSERT_TRUE((*journal)->Put(Entry(id, t)).ok());
  }
  v1::LogInclusion inclusion;
  inclusion.set_leaf_index(0);
  inclusion.set_tree_size(1);
  ASSERT_TRUE((*journal)->SetInclusion(std::string(16, 'b'), inclusion).ok());
  // a and c are pending; all three are older than the cutoff.
  auto swept = (*journal)->DeleteOlderThan(2500);
  ASSERT_TRUE(swept.ok()) << swept.status();
  EXPECT_EQ(swept->deleted, 1u);
  EXPECT_EQ(swept->pending_kept, 2u);
  EXPECT_EQ(swept->oldest_pending_unix_nanos, 1000);
  EXPECT_TRUE((*journal)->Get(std::string(16, 'a')).ok());
  EXPECT_EQ((*journal)->Get(std::string(16, 'b')).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE((*journal)->Get(std::string(16, 'c')).ok());
  auto pending = (*journal)->Pending();
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(Ids(*pending), (std::vector<std::string>{std::string(16, 'a'),
                                                     std::string(16, 'c')}));
  // Once logged (or refused), the next sweep deletes them.
  ASSERT_TRUE((*journal)->SetInclusion(std::string(16, 'a'), inclusion).ok());
  ASSERT_TRUE((*journal)->MarkRefused(std::string(16, 'c'), 7, "no").ok());
  auto later = (*journal)->DeleteOlderThan(2500);
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_EQ(later->deleted, 2u);
  EXPECT_EQ(later->pending_kept, 0u);
  EXPECT_EQ(later->oldest_pending_unix_nanos, 0);
  EXPECT_EQ((*journal)->Get(std::string(16, 'a')).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace layerproof::prover
