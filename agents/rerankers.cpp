#include "agents/rerankers.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <mutex>
#include <set>

#include "agents/http.hpp"
#include "agents/json_util.hpp"
#include "agents/secrets.hpp"
#include "core/sqlite.hpp"
#include "retrieval/analyzer.hpp"
#include "core/digest.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"

namespace okfbench::agents {
namespace {
using nlohmann::json;

std::set<std::string> terms_of(std::string_view text) {
  static const retrieval::Analyzer analyzer(
      {.stemmer = retrieval::Stemmer::porter, .stopwords = retrieval::Stopwords::lucene});
  std::vector<std::string> terms = analyzer.terms(text);
  return {terms.begin(), terms.end()};
}

class SimReranker : public retrieval::Reranker {
 public:
  std::string name() const override { return "sim"; }
  std::vector<double> score(std::string_view query, const std::vector<std::string>& documents) override {
    std::vector<double> out;
    out.reserve(documents.size());
    for (const std::string& document : documents) out.push_back(sim_rerank_score(query, document));
    return out;
  }
};

class HttpReranker : public retrieval::Reranker {
 public:
  explicit HttpReranker(Endpoint endpoint) : endpoint_(std::move(endpoint)) {}
  std::string name() const override { return "http:" + endpoint_.model; }

  std::vector<double> score(std::string_view query, const std::vector<std::string>& documents) override {
    if (documents.empty()) return {};
    json body = {{"model", endpoint_.model}, {"query", query}, {"documents", documents}, {"top_n", documents.size()}};
    Headers headers{{"Content-Type", "application/json"}};
    if (!endpoint_.api_key.empty()) headers.emplace_back("Authorization", "Bearer " + endpoint_.api_key);
    for (const auto& header : endpoint_.extra_headers) headers.push_back(header);
    std::string url = endpoint_.base_url + "/rerank";
    std::string what = "rerank " + display_url(url);
    HttpResult result = post_json(url, headers, json_text(body), endpoint_.retry, what);
    return rerank_scores_from_json(result.body, documents.size(), what);
  }

 private:
  Endpoint endpoint_;
};

// SQLite table rerank_scores(model, query_sha256, text_sha256, score).
class CachedReranker : public retrieval::Reranker {
 public:
  CachedReranker(std::unique_ptr<retrieval::Reranker> inner, const std::filesystem::path& path)
      : inner_(std::move(inner)),
        db_(path, "rerank cache " + path.string(), {.busy_timeout_ms = 10000, .open_advice = "; pass a writable file to --rerank-cache", .full_disk_advice = ""}) {
    db_.exec("CREATE TABLE IF NOT EXISTS rerank_scores(model TEXT NOT NULL, query_sha256 TEXT NOT NULL, text_sha256 "
             "TEXT NOT NULL, score REAL NOT NULL, PRIMARY KEY(model, query_sha256, text_sha256))");
  }

  std::string name() const override { return inner_->name(); }

  std::vector<double> score(std::string_view query, const std::vector<std::string>& documents) override {
    std::lock_guard lock(mutex_);
    const std::string query_key = sha256_hex(query);
    std::vector<double> out(documents.size(), 0.0);
    std::vector<std::string> missing, keys;
    std::vector<std::size_t> where;
    for (std::size_t i = 0; i < documents.size(); ++i) {
      std::string key = sha256_hex(documents[i]);
      if (lookup(query_key, key, out[i])) continue;
      missing.push_back(documents[i]);
      where.push_back(i);
      keys.push_back(std::move(key));
    }
    if (missing.empty()) return out;
    std::vector<double> fresh = inner_->score(query, missing);
    if (fresh.size() != missing.size())
      throw InputError(fmt::format("{}: asked for {} rerank scores, got {}", inner_->name(), missing.size(), fresh.size()));
    db_.exec("BEGIN");
    try {
      for (std::size_t j = 0; j < fresh.size(); ++j) store(query_key, keys[j], fresh[j]);
    } catch (...) {
      db_.rollback();  // the next call can begin again
      throw;
    }
    db_.exec("COMMIT");
    for (std::size_t j = 0; j < fresh.size(); ++j) out[where[j]] = fresh[j];
    return out;
  }

 private:
  bool lookup(const std::string& query_key, const std::string& key, double& score) {
    SqliteStatement find(db_, "SELECT score FROM rerank_scores WHERE model = ?1 AND query_sha256 = ?2 AND text_sha256 = ?3");
    find.bind(1, inner_->name());
    find.bind(2, query_key);
    find.bind(3, key);
    if (find.step() != SqliteStatement::kRow) return false;
    score = find.real(0);
    return true;
  }

  void store(const std::string& query_key, const std::string& key, double score) {
    SqliteStatement insert(
        db_, "INSERT OR REPLACE INTO rerank_scores(model, query_sha256, text_sha256, score) VALUES(?1, ?2, ?3, ?4)");
    insert.bind(1, inner_->name());
    insert.bind(2, query_key);
    insert.bind(3, key);
    insert.bind(4, score);
    insert.step();
  }

  std::unique_ptr<retrieval::Reranker> inner_;
  SqliteDb db_;  // "rerank cache <path>" starts every error message
  std::mutex mutex_;
};

// Title and description (the first two "\n\n" blocks) apart from the rest.
std::pair<std::string_view, std::string_view> head_and_body(std::string_view document) {
  std::size_t first = document.find("\n\n");
  if (first == std::string_view::npos) return {document, {}};
  std::size_t second = document.find("\n\n", first + 2);
  if (second == std::string_view::npos) return {document, {}};
  return {document.substr(0, second), document.substr(second + 2)};
}

}  // namespace

double sim_rerank_score(std::string_view query, std::string_view document) {
  std::set<std::string> wanted = terms_of(query);
  if (wanted.empty()) return 0.0;
  auto [head_text, body_text] = head_and_body(document);
  std::set<std::string> head = terms_of(head_text);
  std::set<std::string> body = terms_of(body_text);
  double points = 0.0;
  for (const std::string& term : wanted) points += 2.0 * head.count(term) + 1.0 * body.count(term);
  return points / (3.0 * static_cast<double>(wanted.size()));
}

std::vector<double> rerank_scores_from_json(const std::string& body, std::size_t documents, const std::string& what) {
  json j = json_util::parse(body, what);  // malformed, too deep, a number past a double: InputError
  if (!j.is_object())
    throw InputError(fmt::format("{}: the response is not a JSON object; check that the URL is a /rerank endpoint", what));
  if (!j.contains("results") || !j["results"].is_array())
    throw InputError(fmt::format("{}: the response has no `results` array", what));
  const json& results = j["results"];
  if (results.size() != documents)
    throw InputError(fmt::format("{}: asked to score {} documents (top_n), `results` holds {}", what, documents,
                                 results.size()));
  std::vector<double> scores(documents, 0.0);
  std::vector<bool> seen(documents, false);
  for (std::size_t n = 0; n < results.size(); ++n) {
    const json& item = results[n];
    if (!item.is_object() || !item.contains("index") || !item["index"].is_number_unsigned() ||
        item["index"].get<std::uint64_t>() >= documents)
      throw InputError(fmt::format("{}: results[{}].index is not an index below {}", what, n, documents));
    std::size_t index = item["index"].get<std::size_t>();
    if (seen[index]) throw InputError(fmt::format("{}: results[{}].index {} appears twice", what, n, index));
    seen[index] = true;
    if (!item.contains("relevance_score") || !item["relevance_score"].is_number() ||
        !std::isfinite(item["relevance_score"].get<double>()))
      throw InputError(fmt::format("{}: results[{}].relevance_score is not a finite number", what, n));
    scores[index] = item["relevance_score"].get<double>();
  }
  return scores;
}

std::unique_ptr<retrieval::Reranker> make_reranker(const std::string& spec, const RerankerOptions& options) {
  std::unique_ptr<retrieval::Reranker> reranker;
  if (spec == "sim") {
    reranker = std::make_unique<SimReranker>();
  } else if (spec.starts_with("http:") && spec.size() > 5) {
    Endpoint endpoint = options.endpoint;
    endpoint.model = spec.substr(5);
    reranker = std::make_unique<HttpReranker>(resolve_endpoint(Provider::openai, endpoint));
  } else {
    throw UsageError(fmt::format("unknown rerank model '{}': use sim or http:MODEL (a /rerank endpoint, e.g. "
                                 "http:bge-reranker-v2-m3)",
                                 spec));
  }
  if (!options.cache_db.empty()) reranker = std::make_unique<CachedReranker>(std::move(reranker), options.cache_db);
  return reranker;
}

}  // namespace okfbench::agents
