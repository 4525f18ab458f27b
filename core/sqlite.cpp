#include "core/sqlite.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cstring>
#include <utility>

#include "core/error.hpp"

namespace okfbench {

static_assert(SqliteStatement::kRow == SQLITE_ROW && SqliteStatement::kDone == SQLITE_DONE &&
              SqliteStatement::kConstraint == SQLITE_CONSTRAINT);

SqliteDb::SqliteDb(const std::filesystem::path& path, std::string label, Options options)
    : label_(std::move(label)), full_disk_advice_(std::move(options.full_disk_advice)) {
  const int rc = sqlite3_open(path.c_str(), &db_);
  if (rc != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw InputError(fmt::format("{}: cannot open: {}{}", label_, message, options.open_advice));
  }
  sqlite3_busy_timeout(db_, options.busy_timeout_ms);
  try {
    exec("PRAGMA journal_mode=WAL");
  } catch (...) {
    sqlite3_close(db_);  // no destructor runs for a constructor that throws
    throw;
  }
}

SqliteDb::~SqliteDb() { sqlite3_close(db_); }

SqliteDb::SqliteDb(SqliteDb&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      label_(std::move(other.label_)),
      full_disk_advice_(std::move(other.full_disk_advice_)) {}

SqliteDb& SqliteDb::operator=(SqliteDb&& other) noexcept {
  if (this != &other) {
    sqlite3_close(db_);
    db_ = std::exchange(other.db_, nullptr);
    label_ = std::move(other.label_);
    full_disk_advice_ = std::move(other.full_disk_advice_);
  }
  return *this;
}

void SqliteDb::exec(const char* sql) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
    throw InputError(fmt::format("{}: {} (while running \"{}\")", label_, error(), sql));
  }
}

void SqliteDb::rollback() noexcept { sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }

int SqliteDb::changes() const { return sqlite3_changes(db_); }

std::string SqliteDb::error() const {
  std::string message = sqlite3_errmsg(db_);
  if (const int error = sqlite3_system_errno(db_); error != 0) message += fmt::format(" ({})", std::strerror(error));
  const int code = sqlite3_errcode(db_);
  if ((code == SQLITE_FULL || code == SQLITE_IOERR) && !full_disk_advice_.empty()) message += full_disk_advice_;
  return message;
}

SqliteStatement::SqliteStatement(const SqliteDb& db, const char* sql) : db_(db) {
  if (sqlite3_prepare_v2(db.handle(), sql, -1, &stmt_, nullptr) != SQLITE_OK) {
    throw InputError(fmt::format("{}: cannot prepare \"{}\": {}", db.label(), sql, db.error()));
  }
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

void SqliteStatement::bind(int i, std::string_view text) {
  sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}
void SqliteStatement::bind(int i, double value) { sqlite3_bind_double(stmt_, i, value); }
void SqliteStatement::bind(int i, std::int64_t value) { sqlite3_bind_int64(stmt_, i, value); }
void SqliteStatement::bind(int i, const std::optional<double>& value) {
  if (value) {
    sqlite3_bind_double(stmt_, i, *value);
  } else {
    sqlite3_bind_null(stmt_, i);
  }
}
void SqliteStatement::bind(int i, const std::optional<std::int64_t>& value) {
  if (value) {
    sqlite3_bind_int64(stmt_, i, *value);
  } else {
    sqlite3_bind_null(stmt_, i);
  }
}
void SqliteStatement::bind_blob(int i, const void* data, std::size_t bytes) {
  sqlite3_bind_blob64(stmt_, i, data, static_cast<sqlite3_uint64>(bytes), SQLITE_TRANSIENT);
}

int SqliteStatement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) throw InputError(fmt::format("{}: {}", db_.label(), db_.error()));
  return rc;
}

int SqliteStatement::step_or_constraint() {
  const int rc = sqlite3_step(stmt_);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE && (rc & 0xff) != SQLITE_CONSTRAINT) {
    throw InputError(fmt::format("{}: {}", db_.label(), db_.error()));
  }
  return rc & 0xff;
}

std::string SqliteStatement::text(int column) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column))) : std::string();
}
double SqliteStatement::real(int column) const { return sqlite3_column_double(stmt_, column); }
std::int64_t SqliteStatement::integer(int column) const { return sqlite3_column_int64(stmt_, column); }
const void* SqliteStatement::blob(int column) const { return sqlite3_column_blob(stmt_, column); }
std::size_t SqliteStatement::bytes(int column) const { return static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)); }

}  // namespace okfbench
