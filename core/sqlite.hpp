#pragma once
// One SQLite connection and one prepared-statement class for every database
// okfbench keeps: the result store (results.sqlite), the response cache, the
// embedding and reranker caches. Every failure is an InputError that names
// the database, the statement and SQLite's reason, with the system's reason
// when a write failed ("disk I/O error (No space left on device)").
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace okfbench {

class SqliteDb {
 public:
  struct Options {
    int busy_timeout_ms = 10000;   // how long a writer waits for another process's lock
    std::string open_advice;       // appended to "cannot open" ("; pass a writable file to --embed-cache")
    std::string full_disk_advice;  // appended to an error on a full disk or a failed write
  };

  // Opens (creating) `path` in WAL mode. `label` names the database in every
  // message ("response cache /x/cache.db"). InputError when it cannot.
  SqliteDb(const std::filesystem::path& path, std::string label, Options options);
  SqliteDb(const std::filesystem::path& path, std::string label) : SqliteDb(path, std::move(label), Options{}) {}
  ~SqliteDb();
  SqliteDb(SqliteDb&& other) noexcept;
  SqliteDb& operator=(SqliteDb&& other) noexcept;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs `sql` (one or more statements); InputError "<label>: <reason> (while running "<sql>")".
  void exec(const char* sql);
  // Ends an open transaction, ignoring errors: for the path out of a failed one.
  void rollback() noexcept;
  // Rows changed by the last INSERT, UPDATE or DELETE.
  int changes() const;
  // SQLite's last message, the system's reason, and the full-disk advice where it applies.
  std::string error() const;
  const std::string& label() const { return label_; }
  sqlite3* handle() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
  std::string label_;
  std::string full_disk_advice_;
};

// A prepared statement, finalized on every path out. Columns and parameters
// are numbered as SQLite numbers them (parameters from 1, columns from 0).
class SqliteStatement {
 public:
  SqliteStatement(const SqliteDb& db, const char* sql);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  void bind(int i, std::string_view text);
  void bind(int i, double value);
  void bind(int i, std::int64_t value);
  void bind(int i, const std::optional<double>& value);        // NULL when absent
  void bind(int i, const std::optional<std::int64_t>& value);  // NULL when absent
  void bind_blob(int i, const void* data, std::size_t bytes);

  // kRow or kDone; anything else throws.
  int step();
  // kRow, kDone or kConstraint (a UNIQUE or NOT NULL violation); anything else throws.
  int step_or_constraint();
  static constexpr int kRow = 100, kDone = 101, kConstraint = 19;  // SQLITE_ROW, SQLITE_DONE, SQLITE_CONSTRAINT

  std::string text(int column) const;
  double real(int column) const;
  std::int64_t integer(int column) const;
  const void* blob(int column) const;
  std::size_t bytes(int column) const;

 private:
  const SqliteDb& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace okfbench
