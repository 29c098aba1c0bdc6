#include "embed/outbox/append.hpp"

#include "support/storage_backend.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Transaction.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <memory>
#include <stdexcept>
#include <string>

// outbox::append on the application's own connection and transaction, on a
// database `outbox init` made: the event commits with the caller's rows or
// not at all, its seq follows its aggregate's, an event_id is appended
// once, and what the outbox refuses is refused before anything is written.
// A real SQLite file and a private PostgreSQL cluster.

namespace outbox::test {
namespace {

/// One application connection of either backend, with its transaction.
class app_connection {
public:
  explicit app_connection(const backend_database& db) {
    auto path = db.options().path;
    if (db.postgres()) {
      pg_.reset(PQconnectdb(path.c_str()));
      if (PQstatus(pg_.get()) != CONNECTION_OK)
        throw std::runtime_error(PQerrorMessage(pg_.get()));
    } else {
      sqlite_ =
          std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE);
    }
  }

  void begin() { run(sqlite_ ? "BEGIN IMMEDIATE" : "BEGIN"); }
  void commit() { run("COMMIT"); }
  void rollback() { run("ROLLBACK"); }

  outbox::appended append(const outbox::event& e) {
    return sqlite_ ? outbox::append(*sqlite_, e) : outbox::append(pg_.get(), e);
  }

  std::int64_t rows() {
    if (sqlite_)
      return sqlite_->execAndGet("SELECT count(*) FROM outbox").getInt64();
    std::unique_ptr<PGresult, decltype(&PQclear)> r{
        PQexec(pg_.get(), "SELECT count(*) FROM outbox"), &PQclear};
    return std::stoll(PQgetvalue(r.get(), 0, 0));
  }

private:
  void run(const char* sql) {
    if (sqlite_)
      sqlite_->exec(sql);
    else
      exec(sql);
  }

  void exec(const char* sql) {
    std::unique_ptr<PGresult, decltype(&PQclear)> r{PQexec(pg_.get(), sql),
                                                    &PQclear};
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK)
      throw std::runtime_error(PQerrorMessage(pg_.get()));
  }

  std::unique_ptr<SQLite::Database> sqlite_;
  std::unique_ptr<PGconn, decltype(&PQfinish)> pg_{nullptr, &PQfinish};
};

class EmbedAppend : public ::testing::TestWithParam<backend> {
protected:
  void SetUp() override { db_.connect(storage::open_mode::migrated); }

  backend_database db_{GetParam()};
};

TEST_P(EmbedAppend, CommitsWithTheCallersTransactionOrNotAtAll) {
  app_connection app{db_};
  app.begin();
  auto first = app.append({"invoice-1", "InvoiceIssued", R"({"amount":5})"});
  auto second = app.append({"invoice-1", "InvoicePaid", "{}"});
  EXPECT_EQ(first.seq, 1);
  EXPECT_EQ(second.seq, 2);
  EXPECT_FALSE(first.replayed);
  EXPECT_EQ(first.event_id.size(), 36u) << "a UUID made for it";
  app.rollback();
  EXPECT_EQ(app.rows(), 0) << "rolled back with the caller's rows";

  app.begin();
  EXPECT_EQ(app.append({"invoice-1", "InvoiceIssued", "{}"}).seq, 1)
      << "the seq of a rolled back append is not spent";
  app.commit();
  EXPECT_EQ(app.rows(), 1);
}

TEST_P(EmbedAppend, AnEventIdIsAppendedOnce) {
  app_connection app{db_};
  const std::string id = "0190f3a4-1111-7abc-8def-00000000000a";
  app.begin();
  auto first = app.append({"invoice-2", "InvoiceIssued", "{}", id});
  app.commit();
  app.begin();
  auto again = app.append({"invoice-2", "InvoiceIssued", "{}", id});
  app.commit();
  EXPECT_EQ(first.event_id, id);
  EXPECT_TRUE(again.replayed);
  EXPECT_EQ(again.seq, first.seq);
  EXPECT_EQ(app.rows(), 1);
  // A refusal leaves the caller's transaction as it was: what it wrote
  // before commits.
  app.begin();
  auto kept = app.append({"invoice-2", "InvoicePaid", "{}"});
  EXPECT_THROW(app.append({"invoice-3", "InvoiceIssued", "{}", id}),
               outbox::refused_event);
  app.commit();
  EXPECT_EQ(app.rows(), 2);
  EXPECT_EQ(kept.seq, 2);
}

TEST_P(EmbedAppend, WhatTheOutboxRefusesIsNamedAndNothingIsWritten) {
  app_connection app{db_};
  app.begin();
  try {
    app.append({"invoice-4", "InvoiceIssued", "[1]"});
    ADD_FAILURE() << "accepted an array payload";
  } catch (const outbox::refused_event& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("payload must be a JSON object"));
  }
  EXPECT_THROW(app.append({"", "T", "{}"}), outbox::refused_event);
  EXPECT_THROW(app.append({"a\n", "T", "{}"}), outbox::refused_event);
  EXPECT_THROW(app.append({"a", "T", "{}", "not-a-uuid"}),
               outbox::refused_event);
  app.commit();
  EXPECT_EQ(app.rows(), 0);
}

TEST_P(EmbedAppend, RefusesToCommitAnEventAlone) {
  app_connection app{db_};
  try {
    app.append({"invoice-5", "InvoiceIssued", "{}"});
    ADD_FAILURE() << "appended in autocommit";
  } catch (const outbox::no_transaction& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("needs a transaction open"));
  }
  EXPECT_EQ(app.rows(), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, EmbedAppend,
                         ::testing::Values(backend::sqlite, backend::postgres),
                         backend_name);

} // namespace
} // namespace outbox::test
