#include "engine/store.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "agents/secrets.hpp"
#include "reports/report_files.hpp"
#include "core/files.hpp"
#include "core/error.hpp"
#include "core/saturate.hpp"
#include "core/sqlite.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;

std::optional<std::int64_t> total_input(const reports::TrialRecord& r) {
  std::int64_t sum = 0;
  for (const auto& turn : r.turns) {
    if (!turn.input_tokens) return std::nullopt;
    sum = saturating_add(sum, *turn.input_tokens);
  }
  return sum;
}

std::vector<std::string> stored_lines(const SqliteDb& db) {
  std::vector<std::string> lines;
  SqliteStatement select(db, "SELECT record FROM trials ORDER BY seq");
  while (select.step() == SqliteStatement::kRow) lines.push_back(select.text(0));
  return lines;
}

// Appends one line; a short write, a full disk or a failed close is an
// InputError naming the file and the system's reason.
void append_line(const fs::path& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(fmt::format("cannot append to {}: {}", path.string(), std::strerror(errno)));
  const std::string text = line + "\n";
  std::size_t done = 0;
  int error = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = errno;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    throw InputError(fmt::format("cannot append to {}: {}; the trial is stored in results.sqlite and the file is "
                                 "rewritten from it when the folder is opened again",
                                 path.string(), std::strerror(error)));
  }
}

}  // namespace

ResultStore ResultStore::open(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("cannot create the output folder {}: {}", dir.string(), ec.message()));
  ResultStore store;
  store.dir_ = dir;
  const fs::path db_path = dir / "results.sqlite";
  store.db_.emplace(db_path, "results.sqlite",
                    SqliteDb::Options{.busy_timeout_ms = 5000,
                                      .open_advice = fmt::format(" ({}); check that the folder is writable", db_path.string()),
                                      .full_disk_advice = "; free some space (or raise the quota) and run again with the "
                                                          "same --out to resume"});
  // NORMAL in WAL mode survives a killed process (the WAL is in the OS's
  // hands once written); only a power cut can lose the last commits.
  store.db_->exec("PRAGMA synchronous=NORMAL");
  store.db_->exec(
       "CREATE TABLE IF NOT EXISTS trials(seq INTEGER PRIMARY KEY, trial_key TEXT UNIQUE NOT NULL, bundle TEXT, "
       "question_id TEXT, label TEXT, input_tokens INTEGER, evidence_recall REAL, error TEXT, record TEXT NOT NULL)");
  store.db_->exec(
       "CREATE TABLE IF NOT EXISTS superseded(seq INTEGER PRIMARY KEY, trial_key TEXT NOT NULL, record TEXT NOT NULL)");
  store.sync_jsonl();
  return store;
}

void ResultStore::sync_jsonl() {
  const fs::path path = dir_ / "results.jsonl";
  const std::vector<std::string> lines = stored_lines(*db_);
  std::string expected;
  for (const std::string& line : lines) expected += line + "\n";
  std::ifstream in(path, std::ios::binary);
  std::ostringstream current;
  if (in) current << in.rdbuf();
  if (current.str() != expected) write_atomically(path, expected);
}

namespace {

// The trials table's columns ?1..?8, in the one order add() and replace() use.
void bind_trial(SqliteStatement& statement, const reports::TrialRecord& record, const std::string& line) {
  statement.bind(1, record.trial_key);
  statement.bind(2, record.bundle);
  statement.bind(3, record.question_id);
  statement.bind(4, record.config.label());
  statement.bind(5, total_input(record));
  statement.bind(6, record.evidence_recall);
  statement.bind(7, agents::redact(record.error));
  statement.bind(8, line);
}

}  // namespace

bool ResultStore::add(const reports::TrialRecord& record) {
  // A second line of defence: any key that reached the record (an error body
  // that echoes it) is replaced before the record reaches a file.
  const std::string line = agents::redact_json(reports::to_jsonl_line(record));
  std::lock_guard lock(*mutex_);
  SqliteStatement insert(*db_,
                   "INSERT INTO trials(trial_key, bundle, question_id, label, input_tokens, evidence_recall, error, record) "
                   "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  bind_trial(insert, record, line);
  if (insert.step_or_constraint() == SqliteStatement::kConstraint) return false;
  if (!jsonl_stale_) append_line(dir_ / "results.jsonl", line);  // a stale file is rewritten whole by flush_jsonl()
  return true;
}

void ResultStore::replace(const reports::TrialRecord& record) {
  const std::string line = agents::redact_json(reports::to_jsonl_line(record));  // as in add()
  std::lock_guard lock(*mutex_);
  db_->exec("BEGIN IMMEDIATE");
  try {
    SqliteStatement keep(*db_, "INSERT INTO superseded(trial_key, record) SELECT trial_key, record FROM trials WHERE trial_key = ?1");
    keep.bind(1, record.trial_key);
    keep.step();
    if (db_->changes() != 1) throw InputError(fmt::format("results.sqlite: no stored trial {} to replace", record.trial_key));
    SqliteStatement update(*db_,
                     "UPDATE trials SET bundle = ?2, question_id = ?3, label = ?4, input_tokens = ?5, evidence_recall = ?6, "
                     "error = ?7, record = ?8 WHERE trial_key = ?1");
    bind_trial(update, record, line);
    update.step();
    db_->exec("COMMIT");
  } catch (...) {
    db_->rollback();
    throw;
  }
  jsonl_stale_ = true;
}

void ResultStore::flush_jsonl() {
  std::lock_guard lock(*mutex_);
  if (!jsonl_stale_) return;
  sync_jsonl();
  jsonl_stale_ = false;
}

std::set<std::string> ResultStore::keys() const {
  std::lock_guard lock(*mutex_);
  std::set<std::string> out;
  SqliteStatement select(*db_, "SELECT trial_key FROM trials");
  while (select.step() == SqliteStatement::kRow) out.insert(select.text(0));
  return out;
}

std::vector<reports::TrialRecord> ResultStore::records() const {
  std::lock_guard lock(*mutex_);
  std::vector<reports::TrialRecord> out;
  SqliteStatement select(*db_, "SELECT seq, record FROM trials ORDER BY seq");
  while (select.step() == SqliteStatement::kRow) {
    out.push_back(reports::trial_from_json_text(select.text(1), fmt::format("results.sqlite row {}", select.integer(0))));
  }
  return out;
}

std::vector<reports::TrialRecord> ResultStore::superseded() const {
  std::lock_guard lock(*mutex_);
  std::vector<reports::TrialRecord> out;
  SqliteStatement select(*db_, "SELECT seq, record FROM superseded ORDER BY seq");
  while (select.step() == SqliteStatement::kRow) {
    out.push_back(reports::trial_from_json_text(select.text(1), fmt::format("results.sqlite superseded row {}", select.integer(0))));
  }
  return out;
}

std::size_t ResultStore::size() const {
  std::lock_guard lock(*mutex_);
  SqliteStatement count(*db_, "SELECT COUNT(*) FROM trials");
  count.step();
  return static_cast<std::size_t>(count.integer(0));
}

ResultStore::ResultStore(ResultStore&& other) noexcept
    : dir_(std::move(other.dir_)),
      db_(std::move(other.db_)),
      mutex_(std::move(other.mutex_)),
      jsonl_stale_(other.jsonl_stale_) {}

ResultStore& ResultStore::operator=(ResultStore&& other) noexcept {
  if (this != &other) {
    dir_ = std::move(other.dir_);
    db_ = std::move(other.db_);
    mutex_ = std::move(other.mutex_);
    jsonl_stale_ = other.jsonl_stale_;
  }
  return *this;
}

ResultStore::~ResultStore() = default;

}  // namespace okfbench::engine
