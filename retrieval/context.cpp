#include "retrieval/context.hpp"

#include <fmt/format.h>
#include <utf8proc.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <unordered_set>

#include "retrieval/analyzer.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"
#include "retrieval/tokens.hpp"
#include "retrieval/usage.hpp"

namespace okfbench::retrieval {
namespace {

constexpr std::string_view kSeparator = "\n\n";

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

std::string one_line(std::string_view s) {
  std::string out(trim(s));
  std::replace(out.begin(), out.end(), '\n', ' ');
  std::replace(out.begin(), out.end(), '\r', ' ');
  return out;
}

std::string reason_text(const PackEntry& meta) {
  if (meta.reason == PackReason::via) return fmt::format("via {} from {}", meta.relation, meta.from);
  return fmt::format("seed, score {:.3f}", meta.score);
}

// One block in the documented format. It starts with "### ", a character
// that is not white space right after the "\n\n" separator: every BPE piece
// boundary sits there, so block counts add up exactly (see PackBuilder).
std::string render_block(const Concept& c, const PackEntry& meta, Citations citations) {
  std::string block = "### " + one_line(c.title.empty() ? c.id : c.title) + "\n";
  block += "id: " + c.id;
  if (!meta.bundle.empty()) block += " | bundle: " + meta.bundle;
  if (!c.type.empty()) block += " | type: " + one_line(c.type);
  if (c.status != Status::stable) block += " | status: " + std::string(to_string(c.status));
  block += " | " + reason_text(meta) + "\n";
  if (!trim(c.description).empty()) block += one_line(c.description) + "\n";
  if (std::string_view body = trim(c.body); !body.empty()) {
    block += "\n";
    block += body;
    block += "\n";
  }
  if (citations == Citations::include && !c.citations.empty()) {
    block += "\nCitations:\n";
    for (const auto& citation : c.citations) block += "- " + one_line(citation.label) + ": " + one_line(citation.text) + "\n";
  }
  while (!block.empty() && block.back() == '\n') block.pop_back();
  return block;
}

// The pack text under construction and its exact token count. With a BPE
// counter the count of text + "\n\n" + block is the count of the text so far
// with the separator plus the count of the block: the pre-tokenizer always
// ends a piece after a newline that precedes a non-space character, and no
// piece before that point looks past it. So each candidate costs one count of
// its own block, not of the whole pack. Other counters (e.g. ceil(bytes/4),
// which is not additive) recount the whole candidate text.
class PackBuilder {
 public:
  explicit PackBuilder(const TokenCounter& counter)
      : counter_(counter), additive_(dynamic_cast<const BpeCounter*>(&counter) != nullptr) {}

  std::size_t tokens_with(const std::string& block) const {
    if (text_.empty()) return counter_.count(block);
    if (!additive_) return counter_.count(text_ + std::string(kSeparator) + block);
    return closed_ + last_with_separator() + counter_.count(block);
  }
  void append(const std::string& block) {
    if (!text_.empty()) {
      closed_ += last_with_separator();
      text_ += kSeparator;
    }
    text_ += block;
    last_block_ = block;
    last_with_separator_.reset();
  }
  const std::string& text() const { return text_; }
  std::size_t count(std::string_view text) const { return counter_.count(text); }

 private:
  std::size_t last_with_separator() const {
    if (!last_with_separator_) last_with_separator_ = counter_.count(last_block_ + std::string(kSeparator));
    return *last_with_separator_;
  }
  const TokenCounter& counter_;
  bool additive_;
  std::string text_;
  std::string last_block_;
  std::size_t closed_ = 0;  // every block but the last, each with its separator
  mutable std::optional<std::size_t> last_with_separator_;
};

// Byte offsets at which `text` may be cut: after each BPE token that ends on
// a UTF-8 character boundary (never inside a character), or after each
// character for other counters. Ascending, without 0, ending at text.size().
std::vector<std::size_t> cut_points(const TokenCounter& counter, const std::string& text) {
  std::vector<std::size_t> cuts;
  auto is_boundary = [&](std::size_t at) {
    return at == text.size() || (static_cast<unsigned char>(text[at]) & 0xC0) != 0x80;
  };
  if (const auto* bpe = dynamic_cast<const BpeCounter*>(&counter)) {
    std::size_t at = 0;
    for (TokenId id : bpe->encoding().encode_ordinary(text)) {
      const TokenId one[] = {id};
      at += bpe->encoding().decode(one).size();
      if (is_boundary(at)) cuts.push_back(at);
    }
  } else {
    for (std::size_t at = 1; at <= text.size(); ++at) {
      if (is_boundary(at)) cuts.push_back(at);
    }
  }
  return cuts;
}

// The largest n in [1, max_n] whose make(n) fits the budget. Counts are
// nearly but not strictly monotone in n (BPE re-merges at the cut), so binary
// search, then step down until the text really fits.
template <class Make>
std::optional<std::string> longest_fit(std::size_t max_n, std::size_t budget, const TokenCounter& counter, Make make) {
  std::size_t lo = 0, hi = max_n;
  while (lo < hi) {
    std::size_t mid = (lo + hi + 1) / 2;
    if (counter.count(make(mid)) <= budget) lo = mid;
    else hi = mid - 1;
  }
  for (std::size_t n = lo; n >= 1; --n) {
    std::string text = make(n);
    if (counter.count(text) <= budget) return text;
  }
  return std::nullopt;
}

// The longest token-boundary prefix of `block` that fits `budget` with its
// marker, or without the marker when the budget cannot hold even that.
std::string truncate_block(const TokenCounter& counter, const std::string& block, std::size_t budget) {
  const std::vector<std::size_t> cuts = cut_points(counter, block);
  const std::size_t total = counter.count(block);
  auto head = [&](std::size_t n) { return block.substr(0, cuts[n - 1]); };
  auto marked = [&](std::size_t n) {
    std::string text = head(n);
    return text + fmt::format("\n[truncated: {} of {} tokens shown]", counter.count(text), total);
  };
  if (auto text = longest_fit(cuts.size(), budget, counter, marked)) return *text;
  if (auto text = longest_fit(cuts.size(), budget, counter, head)) return *text;
  return {};
}

struct Candidate {
  const Concept* concept_ptr;
  PackEntry meta;
  const Bundle* owner = nullptr;  // the bundle the concept belongs to
};

// The bundle a hit or entry names ("" with one bundle).
const NamedBundle* owner_of(std::span<const NamedBundle> bundles, std::string_view name) {
  if (bundles.size() == 1) return &bundles.front();
  for (const NamedBundle& b : bundles)
    if (b.name == name) return &b;
  return nullptr;
}

// The name entries carry: "" when there is one bundle.
std::string entry_bundle(std::span<const NamedBundle> bundles, const NamedBundle& owner) {
  return bundles.size() > 1 ? owner.name : std::string();
}

std::vector<Candidate> grafito_candidates(std::span<const NamedBundle> bundles, const SearchIndex& index,
                                          std::string_view query, const ContextOptions& options) {
  SearchOptions search = options.filters;
  search.limit = options.k;
  std::vector<Candidate> out;
  std::unordered_set<std::string> seen;  // entry bundle + '\0' + id
  const std::vector<Hit> hits = options.retriever ? options.retriever->search(query, search) : index.search(query, search);
  for (const Hit& hit : hits) {
    const NamedBundle* owner = owner_of(bundles, hit.bundle);
    if (!owner) continue;
    const Concept* c = hit.concept_ptr ? hit.concept_ptr : owner->bundle->find(hit.id);
    if (!c) continue;
    PackEntry meta;
    meta.id = c->id;
    meta.bundle = entry_bundle(bundles, *owner);
    if (!seen.insert(meta.bundle + '\0' + c->id).second) continue;
    meta.score = hit.score;
    out.push_back({c, meta, owner->bundle});
  }
  const Selection* selection = options.filters.selection.get();
  if (selection) {  // the policy's preferred concepts rank first, each group in score order
    std::stable_partition(out.begin(), out.end(), [&](const Candidate& c) { return selection->prefers(c.meta.id); });
  }
  const std::size_t seeds = out.size();
  for (std::size_t i = 0; i < seeds && options.expand_hops > 0; ++i) {
    const Bundle& bundle = *out[i].owner;
    const std::string name = out[i].meta.bundle;
    for (const Neighbor& n : bundle.neighbors(out[i].meta.id, Direction::out, options.relation, options.expand_hops)) {
      const Concept* c = bundle.find(n.id);
      if (!c || (selection && selection->excludes(c->id)) || !seen.insert(name + '\0' + c->id).second) continue;
      PackEntry meta;
      meta.id = c->id;
      meta.bundle = name;
      meta.reason = PackReason::via;
      meta.relation = n.relation;
      meta.from = n.from;
      meta.hops = n.hops;
      out.push_back({c, meta, &bundle});
    }
  }
  return out;
}

void pack_grafito(const std::vector<Candidate>& candidates, const ContextOptions& options,
                  const TokenCounter& counter, ContextPack& pack) {
  PackBuilder builder(counter);
  std::size_t tokens = 0;
  for (const Candidate& candidate : candidates) {
    std::string block = render_block(*candidate.concept_ptr, candidate.meta, options.citations);
    std::size_t with = builder.tokens_with(block);
    PackEntry meta = candidate.meta;
    if (with > options.budget_tokens && pack.concepts.empty()) {
      block = truncate_block(counter, block, options.budget_tokens);  // the top hit: cut, never dropped
      meta.truncated = true;
      pack.truncated = true;
      with = builder.tokens_with(block);
    }
    if (with > options.budget_tokens) {
      pack.skipped.push_back(meta.id);
      pack.truncated = true;
      continue;
    }
    meta.tokens = with - tokens;
    tokens = with;
    builder.append(block);
    pack.concepts.push_back(std::move(meta));
  }
  pack.text = builder.text();
}

// contextweaver's English stop words (contextweaver._utils.STOPWORDS), so that
// its Jaccard scores are reproduced exactly.
const std::set<std::string, std::less<>>& weaver_stop_words() {
  static const std::set<std::string, std::less<>> words = {
      "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at",
      "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "cannot",
      "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "get",
      "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how",
      "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no",
      "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out",
      "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs",
      "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under",
      "until", "up", "us", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom",
      "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves"};
  return words;
}

bool is_word_codepoint(utf8proc_int32_t cp) {
  if (cp == '_') return true;
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

// A word set as a sorted vector without duplicates: cheaper than std::set
// when every concept of the bundle is scored for every query.
using WordSet = std::vector<std::string>;

WordSet word_set(std::string_view text) {
  WordSet words = weaver_words(text);
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}

WordSet united(const WordSet& a, const WordSet& b) {
  WordSet out;
  out.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// |a ∩ b| / |a ∪ b|, 0 when both are empty (contextweaver._utils.jaccard).
double jaccard(const WordSet& a, const WordSet& b) {
  if (a.empty() && b.empty()) return 0.0;
  std::size_t common = 0;
  for (auto i = a.begin(), j = b.begin(); i != a.end() && j != b.end();) {
    if (*i < *j) ++i;
    else if (*j < *i) ++j;
    else ++common, ++i, ++j;
  }
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

// Frontmatter `confidence` as contextweaver reads it: a number, else 1.
double confidence_of(const Concept& c) {
  auto it = c.extra.find("confidence");
  if (it == c.extra.end()) return 1.0;
  constexpr double most = std::numeric_limits<double>::max();
  const Parsed<double> parsed = parse_real(trim(it->second), RealRange{-most, most});  // never nan, which clamp keeps
  return parsed.value ? std::clamp(*parsed.value, 0.0, 1.0) : 1.0;
}

// True when `tag` is "" or one of the concept's usage tags (case-insensitive).
bool has_usage(const Concept& c, std::string_view tag) {
  if (tag.empty()) return true;
  const std::vector<std::string> usage = classify_usage(c);
  return std::find(usage.begin(), usage.end(), fold_case(tag)) != usage.end();
}

void pack_weaver(std::span<const NamedBundle> bundles, std::string_view query, const ContextOptions& options,
                 const TokenCounter& counter, ContextPack& pack) {
  const auto query_words = word_set(query);
  const Selection* selection = options.filters.selection.get();
  std::vector<Candidate> ranked;
  for (const NamedBundle& owner : bundles) {
    for (const Concept& c : owner.bundle->concepts()) {
      if (selection && selection->excludes(c.id)) continue;
      if (!options.now.empty() && c.is_stale(options.now)) continue;
      if (!has_usage(c, options.filters.usage_tag)) continue;
      std::string tags;
      for (const auto& t : c.tags) tags += (tags.empty() ? "" : " ") + t;
      const WordSet words = united(united(word_set(c.body), word_set(c.title)), word_set(tags));
      PackEntry meta;
      meta.id = c.id;
      meta.bundle = entry_bundle(bundles, owner);
      meta.score = (query_words.empty() ? 0.0 : jaccard(query_words, words)) + confidence_of(c);
      ranked.push_back({&c, meta, owner.bundle});
    }
  }
  auto first = [&](const Candidate& c) { return selection && selection->prefers(c.meta.id); };
  std::stable_sort(ranked.begin(), ranked.end(), [&](const Candidate& a, const Candidate& b) {
    if (first(a) != first(b)) return first(a);
    if (a.meta.score != b.meta.score) return a.meta.score > b.meta.score;
    return a.meta.id != b.meta.id ? a.meta.id < b.meta.id : a.meta.bundle < b.meta.bundle;
  });
  if (options.k > 0 && ranked.size() > options.k) ranked.resize(options.k);
  std::size_t remaining = options.budget_tokens;
  std::string text;
  for (Candidate& candidate : ranked) {
    const std::size_t cost = std::max<std::size_t>(1, counter.count(candidate.concept_ptr->body));
    if (cost > remaining) {
      pack.skipped.push_back(candidate.meta.id);
      pack.truncated = true;
      continue;
    }
    remaining -= cost;
    candidate.meta.tokens = cost;
    if (!text.empty()) text += kSeparator;
    text += render_block(*candidate.concept_ptr, candidate.meta, options.citations);
    pack.concepts.push_back(candidate.meta);
  }
  pack.text = std::move(text);
}

}  // namespace

std::vector<std::string> weaver_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  std::size_t chars = 0;
  auto flush = [&] {
    if (chars >= 2 && !weaver_stop_words().contains(word)) words.push_back(word);
    word.clear();
    chars = 0;
  };
  const auto* s = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    if (const auto byte = static_cast<unsigned char>(text[i]); byte < 0x80) {  // ASCII without utf8proc
      if (std::isalnum(byte) || byte == '_') {
        word += static_cast<char>(std::tolower(byte));
        ++chars;
      } else {
        flush();
      }
      ++i;
      continue;
    }
    utf8proc_int32_t cp = 0;
    auto len = utf8proc_iterate(s + i, static_cast<utf8proc_ssize_t>(text.size() - i), &cp);
    if (len <= 0) {  // an invalid byte separates words, like any non-word character
      flush();
      ++i;
      continue;
    }
    i += static_cast<std::size_t>(len);
    if (!is_word_codepoint(cp)) {
      flush();
      continue;
    }
    utf8proc_uint8_t buffer[4];
    auto n = utf8proc_encode_char(utf8proc_tolower(cp), buffer);
    word.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(n));
    ++chars;
  }
  flush();
  return words;
}

std::string_view to_string(PackStrategy strategy) { return strategy == PackStrategy::weaver ? "weaver" : "grafito"; }
std::string_view to_string(PackReason reason) { return reason == PackReason::via ? "via" : "seed"; }

ContextPack pack_context(const Bundle& bundle, const SearchIndex& index, std::string_view query,
                         const ContextOptions& options) {
  const NamedBundle one[] = {{"", &bundle}};
  return pack_context(one, index, query, options);
}

ContextPack pack_context(std::span<const NamedBundle> bundles, const SearchIndex& index, std::string_view query,
                         const ContextOptions& options) {
  if (options.budget_tokens == 0) throw UsageError("budget_tokens must be at least 1");
  if (bundles.empty()) throw UsageError("context: no bundle to pack from");
  if (bundles.size() > 1) {
    check_bundle_names(bundles);
    if (options.retriever) throw UsageError("a retrieval method other than bm25f takes one bundle, not several");
  }
  static const HeuristicCounter heuristic;
  const TokenCounter& counter = options.counter ? *options.counter : heuristic;
  ContextPack pack;
  pack.budget_tokens = options.budget_tokens;
  pack.counter = counter.name();
  pack.strategy = options.strategy;
  if (options.filters.selection) {
    pack.policy = options.filters.selection->policy;
    pack.excluded = options.filters.selection->excluded;
  }
  if (options.strategy == PackStrategy::weaver) {
    pack_weaver(bundles, query, options, counter, pack);
  } else {
    pack_grafito(grafito_candidates(bundles, index, query, options), options, counter, pack);
  }
  pack.tokens = counter.count(pack.text);
  pack.over_budget = pack.tokens > pack.budget_tokens;
  for (const PackEntry& packed : pack.concepts) {
    if (options.citations == Citations::omit) break;
    for (const auto& citation : owner_of(bundles, packed.bundle)->bundle->find(packed.id)->citations) {
      pack.citations.push_back({packed.id, citation.label, citation.text, packed.bundle});
    }
  }
  return pack;
}

}  // namespace okfbench::retrieval
