#include "agents/embeddings.hpp"


#include <fmt/format.h>
#include <sys/stat.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <mutex>

#include "agents/http.hpp"
#include "agents/json_util.hpp"
#include "agents/secrets.hpp"
#include "core/digest.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/json_text.hpp"
#include "core/sqlite.hpp"
#include "retrieval/analyzer.hpp"
#include "retrieval/index_cache.hpp"

namespace okfbench::agents {
namespace {
using nlohmann::json;

constexpr std::size_t sim_dimensions = 256;

class SimEmbedder : public retrieval::Embedder {
 public:
  std::string name() const override { return "sim"; }
  std::vector<std::vector<float>> embed(const std::vector<std::string>& texts) override {
    std::vector<std::vector<float>> out;
    out.reserve(texts.size());
    for (const std::string& text : texts) out.push_back(sim_embedding(text));
    return out;
  }
};

class OpenAIEmbedder : public retrieval::Embedder {
 public:
  OpenAIEmbedder(Endpoint endpoint, std::size_t batch) : endpoint_(std::move(endpoint)), batch_(std::max<std::size_t>(1, batch)) {}
  std::string name() const override { return "openai:" + endpoint_.model; }

  std::vector<std::vector<float>> embed(const std::vector<std::string>& texts) override {
    std::vector<std::vector<float>> out;
    for (std::size_t begin = 0; begin < texts.size(); begin += batch_) {
      std::size_t end = std::min(texts.size(), begin + batch_);
      json input = json::array();
      for (std::size_t i = begin; i < end; ++i) input.push_back(texts[i]);
      json body = {{"model", endpoint_.model}, {"input", input}};
      Headers headers{{"Content-Type", "application/json"}};
      if (!endpoint_.api_key.empty()) headers.emplace_back("Authorization", "Bearer " + endpoint_.api_key);
      std::string url = endpoint_.base_url + "/embeddings";
      std::string what = "OpenAI " + display_url(url);
      HttpResult result = post_json(url, headers, json_text(body), endpoint_.retry, what);
      for (auto& v : embeddings_from_json(result.body, end - begin, what)) out.push_back(std::move(v));
    }
    return out;
  }

 private:
  Endpoint endpoint_;
  std::size_t batch_;
};

// A FIFO at the path would block SQLite's open(2) for ever, and a file
// someone else can write could hold planted vectors: both are refused (a
// missing file is created by SQLite, owner-only by the umask).
void check_cache_file(const std::filesystem::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return;
  std::string problem;
  if (S_ISLNK(info.st_mode)) problem = "it is a symbolic link: remove it, or pass the file it names";
  else if (!S_ISREG(info.st_mode)) problem = "it is not a regular file (a FIFO, device or folder?): remove it";
  else if (std::string owner = retrieval::untrusted_owner(info.st_uid, info.st_mode); !owner.empty()) problem = owner;
  if (!problem.empty())
    throw InputError(fmt::format("embedding cache {}: {}; or pass another file to --embed-cache", path.string(), problem));
}

// SQLite table embeddings(model, text_sha256, vector BLOB of floats).
class CachedEmbedder : public retrieval::Embedder {
  // The file the user named, checked before SQLite opens it (check_cache_file).
  static SqliteDb open_cache(const std::filesystem::path& path) {
    check_cache_file(path);
    return SqliteDb(path, "embedding cache " + path.string(),
                    {.busy_timeout_ms = 10000, .open_advice = "; pass a writable file to --embed-cache", .full_disk_advice = ""});
  }

 public:
  CachedEmbedder(std::unique_ptr<retrieval::Embedder> inner, const std::filesystem::path& path)
      : inner_(std::move(inner)), db_(open_cache(path)) {
    db_.exec("CREATE TABLE IF NOT EXISTS embeddings(model TEXT NOT NULL, text_sha256 TEXT NOT NULL, vector BLOB NOT "
             "NULL, PRIMARY KEY(model, text_sha256))");
  }

  std::string name() const override { return inner_->name(); }

  std::vector<std::vector<float>> embed(const std::vector<std::string>& texts) override {
    std::lock_guard lock(mutex_);
    std::vector<std::vector<float>> out(texts.size());
    std::vector<std::string> missing;
    std::vector<std::size_t> where;
    std::vector<std::string> keys;  // of the missing texts
    for (std::size_t i = 0; i < texts.size(); ++i) {
      std::string key = sha256_hex(texts[i]);
      if (!lookup(key, out[i])) {
        missing.push_back(texts[i]);
        where.push_back(i);
        keys.push_back(std::move(key));
      }
    }
    if (missing.empty()) return out;
    std::vector<std::vector<float>> fresh = inner_->embed(missing);
    if (fresh.size() != missing.size())
      throw InputError(fmt::format("{}: asked for {} embeddings, got {}", inner_->name(), missing.size(), fresh.size()));
    db_.exec("BEGIN");
    try {
      for (std::size_t j = 0; j < fresh.size(); ++j) store(keys[j], fresh[j]);
    } catch (...) {
      db_.rollback();  // the next call can begin again
      throw;
    }
    db_.exec("COMMIT");
    for (std::size_t j = 0; j < fresh.size(); ++j) out[where[j]] = std::move(fresh[j]);
    return out;
  }

 private:
  bool lookup(const std::string& key, std::vector<float>& vector) {
    SqliteStatement find(db_, "SELECT vector FROM embeddings WHERE model = ?1 AND text_sha256 = ?2");
    find.bind(1, inner_->name());
    find.bind(2, key);
    if (find.step() != SqliteStatement::kRow) return false;
    vector.resize(find.bytes(0) / sizeof(float));
    if (!vector.empty()) std::memcpy(vector.data(), find.blob(0), vector.size() * sizeof(float));
    return true;
  }

  void store(const std::string& key, const std::vector<float>& vector) {
    SqliteStatement insert(db_, "INSERT OR REPLACE INTO embeddings(model, text_sha256, vector) VALUES(?1, ?2, ?3)");
    insert.bind(1, inner_->name());
    insert.bind(2, key);
    insert.bind_blob(3, vector.data(), vector.size() * sizeof(float));
    insert.step();
  }

  std::unique_ptr<retrieval::Embedder> inner_;
  SqliteDb db_;  // "embedding cache <path>" starts every error message
  std::mutex mutex_;
};

}  // namespace

std::vector<float> sim_embedding(std::string_view text) {
  static const retrieval::Analyzer analyzer({.stemmer = retrieval::Stemmer::porter, .stopwords = retrieval::Stopwords::lucene});
  std::vector<float> v(sim_dimensions, 0.0f);
  for (const std::string& term : analyzer.terms(text)) {
    std::uint64_t h = fnv1a(term);
    v[h % sim_dimensions] += (h >> 63) ? -1.0f : 1.0f;
  }
  retrieval::to_unit_length(v);  // all zero (no terms) stays zero
  return v;
}

std::vector<std::vector<float>> embeddings_from_json(const std::string& body, std::size_t expected,
                                                     const std::string& what) {
  if (json_util::nesting_depth(body) > json_util::kMaxDepth)
    throw InputError(fmt::format("{}: the response nests deeper than {} levels; refused", what, json_util::kMaxDepth));
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw InputError(fmt::format("{}: the response is not a JSON object; check that the URL is an OpenAI-compatible "
                                 "embeddings endpoint",
                                 what));
  if (!j.contains("data") || !j["data"].is_array())
    throw InputError(fmt::format("{}: the response has no `data` array", what));
  const json& data = j["data"];
  if (data.size() != expected)
    throw InputError(fmt::format("{}: asked for {} embeddings, `data` holds {}", what, expected, data.size()));
  std::vector<std::vector<float>> out(expected);
  std::vector<bool> seen(expected, false);
  for (std::size_t n = 0; n < data.size(); ++n) {
    const json& item = data[n];
    std::size_t index = n;
    if (item.contains("index")) {
      if (!item["index"].is_number_unsigned() || item["index"].get<std::size_t>() >= expected)
        throw InputError(fmt::format("{}: data[{}].index is not an index below {}", what, n, expected));
      index = item["index"].get<std::size_t>();
    }
    if (seen[index]) throw InputError(fmt::format("{}: data[{}].index {} appears twice", what, n, index));
    seen[index] = true;
    if (!item.contains("embedding") || !item["embedding"].is_array() || item["embedding"].empty())
      throw InputError(fmt::format("{}: data[{}].embedding is not a list of numbers (base64 encoding is not read; "
                                   "leave encoding_format unset)",
                                   what, n));
    for (const json& x : item["embedding"]) {
      if (!x.is_number() || !std::isfinite(x.get<double>()))
        throw InputError(fmt::format("{}: data[{}].embedding holds something other than a finite number", what, n));
      out[index].push_back(x.get<float>());
    }
  }
  return out;
}

std::unique_ptr<retrieval::Embedder> make_embedder(const std::string& spec, const EmbedderOptions& options) {
  std::unique_ptr<retrieval::Embedder> embedder;
  if (spec == "sim") {
    embedder = std::make_unique<SimEmbedder>();
  } else if (spec.starts_with("openai:") && spec.size() > 7) {
    Endpoint endpoint = options.endpoint;
    endpoint.model = spec.substr(7);
    embedder = std::make_unique<OpenAIEmbedder>(resolve_endpoint(Provider::openai, endpoint), options.batch);
  } else {
    throw UsageError(fmt::format("unknown embedding model '{}': use sim or openai:MODEL (e.g. "
                                 "openai:text-embedding-3-small)",
                                 spec));
  }
  if (!options.cache_db.empty()) embedder = std::make_unique<CachedEmbedder>(std::move(embedder), options.cache_db);
  return embedder;
}

}  // namespace okfbench::agents
