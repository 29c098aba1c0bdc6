#pragma once

#include <string>

namespace outbox::storage {

/// Who a database is, beyond its path (which a copy or a move changes):
/// a random id given once, at creation or at the upgrade to schema 5.
struct database_identity {
  /// 32 hex digits.
  std::string id;
  /// The schema version the database had when it got its id: 0 when this
  /// version created it, else the version it was upgraded from.
  int first_schema = 0;
  /// The file, absolute, as this process reaches it.
  std::string path;

  /// True for a database older versions wrote to, whose events may sit
  /// under the pipeline's old, unprefixed Redis key names.
  bool upgraded() const { return first_schema > 0; }
};

} // namespace outbox::storage
