#include "engine/spec.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "agents/bundle_tools.hpp"
#include "agents/secrets.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/numbers.hpp"
#include "core/yaml_keys.hpp"
#include "engine/judge.hpp"
#include "engine/limits.hpp"
#include "reports/judge.hpp"
#include "engine/run_plan.hpp"
#include "reports/config_names.hpp"
#include "retrieval/bundle.hpp"
#include "retrieval/frontmatter.hpp"
#include "retrieval/utf8.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;

const std::set<std::string> kTopKeys = {"name", "seed", "repeats", "concurrency", "requests_per_minute",
                                        "tokens_per_minute", "cost_cap_usd", "max_questions", "cache_dir", "bundles",
                                        "paths", "models", "cache_models", "graders", "judge", "forecast", "baseline"};
const std::set<std::string> kGraders = {"facts", "citations", "answered", "judge"};
const std::set<std::string> kJudgeKeys = {"model", "votes"};
const std::set<std::string> kPathBundleKeys = {"path", "name", "questions", "ref", "subdir", "profile", "lessons", "expertise"};
const std::set<std::string> kLessonsKeys = {"as_of", "include_candidates", "prefer_scope"};
const std::set<std::string> kExpertiseKeys = {"as_of", "task_tags"};
const std::set<std::string> kPartKeys = {"path", "name", "ref", "subdir", "profile"};
const std::set<std::string> kCombinedKeys = {"name", "paths", "questions"};
const std::set<std::string> kGenerateKeys = {"concepts", "seed", "layers", "questions"};
const std::set<std::string> kConvertKeys = {"format", "source", "split", "concepts"};
const std::set<std::string> kContextKeys = {"budget_tokens", "k", "hops", "strategy", "retrieval"};
const std::set<std::string> kAgentKeys = {"surface", "tools", "max_turns", "max_body_chars", "index_char_budget", "retrieval"};
const std::set<std::string> kExternalKeys = {"command", "label", "timeout_s", "answer", "upstream", "args"};
const std::set<std::string> kRetrievalMethods = {"bm25f", "hybrid", "hybrid+rerank"};
const std::set<std::string> kModelKeys = {"name", "label", "base_url", "api_key_env", "headers",
                                          "connect_timeout_seconds", "request_timeout_seconds",
                                          "trial_deadline_seconds", "max_output_tokens", "temperature", "price", "replay", "stream"};
const std::set<std::string> kPriceKeys = {"input_per_mtok", "cached_input_per_mtok", "cache_write_per_mtok", "output_per_mtok"};
std::set<std::string> every_tool() {
  std::set<std::string> out;
  for (agents::Surface s : {agents::Surface::grafito, agents::Surface::harnessx})
    for (std::string& name : agents::surface_tools(s)) out.insert(std::move(name));
  return out;
}
const std::set<std::string> kTools = every_tool();

std::string join(const std::set<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string_view kind_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Scalar: return "a value";
    default: return "nothing";
  }
}

// Every narrowing below is from a range that fits the field's type.
static_assert(limits::repeats.max <= INT_MAX && limits::k.max <= INT_MAX && limits::hops.max <= INT_MAX &&
              limits::max_turns.max <= INT_MAX && limits::concurrency.max <= UINT_MAX);

// Reads one spec, remembering where each value came from for messages.
class SpecReader {
 public:
  SpecReader(std::string file_name, fs::path base_dir, std::map<std::string, std::string> overridden)
      : file_(std::move(file_name)), base_(std::move(base_dir)), overridden_(std::move(overridden)) {}

  // A problem in a value from the file is an InputError at its line; one in a
  // value a --set argument wrote is a UsageError naming the argument.
  [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& message) const {
    if (const std::string* argument = set_argument(key)) {
      throw UsageError(fmt::format("--set {}: {}: {}", *argument, key, message));
    }
    if (node.IsDefined() && node.Mark().line >= 0) {
      throw InputError(fmt::format("{}:{}: {}: {}", file_, node.Mark().line + 1, key, message));
    }
    throw InputError(fmt::format("{}: {}: {}", file_, key, message));
  }

  const std::string& file() const { return file_; }

  void check_keys(const YAML::Node& map, const std::string& key, const std::set<std::string>& known) const {
    if (!map.IsMap()) fail(map, key.empty() ? "spec" : key, "expected a mapping of keys to values");
    for (const auto& entry : map) {
      if (!entry.first.IsScalar()) fail(entry.first, key.empty() ? "spec" : key, "a key must be a plain name");
      const std::string& name = entry.first.Scalar();
      if (!known.count(name)) {
        const std::string full = key.empty() ? name : key + "." + name;
        fail(entry.first, full, fmt::format("unknown key; known keys here: {}", join(known)));
      }
    }
  }

  template <class T>
  T scalar(const YAML::Node& node, const std::string& key, std::string_view expected) const {
    if (!node.IsScalar()) fail(node, key, fmt::format("expected {}", expected));
    try {
      return node.as<T>();
    } catch (const YAML::Exception&) {
      fail(node, key, fmt::format("expected {}, got \"{}\"", expected, node.Scalar()));
    }
  }

  // The one reader of numbers: the value's text is range-checked as it is
  // parsed (core/numbers.hpp), never converted first.
  template <std::integral T>
  T number(const YAML::Node& node, const std::string& key, IntegerRange<T> range) const {
    if (!node.IsScalar()) fail(node, key, fmt::format("expected {}, got {}", describe(range), kind_name(node)));
    Parsed<T> parsed = parse_integer(node.Scalar(), range);
    if (!parsed.value) fail(node, key, parsed.problem);
    return *parsed.value;
  }

  double number(const YAML::Node& node, const std::string& key, RealRange range) const {
    if (!node.IsScalar()) fail(node, key, fmt::format("expected {}, got {}", describe(range), kind_name(node)));
    Parsed<double> parsed = parse_real(node.Scalar(), range);
    if (!parsed.value) fail(node, key, parsed.problem);
    return *parsed.value;
  }

  // A scalar or a list of scalars, each read by `read`.
  template <class T>
  std::vector<T> list(const YAML::Node& node, const std::string& key,
                      const std::function<T(const YAML::Node&, const std::string&)>& read) const {
    std::vector<T> out;
    if (node.IsSequence()) {
      for (std::size_t i = 0; i < node.size(); ++i) out.push_back(read(node[i], fmt::format("{}[{}]", key, i)));
    } else {
      out.push_back(read(node, key));
    }
    if (out.empty()) fail(node, key, "expected at least one value");
    return out;
  }

  // A number or a list of numbers in `range`, as T.
  template <class T>
  std::vector<T> number_list(const YAML::Node& node, const std::string& key, limits::Int range) const {
    return list<T>(node, key, [&](const YAML::Node& n, const std::string& k) { return static_cast<T>(number(n, k, range)); });
  }

  std::vector<std::string> string_list(const YAML::Node& node, const std::string& key,
                                       const std::set<std::string>& allowed = {}) const {
    return list<std::string>(node, key, [&](const YAML::Node& n, const std::string& k) {
      auto value = scalar<std::string>(n, k, "a string");
      if (!allowed.empty() && !allowed.count(value)) fail(n, k, fmt::format("unknown value \"{}\"; use one of: {}", value, join(allowed)));
      return value;
    });
  }

  // ${VAR} expands from the environment; an unset variable is an error, so a
  // spec never silently reads data from a place the user did not name.
  fs::path path_value(const YAML::Node& node, const std::string& key, const fs::path& base) const {
    const fs::path p(expanded(node, key));
    return (p.is_absolute() ? p : base / p).lexically_normal();
  }

  // A path or URL scalar with ${VAR} expanded.
  std::string expanded(const YAML::Node& node, const std::string& key) const {
    std::string text = scalar<std::string>(node, key, "a path");
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text.compare(i, 2, "${") != 0) {
        out += text[i];
        continue;
      }
      const auto close = text.find('}', i);
      if (close == std::string::npos) fail(node, key, "unterminated ${ in path");
      const std::string var = text.substr(i + 2, close - i - 2);
      const char* value = std::getenv(var.c_str());
      if (value && *value) {
        out += value;
      } else {
        fail(node, key, fmt::format("environment variable {} is not set", var));
      }
      i = close;
    }
    return out;
  }

  const fs::path& base() const { return base_; }

 private:
  // The --set argument that wrote `key` or a value around it, if any. Keys
  // are spelled as the reader spells them: paths.context.k, bundles[0].path.
  const std::string* set_argument(const std::string& key) const {
    for (const auto& [path, argument] : overridden_) {
      const bool inside = key == path || key.starts_with(path + ".") || key.starts_with(path + "[");
      const bool around = path.starts_with(key + ".") || path.starts_with(key + "[");
      if (inside || around) return &argument;
    }
    return nullptr;
  }

  std::string file_;
  fs::path base_;
  std::map<std::string, std::string> overridden_;  // dotted key -> "KEY=VALUE"
};

std::string read_as_of(const SpecReader& r, const YAML::Node& policy, const std::string& key) {
  if (!policy["as_of"])
    r.fail(policy, key + ".as_of",
           "required: the clock expires_at is judged against, e.g. as_of: 2026-12-01 (a trial must not change with "
           "the day it runs)");
  std::string as_of = r.scalar<std::string>(policy["as_of"], key + ".as_of", "a date");
  if (!retrieval::parse_timestamp(as_of))
    r.fail(policy["as_of"], key + ".as_of",
           fmt::format("\"{}\" is not a date; write YYYY-MM-DD or 2026-06-30T14:00:00Z", as_of));
  return as_of;
}

// `lessons:` and `expertise:` of a bundle entry: the selection policy of
// its profile, and only of its profile.
void read_bundle_policy(const SpecReader& r, const YAML::Node& node, const std::string& key, BundleSource& b) {
  for (const char* name : {"lessons", "expertise"}) {
    const YAML::Node& policy = node[name];
    if (policy && b.profile != name)
      r.fail(policy, key + "." + name, fmt::format("applies to profile: {} only (this bundle's profile is {})", name, b.profile));
  }
  if (b.profile != "lessons" && b.profile != "expertise") return;
  const std::string sub = key + "." + b.profile;
  const YAML::Node& policy = node[b.profile];
  if (!policy)
    r.fail(node, sub, fmt::format("required for profile: {}, with at least as_of, e.g. {}: {{as_of: 2026-12-01}}",
                                  b.profile, b.profile));
  r.check_keys(policy, sub, b.profile == "lessons" ? kLessonsKeys : kExpertiseKeys);
  b.policy.as_of = read_as_of(r, policy, sub);
  if (policy["include_candidates"])
    b.policy.include_candidates = r.scalar<bool>(policy["include_candidates"], sub + ".include_candidates", "true or false");
  if (policy["prefer_scope"]) b.policy.prefer_scope = r.scalar<std::string>(policy["prefer_scope"], sub + ".prefer_scope", "a scope");
  if (policy["task_tags"]) b.policy.task_tags = r.string_list(policy["task_tags"], sub + ".task_tags");
}

// One bundle folder or git source from the keys path, name, ref, subdir and
// profile of `node` (questions: and a policy are the caller's).
BundleSource read_source(const SpecReader& r, const YAML::Node& node, const std::string& key) {
  BundleSource b;
  if (node["profile"]) {
    b.profile = r.scalar<std::string>(node["profile"], key + ".profile", "okf, repo, lessons or expertise");
    if (!retrieval::parse_profile(b.profile))
      r.fail(node["profile"], key + ".profile",
             fmt::format("unknown profile \"{}\": use {}", b.profile, retrieval::profile_names()));
  }
  read_bundle_policy(r, node, key, b);
  const std::string ref = node["ref"] ? r.scalar<std::string>(node["ref"], key + ".ref", "a branch, tag or commit") : "";
  const std::string subdir = node["subdir"] ? r.scalar<std::string>(node["subdir"], key + ".subdir", "a folder") : "";
  // A list here used to be read as something else; several bundles in one
  // index are an entry of their own (read_combined).
  if (node["path"].IsSequence())
    r.fail(node["path"], key + ".path",
           "one path per entry; to search several bundles as one index, list them under paths: in an entry of "
           "their own, with its questions: (engine/README.md, \"Several bundles in one trial set\")");
  std::optional<GitSource> git;
  try {
    git = parse_git_source(r.expanded(node["path"], key + ".path"), ref, subdir);
  } catch (const UsageError& e) {
    r.fail(node["path"], key + ".path", e.what());
  }
  if (git) {
    b.kind = BundleKind::git;
    b.git = *git;
    b.name = node["name"] ? r.scalar<std::string>(node["name"], key + ".name", "a string")
                           : retrieval::escape_invalid_utf8(git->default_name());
    return b;
  }
  if (!ref.empty() || !subdir.empty())
    r.fail(node["ref"] ? node["ref"] : node["subdir"], key, "ref: and subdir: need a git URL in path:");
  b.kind = BundleKind::path;
  b.path = r.path_value(node["path"], key + ".path", r.base());
  if (!fs::is_directory(b.path)) r.fail(node["path"], key + ".path", fmt::format("no such folder {}", b.path.string()));
  b.name = node["name"] ? r.scalar<std::string>(node["name"], key + ".name", "a string")
                         : retrieval::escape_invalid_utf8(b.path.filename().string());  // names go into JSON
  return b;
}

void read_path_bundle(const SpecReader& r, const YAML::Node& node, const std::string& key, ExperimentSpec& spec) {
  r.check_keys(node, key, kPathBundleKeys);
  BundleSource b = read_source(r, node, key);
  if (b.kind == BundleKind::git) {
    if (node["questions"]) b.questions = r.path_value(node["questions"], key + ".questions", r.base());
    spec.bundles.push_back(std::move(b));
    return;
  }
  b.questions = node["questions"] ? r.path_value(node["questions"], key + ".questions", r.base()) : b.path / "questions.yaml";
  if (!fs::is_regular_file(b.questions)) {
    r.fail(node["questions"] ? node["questions"] : node, key + ".questions",
           fmt::format("no question set at {}; name one with questions:", b.questions.string()));
  }
  spec.bundles.push_back(std::move(b));
}

// One bundle of a combined entry: a path or git URL, or a mapping without questions:.
BundleSource read_part(const SpecReader& r, const YAML::Node& node, const std::string& key) {
  if (node.IsScalar()) {
    YAML::Node map(YAML::NodeType::Map);
    map["path"] = node;
    return read_source(r, map, key);
  }
  if (node.IsMap() && node["questions"])
    r.fail(node["questions"], key + ".questions",
           "the bundles of one entry share its question set; write questions: beside paths:, not in one bundle");
  r.check_keys(node, key, kPartKeys);
  if (!node["path"]) r.fail(node, key + ".path", "required: the bundle's folder or git URL");
  // A policy's verdict names one bundle's ids; the combined tools and index take none yet.
  if (node["profile"] && node["profile"].IsScalar() && (node["profile"].Scalar() == "lessons" || node["profile"].Scalar() == "expertise"))
    r.fail(node["profile"], key + ".profile",
           fmt::format("a bundle of a combined entry takes okf or repo, not {}: give it a path: entry of its own",
                       node["profile"].Scalar()));
  return read_source(r, node, key);
}

// Several bundles as one trial set: one index over all of them, graded on
// one question set whose relevant ids are BUNDLE:ID.
void read_combined(const SpecReader& r, const YAML::Node& node, const std::string& key, ExperimentSpec& spec) {
  r.check_keys(node, key, kCombinedKeys);
  const YAML::Node paths = node["paths"];
  if (!paths.IsSequence()) r.fail(paths, key + ".paths", fmt::format("expected a list of two or more bundles, got {}", kind_name(paths)));
  if (paths.size() < 2)
    r.fail(paths, key + ".paths",
           fmt::format("expected a list of two or more bundles, got {}; one bundle is a path: entry", paths.size()));
  BundleSource b;
  b.kind = BundleKind::combined;
  std::set<std::string> names;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string part_key = fmt::format("{}.paths[{}]", key, i);
    BundleSource part = read_part(r, paths[i], part_key);
    const YAML::Node where = paths[i].IsMap() && paths[i]["name"] ? paths[i]["name"] : paths[i];
    if (part.name.empty() || part.name.find(':') != std::string::npos)
      r.fail(where, part_key + ".name",
             fmt::format("\"{}\": a combined bundle's name is not empty and has no ':' (ids are written BUNDLE:ID); "
                         "give it another name:", part.name));
    if (!names.insert(part.name).second)
      r.fail(where, part_key + ".name", fmt::format("two bundles of this entry are named \"{}\"; give one a name:", part.name));
    b.parts.push_back(std::move(part));
  }
  if (!node["questions"])
    r.fail(node, key + ".questions", "required: the question set of these bundles, its relevant ids written BUNDLE:ID");
  b.questions = r.path_value(node["questions"], key + ".questions", r.base());
  if (!fs::is_regular_file(b.questions))
    r.fail(node["questions"], key + ".questions", fmt::format("no question set at {}", b.questions.string()));
  if (node["name"]) {
    b.name = r.scalar<std::string>(node["name"], key + ".name", "a string");
  } else {
    for (const BundleSource& part : b.parts) b.name += (b.name.empty() ? "" : "+") + part.name;
  }
  spec.bundles.push_back(std::move(b));
}

void read_generated(const SpecReader& r, const YAML::Node& node, const std::string& key, ExperimentSpec& spec) {
  r.check_keys(node, key, kGenerateKeys);
  if (!node["concepts"]) r.fail(node, key + ".concepts", "required: the bundle sizes to generate");
  for (std::size_t n : r.number_list<std::size_t>(node["concepts"], key + ".concepts", limits::concepts)) {
    BundleSource b;
    b.kind = BundleKind::generated;
    b.concepts = n;
    b.seed = node["seed"] ? r.number(node["seed"], key + ".seed", limits::seed) : spec.seed;
    if (node["layers"]) b.layers = static_cast<std::size_t>(r.number(node["layers"], key + ".layers", limits::layers));
    if (node["questions"]) {
      b.question_count = static_cast<std::size_t>(r.number(node["questions"], key + ".questions", limits::generated_questions));
    }
    b.name = fmt::format("gen-{}", n);
    spec.bundles.push_back(std::move(b));
  }
}

void read_converted(const SpecReader& r, const YAML::Node& node, const std::string& key, ExperimentSpec& spec) {
  r.check_keys(node, key, kConvertKeys);
  if (!node["format"]) r.fail(node, key + ".format", "required: beir, smart or cranfield");
  if (!node["source"]) r.fail(node, key + ".source", "required: the collection folder");
  const auto format = r.scalar<std::string>(node["format"], key + ".format", "beir, smart or cranfield");
  if (format != "beir" && format != "smart" && format != "cranfield")
    r.fail(node["format"], key + ".format", fmt::format("unknown format \"{}\"; use beir, smart or cranfield", format));
  const fs::path source = r.path_value(node["source"], key + ".source", r.base());
  if (!fs::is_directory(source)) r.fail(node["source"], key + ".source", fmt::format("no such folder {}", source.string()));
  const std::string split = node["split"] ? r.scalar<std::string>(node["split"], key + ".split", "a qrels split name") : "test";
  const auto sizes = node["concepts"] ? r.number_list<std::size_t>(node["concepts"], key + ".concepts", limits::concepts)
                                      : std::vector<std::size_t>{0};
  for (std::size_t n : sizes) {
    BundleSource b;
    b.kind = BundleKind::converted;
    b.format = format;
    b.source = source;
    b.split = split;
    b.concepts = n;
    const std::string stem = retrieval::escape_invalid_utf8(source.filename().string());  // names go into JSON
    b.name = n > 0 ? fmt::format("{}-{}", stem, n) : stem;
    spec.bundles.push_back(std::move(b));
  }
}

// Every tool list must exist on every surface (in its own naming or mapped,
// agents::tools_for_surface); a list that cannot is refused here, naming the
// surface and the tools, instead of giving that surface no trials.
void check_tools_fit(const SpecReader& r, const YAML::Node& node, const AgentSweep& sweep) {
  for (const std::string& surface : sweep.surface) {
    for (std::size_t i = 0; i < sweep.tools.size(); ++i) {
      std::vector<std::string> missing;
      if (agents::tools_for_surface(sweep.tools[i], *agents::parse_surface(surface), &missing)) continue;
      r.fail(node, sweep.tools.size() > 1 ? fmt::format("paths.agent.tools[{}]", i) : std::string("paths.agent.tools"),
             fmt::format("surface {} has no {} (grafito's search, open and follow are its search_concepts, "
                         "read_concept and get_neighbors; browse, history and remember exist only on grafito); "
                         "give tool lists that every surface has, or drop {} from surface:",
                         surface, fmt::join(missing, ", "), surface));
    }
  }
}

void read_bundles(const SpecReader& r, const YAML::Node& node, ExperimentSpec& spec) {
  if (!node || !node.IsSequence() || node.size() == 0) {
    r.fail(node, "bundles", "required: a list of bundles (path:, paths:, generate: or convert: entries)");
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string key = fmt::format("bundles[{}]", i);
    const YAML::Node entry = node[i];
    if (!entry.IsMap()) r.fail(entry, key, "expected a mapping with path:, paths:, generate: or convert:");
    if (entry["generate"]) {
      if (entry.size() != 1) r.fail(entry, key, "a generate: entry has no other keys");
      read_generated(r, entry["generate"], key + ".generate", spec);
    } else if (entry["convert"]) {
      if (entry.size() != 1) r.fail(entry, key, "a convert: entry has no other keys");
      read_converted(r, entry["convert"], key + ".convert", spec);
    } else if (entry["paths"]) {
      read_combined(r, entry, key, spec);
    } else if (entry["path"]) {
      read_path_bundle(r, entry, key, spec);
    } else {
      r.fail(entry, key, "expected path:, paths:, generate: or convert:");
    }
  }
  std::set<std::string> names;
  for (const auto& b : spec.bundles) {
    if (!names.insert(b.name).second) r.fail(node, "bundles", fmt::format("two bundles are named \"{}\"; give one a name:", b.name));
  }
}

// A retrieval method other than bm25f ranks one bundle's concepts (its
// embeddings index one bundle), so a combined entry takes bm25f only, as
// `okfbench context --retrieval` refuses several bundles.
void check_retrieval_fits(const SpecReader& r, const YAML::Node& node, const std::string& key,
                          const std::vector<std::string>& methods, const ExperimentSpec& spec) {
  const auto other = std::find_if(methods.begin(), methods.end(), [](const std::string& m) { return m != "bm25f"; });
  if (other == methods.end()) return;
  for (std::size_t i = 0; i < spec.bundles.size(); ++i) {
    if (spec.bundles[i].kind != BundleKind::combined) continue;
    r.fail(node, key, fmt::format("{} takes one bundle, and bundles[{}] (\"{}\") is a combined entry: several bundles are "
                                  "searched with bm25f; give {} a spec of its own",
                                  *other, i, spec.bundles[i].name, *other));
  }
}

void check_base_url(const SpecReader& r, const YAML::Node& node, const std::string& key, const std::string& url);

// A list of strings (a scalar is a one-element list), none empty.
std::vector<std::string> argv_list(const SpecReader& r, const YAML::Node& node, const std::string& key) {
  std::vector<std::string> out = r.string_list(node, key);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].empty()) r.fail(node.IsSequence() ? node[i] : node, node.IsSequence() ? fmt::format("{}[{}]", key, i) : key,
                               "an empty argument; remove it or give it a value");
    if (out[i].find('\0') != std::string::npos) r.fail(node, key, "an argument holds a NUL byte");
  }
  return out;
}

// One entry of paths.external: one agent, or one per `args` list.
void read_external_entry(const SpecReader& r, const YAML::Node& node, const std::string& key, ExperimentSpec& spec) {
  r.check_keys(node, key, kExternalKeys);
  if (!node["command"]) r.fail(node, key + ".command", "required: the agent's argv, e.g. command: [python3, my_agent.py]");
  ExternalAgent base;
  base.working_dir = r.base().empty() ? fs::current_path() : fs::absolute(r.base());
  base.command = argv_list(r, node["command"], key + ".command");
  if (node["timeout_s"]) base.timeout_s = r.number(node["timeout_s"], key + ".timeout_s", limits::external_timeout_seconds);
  if (node["answer"]) {
    const std::string answer = r.string_list(node["answer"], key + ".answer", {"stdout", "json"}).front();
    if (node["answer"].IsSequence()) r.fail(node["answer"], key + ".answer", "expected one value: stdout or json");
    base.answer_json = answer == "json";
  }
  if (node["upstream"]) {
    base.upstream = r.expanded(node["upstream"], key + ".upstream");
    check_base_url(r, node["upstream"], key + ".upstream", base.upstream);
  }
  std::vector<std::vector<std::string>> sweep{{}};
  if (const YAML::Node args = node["args"]) {
    if (!args.IsSequence() || args.size() == 0)
      r.fail(args, key + ".args", "expected a list of argument lists, e.g. args: [[--fast], [--slow]]");
    sweep.clear();
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string at = fmt::format("{}.args[{}]", key, i);
      if (args[i].IsSequence() && args[i].size() == 0) {
        sweep.emplace_back();  // [] : the command alone
        continue;
      }
      sweep.push_back(argv_list(r, args[i], at));
    }
  }
  const std::string named = node["label"] ? r.scalar<std::string>(node["label"], key + ".label", "a string") : "";
  if (node["label"] && named.empty()) r.fail(node["label"], key + ".label", "expected a non-empty label");
  for (const auto& extra : sweep) {
    ExternalAgent a = base;
    a.command.insert(a.command.end(), extra.begin(), extra.end());
    // With a label and several argument lists, each is labelled LABEL ARGS.
    const std::string args_text = fmt::format("{}", fmt::join(extra, " "));
    if (named.empty()) {
      a.label = retrieval::escape_invalid_utf8(fmt::format("{}", fmt::join(a.command, " ")));
    } else {
      a.label = sweep.size() > 1 && !extra.empty() ? named + " " + args_text : named;
    }
    for (const ExternalAgent& other : spec.external)
      if (other.label == a.label)
        r.fail(node, key + ".label", fmt::format("two external agents are labelled \"{}\"; give each a label: of its own", a.label));
    spec.external.push_back(std::move(a));
  }
}

void read_external(const SpecReader& r, const YAML::Node& node, ExperimentSpec& spec) {
  if (node.IsSequence()) {
    if (node.size() == 0) r.fail(node, "paths.external", "expected at least one agent");
    for (std::size_t i = 0; i < node.size(); ++i) read_external_entry(r, node[i], fmt::format("paths.external[{}]", i), spec);
  } else {
    read_external_entry(r, node, "paths.external", spec);
  }
}

void read_paths(const SpecReader& r, const YAML::Node& node, ExperimentSpec& spec) {
  if (!node) r.fail(node, "paths", "required: context:, agent:, external: or several");
  r.check_keys(node, "paths", {"context", "agent", "external"});
  if (const YAML::Node c = node["context"]) {
    r.check_keys(c, "paths.context", kContextKeys);
    ContextSweep sweep;
    if (c["budget_tokens"]) {
      sweep.budget_tokens = r.number_list<std::int64_t>(c["budget_tokens"], "paths.context.budget_tokens", limits::budget_tokens);
    }
    if (c["k"]) sweep.k = r.number_list<int>(c["k"], "paths.context.k", limits::k);
    if (c["hops"]) sweep.hops = r.number_list<int>(c["hops"], "paths.context.hops", limits::hops);
    if (c["strategy"]) sweep.strategy = r.string_list(c["strategy"], "paths.context.strategy", {"grafito", "weaver"});
    if (c["retrieval"]) {
      sweep.retrieval = r.string_list(c["retrieval"], "paths.context.retrieval", kRetrievalMethods);
      check_retrieval_fits(r, c["retrieval"], "paths.context.retrieval", sweep.retrieval, spec);
    }
    spec.context = sweep;
  }
  if (const YAML::Node a = node["agent"]) {
    r.check_keys(a, "paths.agent", kAgentKeys);
    AgentSweep sweep;
    if (a["surface"]) sweep.surface = r.string_list(a["surface"], "paths.agent.surface", {"grafito", "harnessx"});
    if (const YAML::Node tools = a["tools"]) {
      // A flat list is one tool set; a list of lists is several.
      const bool nested = tools.IsSequence() && tools.size() > 0 && tools[0].IsSequence();
      sweep.tools.clear();
      if (nested) {
        for (std::size_t i = 0; i < tools.size(); ++i) {
          sweep.tools.push_back(r.string_list(tools[i], fmt::format("paths.agent.tools[{}]", i), kTools));
        }
      } else {
        sweep.tools.push_back(r.string_list(tools, "paths.agent.tools", kTools));
      }
    }
    if (a["max_turns"]) sweep.max_turns = r.number_list<int>(a["max_turns"], "paths.agent.max_turns", limits::max_turns);
    if (a["max_body_chars"])
      sweep.max_body_chars = r.number_list<std::int64_t>(a["max_body_chars"], "paths.agent.max_body_chars", limits::max_body_chars);
    if (a["index_char_budget"])
      sweep.index_char_budget =
          r.number_list<std::int64_t>(a["index_char_budget"], "paths.agent.index_char_budget", limits::index_char_budget);
    if (a["retrieval"]) {
      sweep.retrieval = r.string_list(a["retrieval"], "paths.agent.retrieval", kRetrievalMethods);
      check_retrieval_fits(r, a["retrieval"], "paths.agent.retrieval", sweep.retrieval, spec);
    }
    check_tools_fit(r, a["tools"] ? a["tools"] : a, sweep);
    spec.agent = sweep;
  }
  if (const YAML::Node e = node["external"]) read_external(r, e, spec);
  if (!spec.context && !spec.agent && spec.external.empty()) r.fail(node, "paths", "name at least one of context:, agent: and external:");
}


// Header names and values pass agents' checks (a CR or LF in a value would
// start another header); the headers okfbench sets itself cannot be replaced.
void check_header(const SpecReader& r, const YAML::Node& node, const std::string& key, const std::string& name,
                  const std::string& value) {
  try {
    agents::check_header_name(name, "header name");
    agents::check_header_value(value, "value");
  } catch (const UsageError& e) {
    r.fail(node, key, e.what());
  }
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* reserved : {"authorization", "x-api-key", "content-type", "content-length", "host", "anthropic-version"}) {
    if (lower == reserved) r.fail(node, key, fmt::format("{} is set by okfbench; give the key with api_key_env", name));
  }
}

// http(s)://host[:port][/path], without user-info: a key in the URL would
// reach the manifest and the reports.
void check_base_url(const SpecReader& r, const YAML::Node& node, const std::string& key, const std::string& url) {
  const bool scheme = url.starts_with("http://") || url.starts_with("https://");
  if (!scheme) r.fail(node, key, fmt::format("expected an http:// or https:// URL, got \"{}\"", url));
  const std::size_t host = url.find("://") + 3;
  const std::string authority = url.substr(host, url.find('/', host) - host);
  if (authority.empty()) r.fail(node, key, "the URL has no host");
  if (authority.find('@') != std::string::npos) {
    r.fail(node, key, "the URL carries user-info (user:key@); give the key with api_key_env instead");
  }
  for (unsigned char c : url) {
    if (c <= 0x20 || c == 0x7f) r.fail(node, key, "the URL holds a space or a control character");
  }
}

reports::ModelPrice read_price(const SpecReader& r, const YAML::Node& node, const std::string& key, const std::string& label) {
  r.check_keys(node, key, kPriceKeys);
  for (const char* required : {"input_per_mtok", "output_per_mtok"}) {
    if (!node[required]) r.fail(node, key + "." + required, "required: dollars per million tokens");
  }
  const auto per_mtok = [&](const char* name, double otherwise) {
    return node[name] ? r.number(node[name], key + "." + name, limits::price_per_mtok) : otherwise;
  };
  reports::ModelPrice price;
  price.model = label;
  price.input = per_mtok("input_per_mtok", 0);
  price.output = per_mtok("output_per_mtok", 0);
  price.cached_input = per_mtok("cached_input_per_mtok", price.input);
  price.cache_write = per_mtok("cache_write_per_mtok", price.input);
  price.source = node.Mark().line >= 0 ? fmt::format("the spec ({}:{})", r.file(), node.Mark().line + 1) : "the spec";
  return price;
}

void check_model_name(const SpecReader& r, const YAML::Node& node, const std::string& key, const std::string& name) {
  const bool ok = name == "sim" || (name.starts_with("sim:") && name.size() > 4) || (name.starts_with("openai:") && name.size() > 7) ||
                  (name.starts_with("anthropic:") && name.size() > 10) || (name.starts_with("replay:") && name.size() > 7);
  if (!ok) r.fail(node, key, fmt::format("unknown model \"{}\"; use sim, sim:PROFILE.yaml, openai:MODEL, anthropic:MODEL or replay:CASSETTE", name));
}

ModelSpec read_model_entry(const SpecReader& r, const YAML::Node& node, const std::string& key) {
  ModelSpec m;
  if (!node.IsMap()) {
    m.name = r.scalar<std::string>(node, key, "a model name or a mapping with name:");
    check_model_name(r, node, key, m.name);
  } else {
    r.check_keys(node, key, kModelKeys);
    if (!node["name"]) r.fail(node, key + ".name", "required: the model to call, e.g. openai:gpt-4o-mini");
    m.name = r.scalar<std::string>(node["name"], key + ".name", "a model name");
    check_model_name(r, node["name"], key + ".name", m.name);
    if (node["label"]) m.label = r.scalar<std::string>(node["label"], key + ".label", "a string");
    if (node["base_url"]) {
      m.base_url = r.scalar<std::string>(node["base_url"], key + ".base_url", "a URL");
      check_base_url(r, node["base_url"], key + ".base_url", m.base_url);
    }
    if (node["api_key_env"]) m.api_key_env = r.scalar<std::string>(node["api_key_env"], key + ".api_key_env", "a variable name");
    if (const YAML::Node headers = node["headers"]) {
      if (!headers.IsMap()) r.fail(headers, key + ".headers", "expected a mapping of header names to values");
      for (const auto& entry : headers) {
        const std::string name = entry.first.as<std::string>();
        const std::string value = r.scalar<std::string>(entry.second, key + ".headers." + name, "a string");
        check_header(r, entry.second, key + ".headers." + name, name, value);
        m.headers.emplace_back(name, value);
      }
    }
    const auto seconds = [&](const char* name, double& out) {
      if (node[name]) out = r.number(node[name], key + "." + name, limits::model_timeout_seconds);
    };
    seconds("connect_timeout_seconds", m.connect_timeout_seconds);
    seconds("request_timeout_seconds", m.request_timeout_seconds);
    seconds("trial_deadline_seconds", m.trial_deadline_seconds);
    if (node["max_output_tokens"]) {
      m.max_output_tokens = static_cast<int>(r.number(node["max_output_tokens"], key + ".max_output_tokens", limits::max_output_tokens));
    }
    if (node["temperature"]) m.temperature = r.number(node["temperature"], key + ".temperature", limits::temperature);
    if (node["stream"]) m.stream = r.scalar<bool>(node["stream"], key + ".stream", "true or false");
    if (node["replay"]) m.replay = r.path_value(node["replay"], key + ".replay", r.base());
  }
  if (m.label.empty()) m.label = m.name;
  if (node.IsMap() && node["price"]) m.price = read_price(r, node["price"], key + ".price", m.label);
  if (m.name.starts_with("replay:")) {
    if (!m.replay.empty()) r.fail(node, key + ".replay", "a replay: model already answers from a cassette");
    m.cassette = r.path_value(YAML::Node(m.name.substr(7)), key, r.base());
  }
  if (m.name.starts_with("sim:")) {
    m.sim_profile = r.path_value(YAML::Node(m.name.substr(4)), key, r.base());
    if (!std::filesystem::is_regular_file(m.sim_profile)) {
      r.fail(node, key, fmt::format("the sim profile {} is not a file; write one (agents/README.md, \"Behaviour profiles\") "
                                    "or fit one with okfbench calibrate", m.sim_profile.string()));
    }
  }
  if (m.is_sim() && (!m.base_url.empty() || !m.api_key_env.empty() || !m.headers.empty() || m.stream)) {
    r.fail(node, key, "sim runs offline: base_url, api_key_env, headers and stream apply to openai: and anthropic: models");
  }
  return m;
}

void read_models(const SpecReader& r, const YAML::Node& root, ExperimentSpec& spec) {
  if (const YAML::Node models = root["models"]) {
    spec.models.clear();
    if (models.IsSequence()) {
      for (std::size_t i = 0; i < models.size(); ++i) spec.models.push_back(read_model_entry(r, models[i], fmt::format("models[{}]", i)));
    } else {
      spec.models.push_back(read_model_entry(r, models, "models"));
    }
    if (spec.models.empty()) r.fail(models, "models", "expected at least one model");
    std::set<std::string> labels;
    for (const auto& m : spec.models) {
      if (!labels.insert(m.label).second) {
        r.fail(models, "models", fmt::format("two models are labelled \"{}\"; give one a label: of its own", m.label));
      }
    }
  }
  const bool provider = std::any_of(spec.models.begin(), spec.models.end(), [](const ModelSpec& m) { return m.calls_provider(); });
  if (!spec.external.empty() && !provider)
    r.fail(root["paths"]["external"], "paths.external",
           "an external agent calls a model through the run's proxy: add an openai:MODEL or anthropic:MODEL entry to "
           "models: (its endpoint is the proxy's upstream, its name is OKFBENCH_MODEL; sim and replay models run no "
           "external trials)");
  if (root["cache_models"]) spec.cache_models = r.string_list(root["cache_models"], "cache_models", {"none", "openai", "anthropic"});
}

// forecast: {MODEL: PROFILE.yaml}: the sim profile --dry-run forecasts a model with.
void read_forecast(const SpecReader& r, const YAML::Node& root, ExperimentSpec& spec) {
  const YAML::Node forecast = root["forecast"];
  if (!forecast) return;
  if (!forecast.IsMap()) r.fail(forecast, "forecast", "expected a mapping {MODEL: PROFILE.yaml} (okfbench calibrate writes profiles)");
  for (const auto& entry : forecast) {
    const std::string model = r.scalar<std::string>(entry.first, "forecast", "a model name or label");
    const std::string key = "forecast." + model;
    const bool named = std::any_of(spec.models.begin(), spec.models.end(),
                                   [&](const ModelSpec& m) { return m.label == model || m.name == model; });
    if (!named) r.fail(entry.first, key, fmt::format("no model of models: is named or labelled \"{}\"", model));
    const fs::path profile = r.path_value(entry.second, key, r.base());
    if (!fs::is_regular_file(profile)) {
      r.fail(entry.second, key, fmt::format("the profile {} is not a file; fit one with okfbench calibrate", profile.string()));
    }
    spec.forecast_profiles[model] = profile;
  }
}

void read_graders(const SpecReader& r, const YAML::Node& root, ExperimentSpec& spec) {
  if (root["graders"]) {
    spec.graders = r.string_list(root["graders"], "graders", kGraders);
    const std::set<std::string> distinct(spec.graders.begin(), spec.graders.end());
    if (distinct.size() != spec.graders.size()) r.fail(root["graders"], "graders", "a grader is named twice");
  }
  const YAML::Node judge = root["judge"];
  if (!judge) {
    if (std::count(spec.graders.begin(), spec.graders.end(), "judge")) {
      r.fail(root["graders"], "graders", "judge needs a judge: {model: ...} entry (sim, openai:MODEL or anthropic:MODEL)");
    }
    return;
  }
  r.check_keys(judge, "judge", kJudgeKeys);
  JudgeSpec j;
  if (judge["model"]) j.model = r.scalar<std::string>(judge["model"], "judge.model", "a model name");
  if (!is_judge_model(j.model)) r.fail(judge["model"], "judge.model", fmt::format("unknown model \"{}\"; use sim, openai:MODEL or anthropic:MODEL", j.model));
  if (judge["votes"]) j.votes = static_cast<int>(r.number(judge["votes"], "judge.votes", limits::judge_votes));
  spec.judge = j;
  if (!std::count(spec.graders.begin(), spec.graders.end(), "judge")) spec.graders.push_back("judge");
}

// The spec as the hash sees it: without the settings that change how a run
// goes but not what a trial computes (listed in spec.hpp).
YAML::Node hashed_part(const YAML::Node& root) {
  YAML::Node hashed = YAML::Clone(root);
  for (const char* key : {"cost_cap_usd", "concurrency", "requests_per_minute", "tokens_per_minute", "forecast", "baseline"}) {
    hashed.remove(key);
  }
  if (YAML::Node models = hashed["models"]; models && models.IsSequence()) {
    for (std::size_t i = 0; i < models.size(); ++i) {
      if (!models[i].IsMap()) continue;
      for (const char* key : {"api_key_env", "price", "replay", "connect_timeout_seconds", "request_timeout_seconds",
                              "trial_deadline_seconds"}) {
        models[i].remove(key);
      }
      // An entry left with only its name hashes as the plain name, as before.
      if (models[i].size() == 1 && models[i]["name"]) models[i] = YAML::Clone(models[i]["name"]);
    }
  }
  return hashed;
}

// A rate limit: 0 (none) or between `least` and the range's maximum.
double rate(const SpecReader& r, const YAML::Node& node, const std::string& key, RealRange range, double least) {
  const double value = r.number(node, key, range);
  if (value > 0 && value < least)
    r.fail(node, key, fmt::format("{} is below {}; write 0 for no limit or a rate of at least {} (a smaller one would "
                                  "wait days between requests)", value, least, least));
  return value;
}

void read_run_settings(const SpecReader& r, const YAML::Node& root, ExperimentSpec& spec) {
  if (root["name"]) spec.name = r.scalar<std::string>(root["name"], "name", "a string");
  if (root["seed"]) spec.seed = r.number(root["seed"], "seed", limits::seed);
  if (root["repeats"]) spec.repeats = static_cast<int>(r.number(root["repeats"], "repeats", limits::repeats));
  if (root["concurrency"]) spec.concurrency = static_cast<unsigned>(r.number(root["concurrency"], "concurrency", limits::concurrency));
  if (root["tokens_per_minute"])
    spec.tokens_per_minute = rate(r, root["tokens_per_minute"], "tokens_per_minute", limits::tokens_per_minute, limits::min_tokens_per_minute);
  if (root["requests_per_minute"]) {
    spec.requests_per_minute =
        rate(r, root["requests_per_minute"], "requests_per_minute", limits::requests_per_minute, limits::min_requests_per_minute);
  }
  if (root["cost_cap_usd"]) spec.cost_cap_usd = r.number(root["cost_cap_usd"], "cost_cap_usd", limits::cost_cap_usd);
  if (root["max_questions"]) {
    spec.max_questions = static_cast<std::size_t>(r.number(root["max_questions"], "max_questions", limits::max_questions));
  }
  // Relative to the spec's folder, as every path of a spec; the default is
  // the documented cache folder, never the working directory.
  if (root["cache_dir"]) {
    spec.cache_dir = r.path_value(root["cache_dir"], "cache_dir", r.base());
  } else if (const fs::path cache = user_cache_dir(); !cache.empty()) {
    spec.cache_dir = cache / "bundles";
  }
}

// baseline: one of the configurations the spec expands to, by its full label
// or its short name (reports/config_names.hpp), as the reports name them.
void read_baseline(const SpecReader& r, const YAML::Node& root, ExperimentSpec& spec) {
  if (!root["baseline"]) return;
  const std::string named = r.scalar<std::string>(root["baseline"], "baseline", "a configuration label");
  const std::vector<reports::PathConfig> configs = path_configs(spec);
  const auto names = reports::short_config_names(configs);
  std::vector<std::string> known;
  for (const auto& [label, name] : names) {
    if (label == named || name == named) {
      spec.baseline = named;
      return;
    }
    known.push_back(fmt::format("\"{}\" ({})", name, label));
  }
  r.fail(root["baseline"], "baseline",
         fmt::format("no configuration of this spec is named \"{}\"; name one by its short name or full label: {}", named,
                     fmt::join(known, ", ")));
}

// Trials the spec asks for per question: every path configuration with every
// model (sim once per cache model), `repeats` times. An upper bound: the
// runner drops a tool list that names the same tools as another once mapped
// to a surface.
std::uint64_t trials_per_question(const ExperimentSpec& spec) {
  static constexpr std::uint64_t cap = limits::planned_trials + 1;  // saturate here: the exact count past it does not matter
  auto times = [](std::uint64_t a, std::uint64_t b) { return a != 0 && b > cap / a ? cap : std::min(cap, a * b); };
  std::uint64_t paths = 0;
  if (spec.context) {
    const auto& c = *spec.context;
    paths += times(times(times(c.budget_tokens.size(), c.k.size()), times(c.hops.size(), c.strategy.size())),
                   c.retrieval.size());
  }
  if (spec.agent) {
    const auto& a = *spec.agent;
    const std::uint64_t budgets = times(std::max<std::size_t>(1, a.max_body_chars.size()),
                                        std::max<std::size_t>(1, a.index_char_budget.size()));
    paths += times(times(times(a.surface.size(), a.tools.size()), times(a.max_turns.size(), budgets)),
                   a.retrieval.size());
  }
  paths = std::min(cap, paths + spec.external.size());  // an upper bound: external runs with provider models only
  std::uint64_t models = 0;
  for (const auto& model : spec.models) models += model.is_sim() ? spec.cache_models.size() : 1;
  return times(times(std::min(paths, cap), std::min(models, cap)), static_cast<std::uint64_t>(spec.repeats));
}

void check_plan_size(const SpecReader& r, const YAML::Node& root, const ExperimentSpec& spec) {
  if (trials_per_question(spec) <= limits::planned_trials) return;
  r.fail(root["paths"], "paths", fmt::format("the lists under paths:, models: and cache_models: with repeats: {} make more "
                                             "than {} trials for each question, and a run holds at most {} trials; "
                                             "shorten the lists or split the sweep into several specs",
                                             spec.repeats, limits::planned_trials, limits::planned_trials));
}

// The list element a --set key part addresses: digits from 0 to size - 1.
std::size_t element_index(const std::string& argument, const std::string& path, const std::string& part, std::size_t size) {
  if (size == 0) throw UsageError(fmt::format("--set {}: {} is an empty list; set the whole list instead", argument, path));
  const Parsed<std::size_t> index = parse_integer(part, IntegerRange<std::size_t>{0, size - 1});
  if (!index.value) {
    throw UsageError(fmt::format("--set {}: {} is a list of {}; address an element by its index from 0 to {}, not \"{}\"",
                                 argument, path, size, size - 1, part));
  }
  return *index.value;
}

// Applies KEY=VALUE to the tree; returns the key as the reader spells it
// (list elements as [i]: bundles[0].generate.concepts), so that a problem in
// the value names this argument.
std::string apply_override(YAML::Node& root, const std::string& argument) {
  const auto eq = argument.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError(fmt::format("--set {}: expected KEY=VALUE, e.g. --set paths.context.budget_tokens=500", argument));
  }
  const std::string key = argument.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(argument.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw UsageError(fmt::format("--set {}: the value is not valid YAML ({})", argument, e.msg));
  }
  std::vector<std::string> parts;
  std::stringstream stream(key);
  for (std::string part; std::getline(stream, part, '.');) {
    if (part.empty()) throw UsageError(fmt::format("--set {}: empty part in key \"{}\"", argument, key));
    parts.push_back(part);
  }
  if (key.ends_with('.')) throw UsageError(fmt::format("--set {}: empty part in key \"{}\"", argument, key));
  YAML::Node node = root;
  std::string path;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    if (node.IsSequence()) {
      const std::size_t at = element_index(argument, path, parts[i], node.size());
      path += fmt::format("[{}]", at);
      if (last) node[at] = value;
      node.reset(node[at]);
      continue;
    }
    if (!node.IsMap()) {
      throw UsageError(fmt::format("--set {}: {} is a single value, not a mapping; set {} itself", argument, path, path));
    }
    path += (path.empty() ? "" : ".") + parts[i];
    if (last) {
      node[parts[i]] = value;
      break;
    }
    const YAML::Node child = node[parts[i]];
    if (!child || child.IsNull()) node[parts[i]] = YAML::Node(YAML::NodeType::Map);
    node.reset(node[parts[i]]);
  }
  if (const auto repeated = find_duplicate_keys(value); !repeated.empty()) {
    const auto& d = repeated.front();
    throw UsageError(fmt::format("--set {}: {}: duplicate key; YAML keys must be unique, keep one", argument,
                                 path + (d.path.empty() ? "" : (d.path.starts_with('[') ? "" : ".") + d.path) + "." + d.key));
  }
  return path;
}

// The profile and its policy as trial keys name them; okf, the default, adds
// nothing, so the keys of existing runs stay the same.
std::string profile_identity(const BundleSource& b) {
  if (b.profile == "okf") return {};
  std::string out = "|profile:" + b.profile;
  if (b.profile == "lessons")
    out += fmt::format("|as_of:{}|candidates:{}|scope:{}", b.policy.as_of, b.policy.include_candidates ? 1 : 0,
                       b.policy.prefer_scope);
  if (b.profile == "expertise") out += fmt::format("|as_of:{}|task_tags:{}", b.policy.as_of, fmt::join(b.policy.task_tags, ","));
  return out;
}

}  // namespace

std::string BundleSource::identity() const {
  switch (kind) {
    case BundleKind::path:
      return fmt::format("path:{}|questions:{}{}", path.generic_string(), questions.generic_string(),
                         profile_identity(*this));
    case BundleKind::generated: return fmt::format("generate:concepts={},seed={},layers={},questions={}", concepts, seed, layers, question_count);
    case BundleKind::converted: return fmt::format("convert:{}:{}|split={}|concepts={}", format, source.generic_string(), split, concepts);
    case BundleKind::git:
      return fmt::format("git:{}|commit:{}|questions:{}{}", git.text(), commit, questions.generic_string(),
                         profile_identity(*this));
    case BundleKind::combined: {
      std::string out = "combined:";
      for (const BundleSource& part : parts) out += fmt::format("[{}={}]", part.name, part.identity());
      return out + "|questions:" + questions.generic_string();
    }
  }
  return name;
}

fs::path cache_folder(const ExperimentSpec& spec) {
  if (!spec.cache_dir.empty()) return spec.cache_dir;
  throw InputError(fmt::format("{}: neither XDG_CACHE_HOME nor HOME is set, so generated and converted bundles and the "
                               "judge's replies have no cache folder; write cache_dir: DIR in the spec or pass "
                               "--set cache_dir=DIR",
                               spec.file.empty() ? spec.name : spec.file.string()));
}

bool ModelSpec::calls_provider() const {
  return replay.empty() && (name.starts_with("openai:") || name.starts_with("anthropic:"));
}

ExperimentSpec parse_spec(std::string_view yaml, std::string_view file_name, const fs::path& base_dir,
                          const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::ParserException& e) {
    throw InputError(fmt::format("{}:{}: not valid YAML: {}", file_name, e.mark.line + 1, e.msg));
  }
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (const auto repeated = find_duplicate_keys(root); !repeated.empty()) {
    throw InputError(describe_duplicate_keys(repeated, std::string(file_name)));
  }
  std::map<std::string, std::string> overridden;
  for (const std::string& argument : overrides) overridden[apply_override(root, argument)] = argument;
  SpecReader r(std::string(file_name), base_dir, overridden);
  r.check_keys(root, "", kTopKeys);
  ExperimentSpec spec;
  spec.name = retrieval::escape_invalid_utf8(fs::path(std::string(file_name)).stem().string());  // names go into JSON
  read_run_settings(r, root, spec);
  read_bundles(r, root["bundles"], spec);
  read_paths(r, root["paths"], spec);
  read_models(r, root, spec);
  read_forecast(r, root, spec);
  read_graders(r, root, spec);
  check_plan_size(r, root, spec);
  read_baseline(r, root, spec);
  // Settings that change how a run goes but not what a trial computes stay
  // out of the hash, so a run stopped at its cost cap resumes with a higher one.
  YAML::Emitter emitter;
  emitter << hashed_part(root);
  // A sim profile's content decides what its trials compute, its path does not.
  std::string hashed = emitter.c_str();
  for (const auto& m : spec.models) {
    if (!m.sim_profile.empty()) hashed += "\nprofile " + m.label + "\n" + read_file(m.sim_profile, fmt::format("cannot read the sim profile {} of model {}: check the path after sim:", m.sim_profile.string(), m.label));
  }
  spec.hash = stable_hash(hashed);
  return spec;
}

ExperimentSpec load_spec(const fs::path& file, const std::vector<std::string>& overrides) {
  const std::string text = read_file(file, fmt::format("cannot read the experiment spec {}: check the path", file.string()));
  ExperimentSpec spec = parse_spec(text, file.string(), file.parent_path(), overrides);
  spec.file = file;
  return spec;
}

}  // namespace okfbench::engine
