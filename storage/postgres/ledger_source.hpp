#pragma once

#include "storage/ledger.hpp"

namespace outbox::storage::postgres {

class session;

/// The audit's snapshots on PostgreSQL (audit.sql): each taken by one
/// statement into this session's temporary tables, then paged out, so no
/// snapshot outlives a statement (a long audit holds back no vacuum) and
/// memory holds one page. Its temporary objects go with it.
class ledger_source final : public storage::ledger_source {
public:
  explicit ledger_source(session& link);
  ~ledger_source() override;
  ledger_source(const ledger_source&) = delete;
  ledger_source& operator=(const ledger_source&) = delete;

  void copy_ledger(ledger_sink& sink) override;
  void copy_later(ledger_sink& sink) override;
  void forget_later() override;

private:
  void require_same_connection();
  void page_rows(ledger_sink& sink, bool later);
  void page_heads(ledger_sink& sink);

  session& link_;
  int generation_ = 0;
};

} // namespace outbox::storage::postgres
