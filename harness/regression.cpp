#include "harness/regression.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>

#include "retrieval/error.hpp"

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

retrieval::IndexConfig read_index(const std::filesystem::path& path, const YAML::Node& index) {
  retrieval::IndexConfig config;
  if (!index) return config;
  std::string mode = index["mode"] ? read<std::string>(path, index, "mode") : "fielded";
  if (mode != "flat" && mode != "fielded") fail(path, index["mode"], "`mode` must be flat or fielded");
  config.mode = mode == "flat" ? retrieval::FieldMode::flat : retrieval::FieldMode::fielded;
  if (index["k1"]) config.k1 = read<double>(path, index, "k1");
  if (index["b"]) config.b = read<double>(path, index, "b");
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
  score.expected = read<double>(path, node, "expected");
  if (node["reference"]) {
    score.reference = read<double>(path, node, "reference");
    score.reference_tolerance = read<double>(path, node, "reference_tolerance");
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
  RegressionSpec spec;
  spec.name = read<std::string>(path, root, "name");
  const YAML::Node corpus = root["corpus"];
  if (!corpus) fail(path, root, "missing `corpus`");
  spec.format = read<std::string>(path, corpus, "format");
  if (spec.format != "beir" && spec.format != "cranfield") fail(path, corpus, "`format` must be beir or cranfield");
  spec.path = read<std::string>(path, corpus, "path");
  if (corpus["split"]) spec.split = read<std::string>(path, corpus, "split");
  spec.config = read_index(path, root["index"]);
  if (const YAML::Node stats = root["statistics"]) {
    for (const auto& kv : stats) spec.statistics[kv.first.Scalar()] = read<std::size_t>(path, stats, kv.first.Scalar().c_str());
  }
  if (const YAML::Node search = root["search"]; search && search["k"]) spec.k = read<std::size_t>(path, search, "k");
  const YAML::Node measures = root["measures"];
  if (!measures || !measures.IsSequence()) fail(path, root, "missing `measures` list");
  for (const auto& node : measures) spec.scores.push_back(read_score(path, node));
  return spec;
}

}  // namespace okfbench::cli
