#include "storage/order_store.hpp"
#include "storage/sqlite/database.hpp"
#include "storage/store_error.hpp"
#include "support/outbox_stores.hpp"
#include "tests/storage/contract_fixture.hpp"
#include "tests/storage/storage_fixture.hpp"

#include <SQLiteCpp/Exception.h>

#include <string>
#include <vector>

using namespace outbox::storage;
using namespace outbox::storage::sqlite;
using outbox::test::backend;

namespace {

/// Rows written by hand, so each test sets status and times exactly.
class StorageRetention : public outbox::test::contract_fixture {
protected:
  /// Inserts one outbox row named aggregate_id-seq (its event id is
  /// event_id(name)); published_at is set for PUBLISHED only.
  std::string row(const std::string& aggregate_id, std::int64_t seq,
                  const std::string& status, millis created_at,
                  millis published_at = 0) {
    auto name = aggregate_id + "-" + std::to_string(seq);
    bool sending = status == "SENDING";
    auto sql = "INSERT INTO outbox (event_id, aggregate_id, seq, event_type,"
               " payload, status, owner, attempts, last_error, created_at,"
               " published_at" +
               std::string{sending ? ", lease_until" : ""} + ") VALUES (" +
               sql_->event_id("'" + name + "'") + ", '" + aggregate_id + "', " +
               std::to_string(seq) + ", 'OrderPlaced', '{}', '" + status +
               "', " + (sending ? "'relay'" : "NULL") + ", " +
               (status == "FAILED" ? "3, 'boom " + name + "'" : "0, NULL") +
               ", " + sql_->at(created_at) + ", " +
               (status == "PUBLISHED" ? sql_->at(published_at) : "NULL") +
               (sending ? ", " + sql_->at(0) : "") + ")";
    exec(sql);
    sql_->keep_heads();
    return event_id(name);
  }

  /// An order with a request key pointing at `event_id`.
  void request_key(const std::string& event_id) {
    exec("INSERT INTO orders (sku, qty, created_at) VALUES ('s', 1, " +
         sql_->at(0) + ")");
    auto order_id = std::to_string(scalar("SELECT MAX(id) FROM orders"));
    exec("INSERT INTO request_keys (request_id, fingerprint, order_id,"
         " event_id, created_at) VALUES ('req-" +
         event_id + "', 'f', " + order_id + ", '" + event_id + "', " +
         sql_->at(0) + ")");
  }

  std::int64_t count(const std::string& where) {
    return scalar("SELECT COUNT(*) FROM outbox WHERE " + where);
  }

  /// Purges until done, checking every batch's bound; returns the batches.
  std::vector<purge_batch> purge_all(millis cutoff, int limit) {
    std::vector<purge_batch> batches;
    purge_batch batch;
    do {
      batch = outbox_.purge_published(cutoff, batch.last_rowid, limit);
      EXPECT_LE(batch.deleted, limit);
      batches.push_back(batch);
    } while (!batch.done && batches.size() < 1000);
    return batches;
  }

  outbox::test::outbox_stores outbox_{*db_};
};

OUTBOX_ON_BOTH_BACKENDS(StorageRetention);

/// What only SQLite's schema does; each case says why.
class StorageRetentionOnSQLite : public StorageRetention {};
INSTANTIATE_TEST_SUITE_P(, StorageRetentionOnSQLite,
                         ::testing::Values(backend::sqlite),
                         outbox::test::backend_name);

/// SQLite's query plans and schema versions.
using StorageRetentionSQLiteSchema = outbox::test::storage_fixture;

int total_deleted(const std::vector<purge_batch>& batches) {
  int total = 0;
  for (const auto& b : batches)
    total += b.deleted;
  return total;
}

} // namespace

TEST_P(StorageRetention, PurgeDeletesOnlyOldPublishedRowsInBatches) {
  // Aggregate "old": 25 PUBLISHED long ago, then one recent newest row.
  for (int seq = 1; seq <= 25; ++seq)
    row("old", seq, "PUBLISHED", 10, 100);
  row("old", 26, "PUBLISHED", 5000, 5000);
  // Old rows in the other states, each followed by a newer row.
  row("p", 1, "PENDING", 10);
  row("s", 1, "SENDING", 10);
  row("f", 1, "FAILED", 10);
  for (auto aggregate : {"p", "s", "f"})
    row(aggregate, 2, "PENDING", 20);
  // Published after the cutoff, created before it.
  row("late", 1, "PUBLISHED", 10, 2000);
  row("late", 2, "PENDING", 20);

  auto batches = purge_all(1000, 4);
  EXPECT_EQ(25, total_deleted(batches));
  EXPECT_GE(batches.size(), 7u) << "25 rows in batches of at most 4";
  EXPECT_EQ(0, count("aggregate_id = 'old' AND seq <= 25"));
  EXPECT_EQ(1, count("aggregate_id = 'old' AND seq = 26"));
  EXPECT_EQ(1, count("status = 'PENDING' AND seq = 1"));
  EXPECT_EQ(1, count("status = 'SENDING'"));
  EXPECT_EQ(1, count("status = 'FAILED'"));
  EXPECT_EQ(1, count("aggregate_id = 'late' AND seq = 1"));
  EXPECT_EQ(9, count("1 = 1"));
}

TEST_P(StorageRetention, PurgeSavesTheHeadOfAnAggregateItEmpties) {
  row("a", 1, "PUBLISHED", 10, 100);
  row("b", 1, "PUBLISHED", 10, 100);
  row("b", 2, "PUBLISHED", 10, 100);
  row("c", 1, "PUBLISHED", 10, 100);
  row("c", 2, "PENDING", 20);
  auto batches = purge_all(1000, 10);
  EXPECT_EQ(4, total_deleted(batches));
  int heads = 0;
  for (const auto& b : batches)
    heads += b.aggregate_heads;
  EXPECT_EQ(2, heads) << "a and b were emptied; c keeps a row";
  EXPECT_EQ(1, count("1 = 1"));
  EXPECT_EQ(1, scalar("SELECT last_seq FROM aggregate_heads"
                      " WHERE aggregate_id = 'a'"));
  EXPECT_EQ(2, scalar("SELECT last_seq FROM aggregate_heads"
                      " WHERE aggregate_id = 'b'"));
  // SQLite keeps a head only for an aggregate purged to its end;
  // PostgreSQL keeps every aggregate's head always (its seq allocator,
  // docs/postgres-protocol.md, "Schema"), untouched by purge.
  if (postgres()) {
    EXPECT_EQ(2, scalar("SELECT last_seq FROM aggregate_heads"
                        " WHERE aggregate_id = 'c'"));
  } else {
    EXPECT_EQ(0, scalar("SELECT COUNT(*) FROM aggregate_heads"
                        " WHERE aggregate_id = 'c'"));
  }

  // The next event of an emptied aggregate continues its seqs.
  auto orders = db_->orders();
  auto next = orders->append_event({"b", "OrderShipped", "{}"}, 2000);
  EXPECT_EQ(3, next.seq);
  auto fresh = orders->append_event({"z", "OrderShipped", "{}"}, 2000);
  EXPECT_EQ(1, fresh.seq);

  // Purged again, the head moves forward, never back.
  exec("UPDATE outbox SET status = 'PUBLISHED', published_at = " +
       sql_->at(2500) + " WHERE aggregate_id = 'b'");
  purge_all(3000, 10);
  EXPECT_EQ(3, scalar("SELECT last_seq FROM aggregate_heads"
                      " WHERE aggregate_id = 'b'"));
  EXPECT_EQ(4, orders->append_event({"b", "OrderShipped", "{}"}, 4000).seq);
}

TEST_P(StorageRetention, PurgeDeletesOnlyAPrefixOfEachAggregate) {
  // Relays with clocks apart: seq 2 looks published before the cutoff,
  // seq 1 after it. Deleting seq 2 alone would leave a hole verify and trim
  // cannot tell from a lost row.
  row("a", 1, "PUBLISHED", 10, 2000);
  row("a", 2, "PUBLISHED", 10, 100);
  row("b", 1, "PUBLISHED", 10, 100);
  row("b", 2, "PUBLISHED", 10, 100);
  auto batches = purge_all(1000, 10);
  EXPECT_EQ(2, total_deleted(batches)) << "b's two rows";
  EXPECT_EQ(2, count("aggregate_id = 'a'"));
  EXPECT_EQ(0, count("aggregate_id = 'b'"));
}

TEST_P(StorageRetention, PurgeKeepsAPrefixWhenIdsRunAgainstSeqs) {
  // Two writers on one aggregate: the one that drew the lower id waited
  // for the aggregate's lock and got seq 2. A batch of one row must not
  // take seq 2 alone and leave seq 1 behind it: a hole.
  row("a", 2, "PUBLISHED", 10, 100);
  row("a", 1, "PUBLISHED", 10, 100);
  purge_batch batch;
  int batches = 0;
  do {
    batch = outbox_.purge_published(1000, batch.last_rowid, 1);
    ++batches;
    EXPECT_FALSE(count("seq = 1") == 1 && count("seq = 2") == 0)
        << "seq 2 purged before seq 1, batch " << batches;
  } while (!batch.done && batches < 10);
  EXPECT_TRUE(batch.done);
  EXPECT_EQ(0, count("seq = 1")) << "the prefix goes";
  // A later run takes what this one kept but could not take yet.
  purge_all(1000, 10);
  EXPECT_EQ(0, count("aggregate_id = 'a'"));
}

// SQLite only: its trigger guards against writers that allocate seqs from
// the outbox alone (older binaries). PostgreSQL has no such writers (every
// one allocates through outbox_append and aggregate_heads), and nothing
// there refuses a raw INSERT (docs/postgres-protocol.md, open questions).
TEST_P(StorageRetentionOnSQLite, TheDatabaseRefusesASeqAtOrBelowAPurgedHead) {
  row("b", 1, "PUBLISHED", 10, 100);
  row("b", 2, "PUBLISHED", 10, 100);
  purge_all(1000, 10);
  // A writer that allocates from the outbox alone (an older binary) would
  // start b again at 1.
  EXPECT_THROW(row("b", 1, "PENDING", 2000), SQLite::Exception);
  EXPECT_THROW(row("b", 2, "PENDING", 2000), SQLite::Exception);
  row("b", 3, "PENDING", 2000);
  EXPECT_EQ(1, count("aggregate_id = 'b'"));
}

TEST_P(StorageRetention, PurgeRemovesRequestKeysAndKeepsOrders) {
  auto first = row("a", 1, "PUBLISHED", 10, 100);
  request_key(first);
  auto pending = row("a", 2, "PENDING", 20);
  request_key(pending);
  auto batches = purge_all(1000, 1000);
  EXPECT_EQ(1, total_deleted(batches));
  int keys = 0;
  for (const auto& b : batches)
    keys += b.request_keys;
  EXPECT_EQ(1, keys);
  EXPECT_EQ(0, scalar("SELECT COUNT(*) FROM request_keys WHERE event_id = '" +
                      first + "'"));
  EXPECT_EQ(1, scalar("SELECT COUNT(*) FROM request_keys"));
  EXPECT_EQ(2, scalar("SELECT COUNT(*) FROM orders"));
  EXPECT_EQ(0, scalar("SELECT COUNT(*) FROM request_keys k LEFT JOIN outbox o"
                      " ON o.event_id = k.event_id WHERE o.event_id IS NULL"));
  if (!postgres()) { // PostgreSQL enforces its foreign keys at every commit
    EXPECT_EQ(0, scalar("SELECT COUNT(*) FROM pragma_foreign_key_check"));
  }
}

TEST_P(StorageRetention, PurgeBatchLooksAtABoundedNumberOfRows) {
  // More FAILED rows than one batch may look at, before the old PUBLISHED.
  auto bound = purge_scan_bound(1);
  for (std::int64_t seq = 1; seq <= bound + 10; ++seq)
    row("f", seq, "FAILED", 10);
  row("a", 1, "PUBLISHED", 10, 100);
  row("a", 2, "PUBLISHED", 10, 100);
  auto first = outbox_.purge_published(1000, 0, 1);
  EXPECT_EQ(0, first.deleted);
  EXPECT_FALSE(first.done);
  EXPECT_EQ(bound, first.last_rowid);
  auto batches = purge_all(1000, 1);
  EXPECT_EQ(2, total_deleted(batches)) << "a is emptied, its head saved";
  EXPECT_EQ(0, count("aggregate_id = 'a'"));
}

TEST_P(StorageRetention, PurgeRejectsABatchBelowOne) {
  EXPECT_THROW(outbox_.purge_published(1000, 0, 0), store_error);
}

TEST_F(StorageRetentionSQLiteSchema, PurgeQueriesUseTheRowidAndTheIndexes) {
  for (const auto& line :
       query_plan("SELECT rowid FROM outbox WHERE rowid > 5 ORDER BY rowid"
                  " LIMIT 10"))
    EXPECT_EQ(std::string::npos, line.find("SCAN")) << line;
  for (const auto& line :
       query_plan("SELECT 1 FROM request_keys WHERE event_id = 'e'"))
    EXPECT_NE(std::string::npos, line.find("request_keys_event")) << line;
  for (const auto& line :
       query_plan("SELECT rowid FROM outbox WHERE status = 'FAILED'"
                  " AND rowid > 5 ORDER BY rowid LIMIT 10"))
    EXPECT_NE(std::string::npos, line.find("outbox_failed")) << line;
}

TEST_F(StorageRetentionSQLiteSchema, MigratesVersion2ToTheRequestKeysIndex) {
  db_->exec("DROP INDEX request_keys_event; PRAGMA user_version = 2");
  EXPECT_THROW(require_schema(*db_), store_error);
  migrate(*db_);
  EXPECT_EQ(schema_version, scalar("PRAGMA user_version"));
  EXPECT_EQ(1, scalar("SELECT COUNT(*) FROM sqlite_master"
                      " WHERE type = 'index' AND name = 'request_keys_event'"));
}

TEST_F(StorageRetentionSQLiteSchema, MigratesVersion3ToTheAggregateHeads) {
  db_->exec("DROP TABLE aggregate_heads; PRAGMA user_version = 3");
  EXPECT_THROW(require_schema(*db_), store_error);
  migrate(*db_);
  EXPECT_EQ(schema_version, scalar("PRAGMA user_version"));
  EXPECT_EQ(0, scalar("SELECT COUNT(*) FROM aggregate_heads"));
}

TEST_P(StorageRetention, FailedRowsPagesThroughAllOldestFirst) {
  for (int seq = 1; seq <= 250; ++seq) {
    row("f", seq, "FAILED", seq);
    if (seq % 50 == 0)
      row("p" + std::to_string(seq), 1, "PENDING", seq);
  }
  std::vector<failed_row> all;
  std::int64_t after = 0;
  int pages = 0;
  for (;;) {
    auto page = outbox_.failed_rows(after, 100);
    ++pages;
    EXPECT_LE(page.rows.size(), 100u);
    all.insert(all.end(), page.rows.begin(), page.rows.end());
    if (page.rows.size() < 100u)
      break;
    after = page.last_rowid;
  }
  EXPECT_EQ(3, pages);
  ASSERT_EQ(250u, all.size());
  for (std::size_t i = 0; i < all.size(); ++i)
    EXPECT_EQ(static_cast<std::int64_t>(i + 1), all[i].seq);
  EXPECT_EQ(event_id("f-1"), all[0].event_id);
  EXPECT_EQ("boom f-1", all[0].last_error);
  EXPECT_EQ(3, all[0].attempts);
  EXPECT_EQ("OrderPlaced", all[0].event_type);
  EXPECT_TRUE(outbox_.failed_rows(after + 1'000'000, 100).rows.empty());
}
