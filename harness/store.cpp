#include "harness/store.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <utility>

#include "agents/secrets.hpp"
#include "reports/report_files.hpp"
#include "retrieval/error.hpp"
#include "retrieval/saturate.hpp"

namespace okfbench::harness {
namespace {

namespace fs = std::filesystem;

// A prepared statement, finalized on every path out.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
      throw InputError(fmt::format("results.sqlite: cannot prepare \"{}\": {}", sql, sqlite3_errmsg(db)));
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind(int i, const std::string& text) { sqlite3_bind_text(stmt_, i, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT); }
  void bind(int i, const std::optional<double>& value) {
    if (value) {
      sqlite3_bind_double(stmt_, i, *value);
    } else {
      sqlite3_bind_null(stmt_, i);
    }
  }
  void bind(int i, const std::optional<std::int64_t>& value) {
    if (value) {
      sqlite3_bind_int64(stmt_, i, *value);
    } else {
      sqlite3_bind_null(stmt_, i);
    }
  }
  // SQLITE_ROW, SQLITE_DONE or SQLITE_CONSTRAINT; anything else throws.
  int step() {
    const int rc = sqlite3_step(stmt_);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE && (rc & 0xff) != SQLITE_CONSTRAINT) {
      throw InputError(fmt::format("results.sqlite: {}", sqlite3_errmsg(db_)));
    }
    return rc & 0xff;
  }
  std::string text(int column) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column))) : std::string();
  }
  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

void exec(sqlite3* db, const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message ? message : "unknown error";
    sqlite3_free(message);
    throw InputError(fmt::format("results.sqlite: {} (while running \"{}\")", text, sql));
  }
}

std::optional<std::int64_t> total_input(const reports::TrialRecord& r) {
  std::int64_t sum = 0;
  for (const auto& turn : r.turns) {
    if (!turn.input_tokens) return std::nullopt;
    sum = saturating_add(sum, *turn.input_tokens);
  }
  return sum;
}

std::vector<std::string> stored_lines(sqlite3* db) {
  std::vector<std::string> lines;
  Statement select(db, "SELECT record FROM trials ORDER BY seq");
  while (select.step() == SQLITE_ROW) lines.push_back(select.text(0));
  return lines;
}

}  // namespace

ResultStore ResultStore::open(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("cannot create the output folder {}: {}", dir.string(), ec.message()));
  ResultStore store;
  store.dir_ = dir;
  const fs::path db_path = dir / "results.sqlite";
  if (sqlite3_open(db_path.c_str(), &store.db_) != SQLITE_OK) {
    const std::string message = store.db_ ? sqlite3_errmsg(store.db_) : "out of memory";
    throw InputError(fmt::format("cannot open {}: {}", db_path.string(), message));
  }
  sqlite3_busy_timeout(store.db_, 5000);
  exec(store.db_, "PRAGMA journal_mode=WAL");
  // NORMAL in WAL mode survives a killed process (the WAL is in the OS's
  // hands once written); only a power cut can lose the last commits.
  exec(store.db_, "PRAGMA synchronous=NORMAL");
  exec(store.db_,
       "CREATE TABLE IF NOT EXISTS trials(seq INTEGER PRIMARY KEY, trial_key TEXT UNIQUE NOT NULL, bundle TEXT, "
       "question_id TEXT, label TEXT, input_tokens INTEGER, evidence_recall REAL, error TEXT, record TEXT NOT NULL)");
  store.sync_jsonl();
  return store;
}

void ResultStore::sync_jsonl() {
  const fs::path path = dir_ / "results.jsonl";
  const std::vector<std::string> lines = stored_lines(db_);
  std::string expected;
  for (const std::string& line : lines) expected += line + "\n";
  std::ifstream in(path, std::ios::binary);
  std::ostringstream current;
  if (in) current << in.rdbuf();
  if (current.str() != expected) reports::write_text_atomically(path, expected);
}

bool ResultStore::add(const reports::TrialRecord& record) {
  // A second line of defence: any key that reached the record (an error body
  // that echoes it) is replaced before the record reaches a file.
  const std::string line = agents::redact_json(reports::to_jsonl_line(record));
  std::lock_guard lock(*mutex_);
  Statement insert(db_,
                   "INSERT INTO trials(trial_key, bundle, question_id, label, input_tokens, evidence_recall, error, record) "
                   "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  insert.bind(1, record.trial_key);
  insert.bind(2, record.bundle);
  insert.bind(3, record.question_id);
  insert.bind(4, record.config.label());
  insert.bind(5, total_input(record));
  insert.bind(6, record.evidence_recall);
  insert.bind(7, agents::redact(record.error));
  insert.bind(8, line);
  if (insert.step() == SQLITE_CONSTRAINT) return false;
  std::FILE* file = std::fopen((dir_ / "results.jsonl").c_str(), "ab");
  if (!file) throw InputError(fmt::format("cannot append to {}", (dir_ / "results.jsonl").string()));
  const std::string text = line + "\n";
  const bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  if (std::fclose(file) != 0 || !ok) throw InputError(fmt::format("cannot append to {}: disk full?", (dir_ / "results.jsonl").string()));
  return true;
}

std::set<std::string> ResultStore::keys() const {
  std::lock_guard lock(*mutex_);
  std::set<std::string> out;
  Statement select(db_, "SELECT trial_key FROM trials");
  while (select.step() == SQLITE_ROW) out.insert(select.text(0));
  return out;
}

std::vector<reports::TrialRecord> ResultStore::records() const {
  std::lock_guard lock(*mutex_);
  std::vector<reports::TrialRecord> out;
  Statement select(db_, "SELECT seq, record FROM trials ORDER BY seq");
  while (select.step() == SQLITE_ROW) {
    out.push_back(reports::trial_from_json_text(select.text(1), fmt::format("results.sqlite row {}", select.integer(0))));
  }
  return out;
}

std::size_t ResultStore::size() const {
  std::lock_guard lock(*mutex_);
  Statement count(db_, "SELECT COUNT(*) FROM trials");
  count.step();
  return static_cast<std::size_t>(count.integer(0));
}

ResultStore::ResultStore(ResultStore&& other) noexcept
    : dir_(std::move(other.dir_)), db_(std::exchange(other.db_, nullptr)), mutex_(std::move(other.mutex_)) {}

ResultStore& ResultStore::operator=(ResultStore&& other) noexcept {
  if (this != &other) {
    if (db_) sqlite3_close(db_);
    dir_ = std::move(other.dir_);
    db_ = std::exchange(other.db_, nullptr);
    mutex_ = std::move(other.mutex_);
  }
  return *this;
}

ResultStore::~ResultStore() {
  if (db_) sqlite3_close(db_);
}

}  // namespace okfbench::harness
