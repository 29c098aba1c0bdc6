#include "storage/db_options.hpp"

#include <gtest/gtest.h>

namespace outbox::test {
namespace {

storage::db_options at(const std::string& path) {
  storage::db_options o;
  o.path = path;
  return o;
}

TEST(StorageDbOptions, AUriNamesPostgreSqlAnythingElseAFile) {
  EXPECT_TRUE(at("postgresql://u@h:5/d").postgres());
  EXPECT_TRUE(at("postgres://h/d").postgres());
  EXPECT_FALSE(at("var/outbox.db").postgres());
  EXPECT_FALSE(at("postgresql.db").postgres());
  EXPECT_FALSE(at("./postgresql://x").postgres());
}

TEST(StorageDbOptions, MessagesNeverShowAPassword) {
  struct named {
    const char* path;
    const char* shown;
  };
  for (const auto& c : {
           named{"var/outbox.db", "var/outbox.db"},
           named{"postgresql://u@h:5/d", "postgresql://u@h:5/d"},
           named{"postgresql://u:secret@h:5/d", "postgresql://u@h:5/d"},
           named{"postgres://u:p%40ss@h/d?sslmode=require",
                 "postgres://u@h/d?sslmode=require"},
           named{"postgresql://u@h/d?password=secret&sslmode=require",
                 "postgresql://u@h/d?password=(hidden)&sslmode=require"},
           named{"postgresql://h/d?sslmode=require&password=secret",
                 "postgresql://h/d?sslmode=require&password=(hidden)"},
           named{"postgresql://u:p@ss@h/d", "postgresql://u@h/d"},
           named{"postgresql://u:pa?ss@h/d", "postgresql://u@h/d"},
           named{"postgresql://h/d?sslpassword=secret",
                 "postgresql://h/d?sslpassword=(hidden)"},
           named{"postgresql://h/d?passfile=/x/pgpass",
                 "postgresql://h/d?passfile=/x/pgpass"},
       }) {
    EXPECT_EQ(at(c.path).display_name(), c.shown) << c.path;
  }
}

} // namespace
} // namespace outbox::test
