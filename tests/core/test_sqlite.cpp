#include "core/sqlite.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench {
namespace {

using ::testing::HasSubstr;

TEST(Sqlite, StoresAndReadsBackEveryColumnType) {
  SqliteDb db(test::fresh_dir("sqlite-types") / "t.db", "test db");
  db.exec("CREATE TABLE t(k TEXT PRIMARY KEY, r REAL, i INTEGER, b BLOB)");
  SqliteStatement insert(db, "INSERT INTO t VALUES(?1, ?2, ?3, ?4)");
  const char bytes[] = {'a', '\0', 'b'};
  insert.bind(1, std::string_view("key\0with nul", 12));
  insert.bind(2, std::optional<double>(0.25));
  insert.bind(3, std::optional<std::int64_t>());
  insert.bind_blob(4, bytes, sizeof bytes);
  EXPECT_EQ(insert.step(), SqliteStatement::kDone);
  EXPECT_EQ(db.changes(), 1);
  SqliteStatement select(db, "SELECT k, r, i IS NULL, b FROM t");
  ASSERT_EQ(select.step(), SqliteStatement::kRow);
  EXPECT_EQ(select.text(0), std::string("key\0with nul", 12));
  EXPECT_EQ(select.real(1), 0.25);
  EXPECT_EQ(select.integer(2), 1);
  ASSERT_EQ(select.bytes(3), sizeof bytes);
  EXPECT_EQ(std::string(static_cast<const char*>(select.blob(3)), 3), std::string(bytes, 3));
  EXPECT_EQ(select.step(), SqliteStatement::kDone);
}

TEST(Sqlite, AConstraintIsAResultOnlyWhereTheCallerAsksForIt) {
  SqliteDb db(test::fresh_dir("sqlite-constraint") / "t.db", "test db");
  db.exec("CREATE TABLE t(k TEXT PRIMARY KEY)");
  db.exec("INSERT INTO t VALUES('a')");
  SqliteStatement again(db, "INSERT INTO t VALUES('a')");
  EXPECT_EQ(again.step_or_constraint(), SqliteStatement::kConstraint);
  SqliteStatement strict(db, "INSERT INTO t VALUES('a')");
  try {
    strict.step();
    FAIL() << "a UNIQUE violation must throw from step()";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("test db: UNIQUE constraint failed"));
  }
}

TEST(Sqlite, ErrorsNameTheDatabaseTheStatementAndWhatToDo) {
  SqliteDb db(test::fresh_dir("sqlite-errors") / "t.db", "test db");
  try {
    db.exec("SELECT * FROM missing");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("test db: no such table: missing (while running \"SELECT * FROM missing\")"));
  }
  EXPECT_THROW(SqliteStatement(db, "SELEC nonsense"), InputError);
  try {
    SqliteDb nowhere(test::fresh_dir("sqlite-open") / "no" / "such" / "folder.db", "cache x",
                     {.busy_timeout_ms = 10000, .open_advice = "; pass a writable file", .full_disk_advice = ""});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cache x: cannot open: unable to open database file; pass a writable file"));
  }
}

TEST(Sqlite, ARolledBackTransactionLeavesNothingAndTheNextOneBegins) {
  SqliteDb db(test::fresh_dir("sqlite-rollback") / "t.db", "test db");
  db.exec("CREATE TABLE t(k TEXT)");
  db.exec("BEGIN");
  db.exec("INSERT INTO t VALUES('a')");
  db.rollback();
  db.exec("BEGIN");
  db.exec("COMMIT");
  SqliteStatement count(db, "SELECT COUNT(*) FROM t");
  count.step();
  EXPECT_EQ(count.integer(0), 0);
}

TEST(Sqlite, AMovedDatabaseStaysOpenInItsNewOwner) {
  SqliteDb a(test::fresh_dir("sqlite-move") / "t.db", "test db");
  a.exec("CREATE TABLE t(k TEXT)");
  SqliteDb b = std::move(a);
  EXPECT_NO_THROW(b.exec("INSERT INTO t VALUES('x')"));
  EXPECT_EQ(b.label(), "test db");
}

}  // namespace
}  // namespace okfbench
