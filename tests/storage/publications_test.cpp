// database::read_publications, what `outbox trim` judges its records by:
// each event's row, or the sign that a purge removed it, on every backend.

#include "storage/ledger.hpp"
#include "support/outbox_stores.hpp"
#include "tests/storage/contract_fixture.hpp"

#include <string>
#include <vector>

using namespace outbox::storage;

namespace {

using state = publication::state;

class StoragePublications : public outbox::test::contract_fixture {
protected:
  /// One OrderPlaced row named aggregate_id-seq, created at `created_at`,
  /// published at `published_at` when its status is PUBLISHED.
  void row(const std::string& aggregate_id, std::int64_t seq,
           const std::string& status, millis created_at,
           millis published_at = 0) {
    auto name = aggregate_id + "-" + std::to_string(seq);
    exec("INSERT INTO outbox (event_id, aggregate_id, seq, event_type,"
         " payload, status, attempts, created_at, published_at) VALUES (" +
         sql_->event_id("'" + name + "'") + ", '" + aggregate_id + "', " +
         std::to_string(seq) + ", 'OrderPlaced', '{}', '" + status + "', 0, " +
         sql_->at(created_at) + ", " +
         (status == "PUBLISHED" ? sql_->at(published_at) : "NULL") + ")");
    sql_->keep_heads();
  }

  /// The event a record names as aggregate_id-seq, with its row's id.
  applied_event named(const std::string& aggregate_id, std::int64_t seq) {
    return {event_id(aggregate_id + "-" + std::to_string(seq)), aggregate_id,
            seq};
  }

  /// Purges every row published before `cutoff`, as `outbox purge` does.
  void purge(millis cutoff) {
    outbox::test::outbox_stores stores{*db_};
    purge_batch batch;
    do
      batch = stores.purge_published(cutoff, batch.last_rowid, 100);
    while (!batch.done);
  }
};

OUTBOX_ON_BOTH_BACKENDS(StoragePublications);

} // namespace

TEST_P(StoragePublications, TellsEachEventsRowOrItsPurgeInTheOrderAsked) {
  // Purged in part: seqs 1 and 2 go, 3 (published after the cutoff) stays.
  for (int seq = 1; seq <= 2; ++seq)
    row("part", seq, "PUBLISHED", 10, 100);
  // Purged to its end: its head is kept.
  row("whole", 1, "PUBLISHED", 10, 100);
  // The purge stops at the first row created after its cutoff.
  row("part", 3, "PUBLISHED", 5000, 5000);
  row("sent", 1, "PUBLISHED", 5000, 5100);
  row("waiting", 1, "PENDING", 5000);
  row("failed", 1, "FAILED", 5000);
  purge(1000);
  ASSERT_EQ(scalar("SELECT COUNT(*) FROM outbox"), 4);

  struct expected {
    applied_event event;
    state where;
    std::string status;
    millis published_at;
  };
  const std::vector<expected> cases{
      {named("sent", 1), state::present, "PUBLISHED", 5100},
      {named("waiting", 1), state::present, "PENDING", 0},
      {named("failed", 1), state::present, "FAILED", 0},
      {named("part", 1), state::purged, "", 0},
      {named("part", 2), state::purged, "", 0},
      {named("part", 3), state::present, "PUBLISHED", 5000},
      {named("whole", 1), state::purged, "", 0},
      // Beyond the head the purge kept: never written here.
      {named("whole", 2), state::unknown, "", 0},
      // A row of its aggregate at or below its seq is still there.
      {named("part", 4), state::unknown, "", 0},
      {named("elsewhere", 1), state::unknown, "", 0},
      // Ids that are no row's, whatever their aggregate says.
      {{"not-an-event-id", "sent", 1}, state::unknown, "", 0},
      {{"nul", std::string{"whole\0x", 7}, 1}, state::unknown, "", 0},
      {{std::string{"sent-1\0", 7}, "nowhere", 1}, state::unknown, "", 0},
  };
  // More than one page of a trim, each case many times over: every answer
  // must line up with its question.
  std::vector<applied_event> asked;
  for (int round = 0; round < 200; ++round)
    for (const auto& c : cases)
      asked.push_back(c.event);
  auto found = db_->read_publications(asked);
  ASSERT_EQ(found.size(), asked.size());
  for (std::size_t i = 0; i < found.size(); ++i) {
    const auto& want = cases[i % cases.size()];
    SCOPED_TRACE(want.event.aggregate_id + " seq " +
                 std::to_string(want.event.seq) + ", asked #" +
                 std::to_string(i));
    EXPECT_EQ(found[i].where, want.where);
    EXPECT_EQ(found[i].status, want.status);
    EXPECT_EQ(found[i].published_at, want.published_at);
    if (found[i].where != want.where)
      break;
  }
  EXPECT_TRUE(db_->read_publications({}).empty());
}
