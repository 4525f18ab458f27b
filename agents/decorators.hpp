#pragma once
// Models that wrap other models.
//
//   RecordingModel  passes calls through and appends each new exchange to a
//                   cassette (JSONL, one line per request hash):
//                     {"hash": "<16 hex>", "model": "<inner name>", "request": {...}, "response": {...}}
//                   Every secret given and every key agents/secrets.hpp knows
//                   is replaced by "[REDACTED]" in each line before it is
//                   written, as a second line of defence: requests never
//                   carry keys in the first place.
//   ReplayModel     answers from a cassette; a request it has not seen is a
//                   permanent CallError naming the hash and the cassette.
//                   Cassette lines are read under the limits of
//                   agents/json_util.hpp (depth, counts), like a live reply.
//   CachingModel    a response cache in SQLite keyed by endpoint, model,
//                   request and repeat index (so repeats of one trial stay
//                   distinct samples); the full key text is stored and
//                   compared, so hash collisions cannot return a wrong answer.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agents/model.hpp"
#include "agents/secrets.hpp"
#include "core/sqlite.hpp"

namespace okfbench::agents {

class RecordingModel : public ChatModel {
 public:
  RecordingModel(std::unique_ptr<ChatModel> inner, std::filesystem::path cassette, std::vector<std::string> secrets);
  ChatResponse chat(const ChatRequest& request) override;
  std::string name() const override { return inner_->name(); }

 private:
  std::unique_ptr<ChatModel> inner_;
  std::filesystem::path cassette_;
  std::vector<std::string> secrets_;
  std::set<std::uint64_t> recorded_;
  std::mutex mutex_;
};

class ReplayModel : public ChatModel {
 public:
  // Throws InputError for a missing cassette or a malformed line (file:line).
  explicit ReplayModel(std::filesystem::path cassette);
  ChatResponse chat(const ChatRequest& request) override;
  std::string name() const override { return name_; }
  std::size_t size() const { return responses_.size(); }

 private:
  std::filesystem::path cassette_;
  std::string name_ = "replay";
  std::map<std::uint64_t, std::string> responses_;  // hash -> response JSON
};

class CachingModel : public ChatModel {
 public:
  // Opens (creating) the SQLite database at `database`. Throws InputError when it cannot.
  // `secrets` are redacted from keys and stored responses, as in cassettes.
  CachingModel(std::unique_ptr<ChatModel> inner, const std::filesystem::path& database, std::string endpoint,
               int repeat_index = 0, std::vector<std::string> secrets = {});
  ~CachingModel() override;
  CachingModel(const CachingModel&) = delete;
  CachingModel& operator=(const CachingModel&) = delete;
  ChatResponse chat(const ChatRequest& request) override;
  std::string name() const override { return inner_->name(); }
  std::size_t hits() const { return hits_; }
  std::size_t misses() const { return misses_; }

 private:
  std::string key_text(const ChatRequest& request) const;
  std::unique_ptr<ChatModel> inner_;
  std::string endpoint_;
  int repeat_;
  std::vector<std::string> secrets_;
  std::optional<SqliteDb> db_;  // opened after its folder is made
  std::size_t hits_ = 0, misses_ = 0;
  std::mutex mutex_;
};

}  // namespace okfbench::agents
