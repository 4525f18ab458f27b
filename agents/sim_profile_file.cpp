#include "agents/sim_profile_file.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"

namespace okfbench::agents {
namespace {

const std::set<std::string> kKeys = {
    "searches",       "drop_terms",  "add_terms",   "search_k",       "opens_per_search", "open_ratio",
    "max_open",       "parallel_opens", "follow_rate", "repeats",     "browse_rate",      "max_tool_turns",
    "answer_tokens",  "answer_tokens_spread", "seed_variation", "overheads", "follow_when_covered", "follow_concepts",
    "neighbour_opens", "rereads", "context_answer_tokens", "context_answer_tokens_spread", "context_overheads"};
const std::set<std::string> kOverheadKeys = {"per_message", "per_tool_call", "reply_priming", "per_tool", "tools_end",
                                             "content_ratio"};

class Reader {
 public:
  explicit Reader(std::string_view file) : file_(file) {}

  [[noreturn]] void fail(const YAML::Node& node, std::string_view key, std::string_view problem) const {
    const int line = node.Mark().line;
    if (line >= 0) throw InputError(fmt::format("{}:{}: {}: {}", file_, line + 1, key, problem));
    throw InputError(fmt::format("{}: {}: {}", file_, key, problem));
  }
  std::string scalar(const YAML::Node& node, std::string_view key) const {
    if (!node.IsScalar()) fail(node, key, "expected a single value");
    return node.Scalar();
  }
  int integer(const YAML::Node& node, std::string_view key, IntegerRange<int> range) const {
    const Parsed<int> p = parse_integer(scalar(node, key), range);
    if (!p.value) fail(node, key, p.problem);
    return *p.value;
  }
  double real(const YAML::Node& node, std::string_view key, RealRange range) const {
    const Parsed<double> p = parse_real(scalar(node, key), range);
    if (!p.value) fail(node, key, p.problem);
    return *p.value;
  }
  bool boolean(const YAML::Node& node, std::string_view key) const {
    const std::string text = scalar(node, key);
    if (text == "true") return true;
    if (text == "false") return false;
    fail(node, key, fmt::format("expected true or false, got \"{}\"", text.substr(0, 40)));
  }
  CountDistribution counts(const YAML::Node& node, std::string_view key) const {
    if (node.IsScalar()) return CountDistribution::always(integer(node, key, kProfileCount));
    if (!node.IsMap() || node.size() == 0) {
      fail(node, key, "expected a count (0 to 50) or a mapping {count: weight, ...}, e.g. {1: 0.7, 2: 0.3}");
    }
    CountDistribution d;
    std::set<int> seen;
    double total = 0;
    for (const auto& entry : node) {
      const int count = integer(entry.first, key, kProfileCount);
      if (!seen.insert(count).second) fail(entry.first, key, fmt::format("the count {} appears twice", count));
      const double weight = real(entry.second, fmt::format("{}.{}", key, count), kProfileWeight);
      d.weights.emplace_back(count, weight);
      total += weight;
    }
    if (total <= 0) fail(node, key, "the weights sum to 0; give at least one count a weight above 0");
    std::sort(d.weights.begin(), d.weights.end());
    return d;
  }
  void check_keys(const YAML::Node& node, std::string_view where, const std::set<std::string>& allowed) const {
    for (const auto& entry : node) {
      const std::string key = entry.first.Scalar();
      if (allowed.count(key)) continue;
      std::string list;
      for (const auto& k : allowed) list += (list.empty() ? "" : ", ") + k;
      fail(entry.first, where.empty() ? key : fmt::format("{}.{}", where, key), "unknown key; the keys are " + list);
    }
  }

 private:
  std::string file_;
};

void read_overheads(const Reader& r, const YAML::Node& node, std::string_view name, TokenOverheads& o) {
  if (!node.IsMap()) r.fail(node, name, "expected a mapping, e.g. {per_message: 3, per_tool: 7}");
  r.check_keys(node, name, kOverheadKeys);
  const auto take = [&](const char* key, int& out) {
    if (node[key]) out = r.integer(node[key], fmt::format("{}.{}", name, key), kProfileOverhead);
  };
  take("per_message", o.per_message);
  take("per_tool_call", o.per_tool_call);
  take("reply_priming", o.reply_priming);
  take("per_tool", o.per_tool);
  take("tools_end", o.tools_end);
  if (node["content_ratio"]) {
    o.content_ratio = r.real(node["content_ratio"], fmt::format("{}.content_ratio", name), kProfileContentRatio);
  }
}

// The spread alone has no mean to spread around, so it needs the mean.
void read_context_answer(const Reader& r, const YAML::Node& root, SimProfile& p) {
  const YAML::Node mean = root["context_answer_tokens"];
  const YAML::Node spread = root["context_answer_tokens_spread"];
  if (!mean) {
    if (spread) r.fail(spread, "context_answer_tokens_spread", "needs context_answer_tokens (the mean) beside it");
    return;
  }
  AnswerLength length;
  length.mean = static_cast<std::size_t>(r.integer(mean, "context_answer_tokens", kProfileAnswerTokens));
  if (spread) {
    length.spread = static_cast<std::size_t>(r.integer(spread, "context_answer_tokens_spread", kProfileAnswerSpread));
  }
  p.context_answer = length;
}

void read_profile(const Reader& r, const YAML::Node& root, SimOptions& o) {
  r.check_keys(root, "", kKeys);
  SimProfile& p = o.profile;
  if (root["searches"]) p.searches = r.counts(root["searches"], "searches");
  if (root["drop_terms"]) p.drop_terms = r.counts(root["drop_terms"], "drop_terms");
  if (root["add_terms"]) p.add_terms = r.counts(root["add_terms"], "add_terms");
  if (root["repeats"]) p.repeats = r.counts(root["repeats"], "repeats");
  if (root["follow_concepts"]) p.follow_concepts = r.counts(root["follow_concepts"], "follow_concepts");
  if (root["neighbour_opens"]) p.neighbour_opens = r.counts(root["neighbour_opens"], "neighbour_opens");
  if (root["rereads"]) p.rereads = r.counts(root["rereads"], "rereads");
  if (root["follow_when_covered"]) p.follow_when_covered = r.boolean(root["follow_when_covered"], "follow_when_covered");
  if (root["search_k"]) o.search_k = static_cast<std::size_t>(r.integer(root["search_k"], "search_k", kProfileSearchK));
  if (const YAML::Node n = root["opens_per_search"]) {
    if (n.IsScalar() && n.Scalar() == "ratio") {
      p.opens_per_search.reset();
    } else {
      p.opens_per_search = r.counts(n, "opens_per_search");
    }
  }
  if (root["open_ratio"]) o.open_ratio = r.real(root["open_ratio"], "open_ratio", kProfileRate);
  if (root["max_open"]) o.max_open = static_cast<std::size_t>(r.integer(root["max_open"], "max_open", kProfileCount));
  if (root["parallel_opens"]) p.parallel_opens = r.real(root["parallel_opens"], "parallel_opens", kProfileRate);
  if (root["follow_rate"]) p.follow_rate = r.real(root["follow_rate"], "follow_rate", kProfileRate);
  if (root["browse_rate"]) p.browse_rate = r.real(root["browse_rate"], "browse_rate", kProfileRate);
  if (root["max_tool_turns"]) p.max_tool_turns = r.integer(root["max_tool_turns"], "max_tool_turns", kProfileMaxTurns);
  if (root["answer_tokens"]) {
    o.answer_tokens = static_cast<std::size_t>(r.integer(root["answer_tokens"], "answer_tokens", kProfileAnswerTokens));
  }
  if (root["answer_tokens_spread"]) {
    o.answer_tokens_spread =
        static_cast<std::size_t>(r.integer(root["answer_tokens_spread"], "answer_tokens_spread", kProfileAnswerSpread));
  }
  read_context_answer(r, root, p);
  if (root["seed_variation"]) p.seed_variation = r.boolean(root["seed_variation"], "seed_variation");
  if (root["overheads"]) read_overheads(r, root["overheads"], "overheads", p.overheads);
  if (root["context_overheads"]) {
    p.context_overheads = p.overheads;  // a key it leaves out is the agent path's
    read_overheads(r, root["context_overheads"], "context_overheads", *p.context_overheads);
  }
}

std::string weight_text(double w) {
  std::string text = fmt::format("{:.4f}", w);
  while (text.size() > 1 && text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

std::string counts_text(const CountDistribution& d) {
  if (d.weights.size() == 1) return std::to_string(d.weights.front().first);
  std::string out;
  for (const auto& [count, weight] : d.weights) out += fmt::format("{}{}: {}", out.empty() ? "" : ", ", count, weight_text(weight));
  return "{" + out + "}";
}
std::string overheads_text(std::string_view name, const TokenOverheads& t) {
  return fmt::format(
      "{}: {{per_message: {}, per_tool_call: {}, reply_priming: {}, per_tool: {}, tools_end: {}, content_ratio: {}}}\n", name,
      t.per_message, t.per_tool_call, t.reply_priming, t.per_tool, t.tools_end, weight_text(t.content_ratio));
}
}  // namespace

SimOptions parse_sim_profile(std::string_view yaml, std::string_view file_name, SimOptions base) {
  const Reader r(file_name);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}: not a YAML profile: {}", file_name, e.mark.line + 1, e.msg));
  }
  // An empty file is what a failed write (a full disk) used to leave; read as
  // the default it made a run measure the wrong behaviour without a word.
  if (root.IsNull())
    throw InputError(fmt::format("{}: the sim profile is empty (was it cut short by a failed write?); write `{{}}` for "
                                 "the default profile, or fit one again with okfbench calibrate", file_name));
  if (!root.IsMap()) r.fail(root, "profile", "expected a mapping of profile keys (agents/README.md, \"Behaviour profiles\")");
  read_profile(r, root, base);
  return base;
}

SimOptions load_sim_profile(const std::filesystem::path& file, SimOptions base) {
  const std::string text =
      read_file(file, fmt::format("cannot read the sim profile {}: check the path after sim:", file.string()));
  return parse_sim_profile(text, file.string(), std::move(base));
}

std::string sim_profile_yaml(const SimOptions& o, std::string_view comment) {
  std::string out;
  std::istringstream lines{std::string(comment)};
  for (std::string line; std::getline(lines, line);) out += line.empty() ? "#\n" : "# " + line + "\n";
  const SimProfile& p = o.profile;
  out += fmt::format("searches: {}\n", counts_text(p.searches));
  out += fmt::format("drop_terms: {}\n", counts_text(p.drop_terms));
  out += fmt::format("add_terms: {}\n", counts_text(p.add_terms));
  out += fmt::format("search_k: {}\n", o.search_k);
  out += fmt::format("opens_per_search: {}\n", p.opens_per_search ? counts_text(*p.opens_per_search) : "ratio");
  out += fmt::format("open_ratio: {}\n", weight_text(o.open_ratio));
  out += fmt::format("max_open: {}\n", o.max_open);
  out += fmt::format("parallel_opens: {}\n", weight_text(p.parallel_opens));
  out += fmt::format("follow_rate: {}\n", weight_text(p.follow_rate));
  out += fmt::format("follow_when_covered: {}\n", p.follow_when_covered ? "true" : "false");
  out += fmt::format("follow_concepts: {}\n", counts_text(p.follow_concepts));
  out += fmt::format("neighbour_opens: {}\n", counts_text(p.neighbour_opens));
  out += fmt::format("rereads: {}\n", counts_text(p.rereads));
  out += fmt::format("repeats: {}\n", counts_text(p.repeats));
  out += fmt::format("browse_rate: {}\n", weight_text(p.browse_rate));
  out += fmt::format("max_tool_turns: {}\n", p.max_tool_turns);
  out += fmt::format("answer_tokens: {}\n", o.answer_tokens);
  out += fmt::format("answer_tokens_spread: {}\n", o.answer_tokens_spread);
  if (p.context_answer) {
    out += fmt::format("context_answer_tokens: {}\n", p.context_answer->mean);
    out += fmt::format("context_answer_tokens_spread: {}\n", p.context_answer->spread);
  }
  out += fmt::format("seed_variation: {}\n", p.seed_variation ? "true" : "false");
  out += overheads_text("overheads", p.overheads);
  if (p.context_overheads) out += overheads_text("context_overheads", *p.context_overheads);
  return out;
}

}  // namespace okfbench::agents
