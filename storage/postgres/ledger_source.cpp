#include "storage/postgres/ledger_source.hpp"

#include "storage/postgres/session.hpp"
#include "storage/postgres/sql_files.hpp"
#include "storage/store_error.hpp"

namespace outbox::storage::postgres {

namespace {

constexpr int page_size = 5000;

} // namespace

ledger_source::ledger_source(session& link) : link_(link) {
  // The protocol first: loading it later would deallocate every statement
  // of the connection, the audit's too.
  link_.prepare();
  // READ WRITE: creating temporary tables is refused in a read-only
  // transaction, which `outbox verify`'s connection makes the default.
  link_.exec("audit", std::string{"BEGIN READ WRITE;\n"} + sql_files::audit +
                          "\nCOMMIT");
  generation_ = link_.generation();
}

ledger_source::~ledger_source() {
  // A broken or new connection took them with it (and reconnecting here
  // would only wait).
  if (!link_.connected() || link_.generation() != generation_)
    return;
  for (const char* drop :
       {"DEALLOCATE audit_copy_ledger", "DEALLOCATE audit_copy_later",
        "DEALLOCATE audit_forget_later", "DEALLOCATE audit_ledger_page",
        "DEALLOCATE audit_heads_page", "DISCARD TEMP"}) {
    try {
      link_.exec("audit", drop);
    } catch (const store_error&) {
      // One that is gone does not keep the others.
    }
  }
}

void ledger_source::require_same_connection() {
  // The ledger lives in this connection's temporary tables: a reconnect
  // lost it, and the audit must start again.
  if (link_.generation() != generation_)
    throw store_error(store_errc::busy,
                      "audit: the connection to " + link_.where() +
                          " broke during the audit; run it again");
}

void ledger_source::page_rows(ledger_sink& sink, bool later) {
  std::string after = "0";
  for (;;) {
    auto page =
        link_.run("audit", "audit_ledger_page",
                  {later ? "true" : "false", after, std::to_string(page_size)});
    for (int r = 0; r < page.rows(); ++r) {
      ledger_row row;
      row.event_id = page.text(r, 1);
      row.aggregate_id = page.text(r, 2);
      row.seq = page.int64(r, 3);
      row.event_type = page.text(r, 4);
      row.status = page.text(r, 5);
      row.sku = page.text(r, 6);
      row.qty = page.int64(r, 7);
      row.published_at = page.int64(r, 8);
      sink.row(row, later);
      after = page.text(r, 0);
    }
    if (page.rows() < page_size)
      return;
  }
}

void ledger_source::page_heads(ledger_sink& sink) {
  std::string after;
  for (;;) {
    auto page = link_.run("audit", "audit_heads_page",
                          {after, std::to_string(page_size)});
    for (int r = 0; r < page.rows(); ++r) {
      after = page.text(r, 0);
      sink.head(after, page.int64(r, 1));
    }
    if (page.rows() < page_size)
      return;
  }
}

void ledger_source::copy_ledger(ledger_sink& sink) {
  require_same_connection();
  link_.run("audit", "audit_copy_ledger", {});
  page_rows(sink, false);
}

void ledger_source::copy_later(ledger_sink& sink) {
  require_same_connection();
  link_.run("audit", "audit_copy_later", {});
  page_rows(sink, true);
  page_heads(sink);
}

void ledger_source::forget_later() {
  require_same_connection();
  link_.run("audit", "audit_forget_later", {});
}

} // namespace outbox::storage::postgres
