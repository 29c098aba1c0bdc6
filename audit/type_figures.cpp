#include "audit/type_figures.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

namespace outbox::audit {

std::map<std::string, type_figures> figures_by_type(SQLite::Database& db) {
  SQLite::Statement query{
      db, "SELECT l.event_type, COUNT(*), COALESCE(SUM(EXISTS (SELECT 1"
          "  FROM temp.audit_processed p WHERE p.event_id = l.event_id)), 0)"
          " FROM temp.audit_ledger l"
          " WHERE l.later = 0 AND l.status = 'PUBLISHED'"
          " GROUP BY l.event_type ORDER BY l.event_type"};
  std::map<std::string, type_figures> figures;
  while (query.executeStep())
    figures[query.getColumn(0).getString()] = {query.getColumn(1).getInt64(),
                                               query.getColumn(2).getInt64()};
  return figures;
}

} // namespace outbox::audit
