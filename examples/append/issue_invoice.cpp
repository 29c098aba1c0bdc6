// issue_invoice DATABASE INVOICE AMOUNT [EVENT_ID]
//
// Records an invoice in the application's own table and appends its
// InvoiceIssued event to the outbox, in one transaction: both commit or
// neither does. DATABASE is a SQLite file or a postgresql:// URI that
// `outbox init` prepared. Prints {"event_id","seq","replayed"}.

#include <outbox/append.hpp>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Transaction.h>
#include <libpq-fe.h>

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>

namespace {

outbox::event invoice_issued(const std::string& invoice,
                             const std::string& amount,
                             const std::string& event_id) {
  return {invoice, "InvoiceIssued", "{\"amount\": " + amount + "}", event_id};
}

outbox::appended on_sqlite(const std::string& path, const std::string& invoice,
                           const std::string& amount,
                           const std::string& event_id) {
  SQLite::Database db{path, SQLite::OPEN_READWRITE};
  // Relays write the same file: wait for their short transactions.
  db.setBusyTimeout(5000);
  db.exec("CREATE TABLE IF NOT EXISTS invoices (id TEXT PRIMARY KEY, "
          "amount INTEGER NOT NULL)");
  SQLite::Transaction transaction{db, SQLite::TransactionBehavior::IMMEDIATE};
  SQLite::Statement insert{db, "INSERT OR IGNORE INTO invoices VALUES (?, ?)"};
  insert.bind(1, invoice);
  insert.bind(2, static_cast<std::int64_t>(std::stoll(amount)));
  insert.exec();
  auto appended = outbox::append(db, invoice_issued(invoice, amount, event_id));
  transaction.commit();
  return appended;
}

/// Runs `sql` on `conn`; throws with the server's message.
void exec(PGconn* conn, const std::string& sql) {
  std::unique_ptr<PGresult, decltype(&PQclear)> r{PQexec(conn, sql.c_str()),
                                                  &PQclear};
  if (PQresultStatus(r.get()) != PGRES_COMMAND_OK)
    throw std::runtime_error(PQerrorMessage(conn));
}

outbox::appended on_postgres(const std::string& uri, const std::string& invoice,
                             const std::string& amount,
                             const std::string& event_id) {
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn{PQconnectdb(uri.c_str()),
                                                    &PQfinish};
  if (PQstatus(conn.get()) != CONNECTION_OK)
    throw std::runtime_error(PQerrorMessage(conn.get()));
  exec(conn.get(), "CREATE TABLE IF NOT EXISTS invoices (id text PRIMARY KEY, "
                   "amount bigint NOT NULL)");
  exec(conn.get(), "BEGIN");
  const char* values[2] = {invoice.c_str(), amount.c_str()};
  std::unique_ptr<PGresult, decltype(&PQclear)> inserted{
      PQexecParams(
          conn.get(),
          "INSERT INTO invoices VALUES ($1, $2) ON CONFLICT DO NOTHING", 2,
          nullptr, values, nullptr, nullptr, 0),
      &PQclear};
  if (PQresultStatus(inserted.get()) != PGRES_COMMAND_OK)
    throw std::runtime_error(PQerrorMessage(conn.get()));
  auto appended =
      outbox::append(conn.get(), invoice_issued(invoice, amount, event_id));
  exec(conn.get(), "COMMIT");
  return appended;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::cerr << "usage: issue_invoice DATABASE INVOICE AMOUNT [EVENT_ID]\n";
    return 2;
  }
  std::string database = argv[1];
  // Spliced into the payload below: digits only.
  std::string amount = argv[3];
  if (amount.empty() || amount.size() > 15 ||
      amount.find_first_not_of("0123456789") != std::string::npos) {
    std::cerr << "issue_invoice: AMOUNT must be a whole number\n";
    return 2;
  }
  std::string event_id = argc == 5 ? argv[4] : "";
  try {
    bool postgres = database.rfind("postgresql://", 0) == 0 ||
                    database.rfind("postgres://", 0) == 0;
    auto appended = postgres ? on_postgres(database, argv[2], amount, event_id)
                             : on_sqlite(database, argv[2], amount, event_id);
    std::cout << "{\"event_id\":\"" << appended.event_id
              << "\",\"seq\":" << appended.seq
              << ",\"replayed\":" << (appended.replayed ? "true" : "false")
              << "}\n";
    return 0;
  } catch (const outbox::refused_event& e) {
    std::cerr << "issue_invoice: refused: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "issue_invoice: " << e.what() << '\n';
    return 1;
  }
}
