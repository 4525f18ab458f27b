#pragma once
// The result store of one run folder: every finished trial is written at once
// to results.sqlite (WAL mode, one row per trial key) and appended to
// results.jsonl, so a run killed at any moment loses at most the trials that
// were still in flight, and a restarted run skips exactly the stored keys.
//
// SQLite is the record of truth: a trial counts as stored once its INSERT has
// committed. The JSONL line is appended after the commit; on open, when the
// JSONL file does not hold exactly the stored records (a kill between the
// commit and the append, or in the middle of a line), it is rewritten from
// SQLite.
//
// A failed trial that is run again (resume, see engine/runner.hpp) replaces
// its record; the failed record moves to `superseded`, so the money it spent
// still counts, and results.jsonl is rewritten from SQLite by flush_jsonl()
// (or by the next open, if the process dies first).
//
// Tables (schema_version 1):
//   trials(seq INTEGER PRIMARY KEY, trial_key TEXT UNIQUE NOT NULL, bundle TEXT,
//          question_id TEXT, label TEXT, input_tokens INTEGER, evidence_recall REAL,
//          error TEXT, record TEXT NOT NULL)   -- record: the JSONL line
//   superseded(seq INTEGER PRIMARY KEY, trial_key TEXT NOT NULL, record TEXT NOT NULL)
// Every known API key (agents/secrets.hpp) is redacted from what add() and
// replace() write.
// Thread-safe: add() and replace() may be called from every worker.
// A full disk or any other failed write is an InputError, never a crash.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/sqlite.hpp"
#include "reports/record.hpp"

namespace okfbench::engine {

class ResultStore {
 public:
  // Opens or creates DIR/results.sqlite and DIR/results.jsonl (DIR is created).
  // Throws InputError when the folder or database cannot be used.
  static ResultStore open(const std::filesystem::path& dir);

  // Stores a finished trial. Returns false (and stores nothing) when a trial
  // with the same key is already stored.
  bool add(const reports::TrialRecord& record);

  // Stores `record` in place of the stored trial with its key, in one
  // transaction that moves the old record to `superseded`. Throws InputError
  // when no trial with that key is stored.
  void replace(const reports::TrialRecord& record);

  // Rewrites results.jsonl from SQLite when replace() has made it stale.
  void flush_jsonl();

  std::set<std::string> keys() const;
  std::vector<reports::TrialRecord> records() const;  // in the order they were stored
  std::vector<reports::TrialRecord> superseded() const;  // earlier runs of re-run trials, oldest first
  std::size_t size() const;

  ResultStore(ResultStore&&) noexcept;
  ResultStore& operator=(ResultStore&&) noexcept;
  ~ResultStore();

 private:
  ResultStore() = default;
  void sync_jsonl();

  std::filesystem::path dir_;
  std::optional<SqliteDb> db_;
  std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>();
  bool jsonl_stale_ = false;  // guarded by mutex_
};

}  // namespace okfbench::engine
