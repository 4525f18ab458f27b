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
// Table (schema_version 1):
//   trials(seq INTEGER PRIMARY KEY, trial_key TEXT UNIQUE NOT NULL, bundle TEXT,
//          question_id TEXT, label TEXT, input_tokens INTEGER, evidence_recall REAL,
//          error TEXT, record TEXT NOT NULL)   -- record: the JSONL line
// Every known API key (agents/secrets.hpp) is redacted from what add() writes.
// Thread-safe: add() may be called from every worker.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "reports/record.hpp"

struct sqlite3;

namespace okfbench::harness {

class ResultStore {
 public:
  // Opens or creates DIR/results.sqlite and DIR/results.jsonl (DIR is created).
  // Throws InputError when the folder or database cannot be used.
  static ResultStore open(const std::filesystem::path& dir);

  // Stores a finished trial. Returns false (and stores nothing) when a trial
  // with the same key is already stored.
  bool add(const reports::TrialRecord& record);

  std::set<std::string> keys() const;
  std::vector<reports::TrialRecord> records() const;  // in the order they were stored
  std::size_t size() const;

  ResultStore(ResultStore&&) noexcept;
  ResultStore& operator=(ResultStore&&) noexcept;
  ~ResultStore();

 private:
  ResultStore() = default;
  void sync_jsonl();

  std::filesystem::path dir_;
  sqlite3* db_ = nullptr;
  std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>();
};

}  // namespace okfbench::harness
