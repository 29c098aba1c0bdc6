// The SQLSTATE classes the PostgreSQL backend maps to store_errc: what the
// actors wait out (busy), what the CLI calls "not initialised" (schema),
// the user's fault (invalid_input) and a refusal (io).

#include "storage/postgres/pg_error.hpp"

#include <gtest/gtest.h>

namespace outbox::test {
namespace {

using storage::store_errc;

TEST(StoragePostgresError, SqlStatesMapToTheCodesCallersActOn) {
  struct mapped {
    const char* sqlstate;
    store_errc code;
  };
  for (const auto& c : {
           mapped{"08006", store_errc::busy},          // connection failure
           mapped{"57P01", store_errc::busy},          // admin shutdown
           mapped{"57P03", store_errc::busy},          // cannot connect now
           mapped{"53300", store_errc::busy},          // too many connections
           mapped{"40001", store_errc::busy},          // serialization failure
           mapped{"40P01", store_errc::busy},          // deadlock
           mapped{"55P03", store_errc::busy},          // lock not available
           mapped{"42P01", store_errc::schema},        // undefined table
           mapped{"42883", store_errc::schema},        // undefined function
           mapped{"26000", store_errc::schema},        // unknown statement
           mapped{"23505", store_errc::invalid_input}, // unique violation
           mapped{"23514", store_errc::invalid_input}, // check violation
           mapped{"22P02", store_errc::invalid_input}, // bad text for a type
           mapped{"22023", store_errc::invalid_input}, // outbox_require
           mapped{"28P01", store_errc::io},            // bad password
           mapped{"3D000", store_errc::io},            // no such database
           mapped{"42501", store_errc::io},            // not allowed
           mapped{"25006", store_errc::io},            // read-only transaction
           mapped{"XX000", store_errc::internal},
       }) {
    EXPECT_EQ(storage::postgres::classify(c.sqlstate), c.code) << c.sqlstate;
  }
}

TEST(StoragePostgresError, MessagesAreOneLine) {
  EXPECT_EQ(storage::postgres::one_line(
                "server closed the connection unexpectedly\n\tThis probably "
                "means the server terminated abnormally\n"),
            "server closed the connection unexpectedly This probably means "
            "the server terminated abnormally");
  EXPECT_EQ(storage::postgres::one_line(nullptr), "");
}

} // namespace
} // namespace outbox::test
