#pragma once
// SQLite helpers shared by the agents' on-disk caches (responses in
// decorators.cpp, embeddings in embeddings.cpp). Private to agents/.
#include <sqlite3.h>

#include <fmt/format.h>

#include <cstddef>
#include <string>

#include "retrieval/error.hpp"

namespace okfbench::agents {

// Throws InputError "<label>: <what>: <SQLite's message>" unless `rc` is
// SQLITE_OK, SQLITE_ROW or SQLITE_DONE.
inline void check_sqlite(int rc, sqlite3* db, const std::string& label, const std::string& what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
    throw InputError(fmt::format("{}: {}: {}", label, what, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
}

// A prepared statement, finalized on every path out.
class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, const char* sql, std::string label) : db_(db), label_(std::move(label)) {
    check_sqlite(sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr), db, label_, sql);
  }
  ~SqliteStatement() { sqlite3_finalize(stmt_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  void bind(int i, const std::string& text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, double value) { sqlite3_bind_double(stmt_, i, value); }
  void bind_blob(int i, const void* data, std::size_t bytes) {
    sqlite3_bind_blob(stmt_, i, data, static_cast<int>(bytes), SQLITE_TRANSIENT);
  }
  // SQLITE_ROW or SQLITE_DONE; anything else throws.
  int step() {
    int rc = sqlite3_step(stmt_);
    check_sqlite(rc, db_, label_, "query");
    return rc;
  }
  std::string column(int i) const {
    const unsigned char* text = sqlite3_column_text(stmt_, i);
    return text ? std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, i)))
                : std::string();
  }
  double column_double(int i) const { return sqlite3_column_double(stmt_, i); }
  const void* column_blob(int i) const { return sqlite3_column_blob(stmt_, i); }
  std::size_t column_bytes(int i) const { return static_cast<std::size_t>(sqlite3_column_bytes(stmt_, i)); }

 private:
  sqlite3* db_;
  std::string label_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace okfbench::agents
