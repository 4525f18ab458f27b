#include "agents/decorators.hpp"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agents/cache_model.hpp"
#include "agents/call_error.hpp"
#include "core/hash.hpp"
#include "agents/json_util.hpp"
#include "core/sqlite.hpp"
#include "agents/wire_json.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"

namespace okfbench::agents {
namespace {
using nlohmann::json;

std::uint64_t parse_hash(const std::string& text, const std::string& where) {
  std::uint64_t value = 0;
  // from_chars takes no sign, prefix or space, which stoull did ("-1" wrapped).
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (text.size() == 16 && ec == std::errc() && end == text.data() + text.size()) return value;
  throw InputError(fmt::format("{}: 'hash' must be 16 hex digits, got '{}'", where, text));
}

// The given secrets and every key resolved so far in this process.
std::vector<std::string> all_secrets(const std::vector<std::string>& given) {
  std::vector<std::string> secrets = known_secrets();
  secrets.insert(secrets.end(), given.begin(), given.end());
  return secrets;
}
// Calls `each(entry, hash, line_number, where)` for every non-empty line of a
// cassette; a malformed line is an InputError naming file:line.
template <class Each>
void read_cassette(std::istream& in, const std::filesystem::path& cassette, Each each) {
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const std::string where = fmt::format("{}:{}", cassette.string(), number);
    json entry = json_util::parse(line, where);
    const std::uint64_t h = parse_hash(json_util::require_string(entry, "hash", where), where);
    each(entry, h, number, where);
  }
}
}  // namespace

RecordingModel::RecordingModel(std::unique_ptr<ChatModel> inner, std::filesystem::path cassette,
                               std::vector<std::string> secrets)
    : inner_(std::move(inner)), cassette_(std::move(cassette)), secrets_(std::move(secrets)) {
  std::ifstream in(cassette_);  // a cassette not written yet has nothing recorded
  read_cassette(in, cassette_, [&](const json&, std::uint64_t h, int, const std::string&) { recorded_.insert(h); });
}

ChatResponse RecordingModel::chat(const ChatRequest& request) {
  ChatResponse response = inner_->chat(request);
  std::uint64_t h = wire_json::request_hash(request);
  std::lock_guard lock(mutex_);
  if (!recorded_.insert(h).second) return response;
  json line = {{"hash", hex(h)},
               {"model", inner_->name()},
               {"request", json::parse(wire_json::request_to_json(request))},
               {"response", json::parse(wire_json::response_to_json(response))}};
  std::ofstream out(cassette_, std::ios::app);
  out << redact_json(json_text(line), all_secrets(secrets_)) << '\n';
  if (!out) throw InputError(fmt::format("cannot append to cassette {}", cassette_.string()));
  return response;
}

ReplayModel::ReplayModel(std::filesystem::path cassette) : cassette_(std::move(cassette)) {
  std::ifstream in(cassette_);
  if (!in) throw InputError(fmt::format("cannot read cassette {}: record one with --record", cassette_.string()));
  read_cassette(in, cassette_, [&](const json& entry, std::uint64_t h, int number, const std::string& where) {
    responses_[h] = json_util::require(entry, "response", where).dump();
    if (number == 1) name_ = "replay:" + json_util::optional_string(entry, "model", where).value_or("?");
  });
}

ChatResponse ReplayModel::chat(const ChatRequest& request) {
  std::uint64_t h = wire_json::request_hash(request);
  auto it = responses_.find(h);
  if (it == responses_.end())
    throw CallError(Failure::permanent,
                    fmt::format("replay: request {} is not in cassette {} ({} recorded); the run diverged from the "
                                "recording, so record it again",
                                hex(h), cassette_.string(), responses_.size()));
  return wire_json::response_from_json(it->second);
}

CachingModel::CachingModel(std::unique_ptr<ChatModel> inner, const std::filesystem::path& database,
                           std::string endpoint, int repeat_index, std::vector<std::string> secrets)
    : inner_(std::move(inner)), endpoint_(std::move(endpoint)), repeat_(repeat_index), secrets_(std::move(secrets)) {
  if (database.has_parent_path()) std::filesystem::create_directories(database.parent_path());
  db_.emplace(database, "response cache " + database.string());
  db_->exec("CREATE TABLE IF NOT EXISTS responses (hash TEXT NOT NULL, key TEXT NOT NULL, endpoint TEXT, "
            "model TEXT, repeat INTEGER, response TEXT NOT NULL, PRIMARY KEY (hash, key));");
}

CachingModel::~CachingModel() = default;

std::string CachingModel::key_text(const ChatRequest& request) const {
  return redact(fmt::format("{}\n{}\n{}\n{}", endpoint_, inner_->name(), repeat_, wire_json::request_to_json(request)),
                all_secrets(secrets_));
}

ChatResponse CachingModel::chat(const ChatRequest& request) {
  std::string key = key_text(request);
  std::string h = hex(fnv1a(key));
  {
    std::lock_guard lock(mutex_);
    SqliteStatement find(*db_, "SELECT response FROM responses WHERE hash = ?1 AND key = ?2");
    find.bind(1, h);
    find.bind(2, key);
    if (find.step() == SqliteStatement::kRow) {
      ++hits_;
      return wire_json::response_from_json(find.text(0));
    }
  }
  ChatResponse response = inner_->chat(request);
  std::lock_guard lock(mutex_);
  ++misses_;
  SqliteStatement insert(*db_, "INSERT OR REPLACE INTO responses VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  insert.bind(1, h);
  insert.bind(2, key);
  insert.bind(3, endpoint_);
  insert.bind(4, inner_->name());
  insert.bind(5, std::to_string(repeat_));
  insert.bind(6, redact_json(wire_json::response_to_json(response), all_secrets(secrets_)));
  insert.step();
  return response;
}

}  // namespace okfbench::agents
