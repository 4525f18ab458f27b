#include "engine/regression.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <type_traits>

#include "engine/limits.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/yaml_keys.hpp"

namespace okfbench::cli {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const YAML::Node& node, const std::string& message) {
  throw InputError(path.string() + ":" + std::to_string(node.Mark().line + 1) + ": " + message);
}

template <typename T>
T read(const std::filesystem::path& path, const YAML::Node& parent, const char* key) {
  const YAML::Node node = parent[key];
  if (!node) fail(path, parent, std::string("missing `") + key + "`");
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    fail(path, node, std::string("`") + key + "` has the wrong type");
  }
}

// A number, range-checked as it is parsed (core/numbers.hpp).
template <typename Range>
auto read_number(const std::filesystem::path& path, const YAML::Node& parent, const std::string& key, Range range) {
  const YAML::Node node = parent[key];
  if (!node) fail(path, parent, "missing `" + key + "`");
  const auto parsed = [&] {
    if constexpr (std::is_same_v<Range, RealRange>) {
      return parse_real(node.IsScalar() ? node.Scalar() : std::string(), range);
    } else {
      return parse_integer(node.IsScalar() ? node.Scalar() : std::string(), range);
    }
  }();
  if (!parsed.value) fail(path, node, "`" + key + "`: " + parsed.problem);
  return *parsed.value;
}

retrieval::IndexConfig read_index(const std::filesystem::path& path, const YAML::Node& index) {
  retrieval::IndexConfig config;
  if (!index) return config;
  std::string mode = index["mode"] ? read<std::string>(path, index, "mode") : "fielded";
  if (mode != "flat" && mode != "fielded") fail(path, index["mode"], "`mode` must be flat or fielded");
  config.mode = mode == "flat" ? retrieval::FieldMode::flat : retrieval::FieldMode::fielded;
  if (index["k1"]) config.k1 = read_number(path, index, "k1", engine::limits::bm25_k1);
  if (index["b"]) config.b = read_number(path, index, "b", engine::limits::bm25_b);
  if (index["stemmer"]) config.analyzer.stemmer = retrieval::parse_stemmer(read<std::string>(path, index, "stemmer"));
  if (index["stopwords"]) {
    config.analyzer.stopwords = retrieval::parse_stopwords(read<std::string>(path, index, "stopwords"));
  }
  return config;
}

ExpectedScore read_score(const std::filesystem::path& path, const YAML::Node& node) {
  ExpectedScore score;
  score.measure = read<std::string>(path, node, "measure");
  score.score = read<std::string>(path, node, "score");
  score.expected = read_number(path, node, "expected", engine::limits::score);
  if (node["reference"]) {
    score.reference = read_number(path, node, "reference", engine::limits::score);
    score.reference_tolerance = read_number(path, node, "reference_tolerance", engine::limits::score);
    if (node["reference_source"]) score.reference_source = read<std::string>(path, node, "reference_source");
  }
  return score;
}

}  // namespace

bool equal_to_4_decimals(double actual, double expected) { return std::fabs(actual - expected) <= 0.00005 + 1e-12; }

RegressionSpec load_regression(const std::filesystem::path& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path.string());
  } catch (const YAML::BadFile&) {
    throw InputError(path.string() + ": cannot read the regression spec");
  } catch (const YAML::Exception& e) {
    throw InputError(path.string() + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  if (const auto repeated = find_duplicate_keys(root); !repeated.empty()) {
    throw InputError(describe_duplicate_keys(repeated, path.string()));
  }
  RegressionSpec spec;
  spec.name = read<std::string>(path, root, "name");
  const YAML::Node corpus = root["corpus"];
  if (!corpus) fail(path, root, "missing `corpus`");
  spec.format = read<std::string>(path, corpus, "format");
  if (spec.format != "beir" && spec.format != "smart" && spec.format != "cranfield")
    fail(path, corpus, "`format` must be beir, smart or cranfield");
  spec.path = read<std::string>(path, corpus, "path");
  if (corpus["split"]) spec.split = read<std::string>(path, corpus, "split");
  spec.config = read_index(path, root["index"]);
  if (const YAML::Node stats = root["statistics"]) {
    for (const auto& kv : stats) {
      spec.statistics[kv.first.Scalar()] = read_number(path, stats, kv.first.Scalar(), engine::limits::count);
    }
  }
  if (const YAML::Node search = root["search"]; search && search["k"]) {
    spec.k = static_cast<std::size_t>(read_number(path, search, "k", engine::limits::eval_k));
  }
  const YAML::Node measures = root["measures"];
  if (!measures || !measures.IsSequence()) fail(path, root, "missing `measures` list");
  for (const auto& node : measures) spec.scores.push_back(read_score(path, node));
  return spec;
}

}  // namespace okfbench::cli
