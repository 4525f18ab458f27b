#include "retrieval/search.hpp"

#include <malloc.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <thread>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_map>

#include "retrieval/binary_io.hpp"
#include "retrieval/columns.hpp"
#include "core/error.hpp"
#include "retrieval/usage.hpp"

namespace okfbench::retrieval {
namespace {

constexpr std::size_t kMaxFields = 4;
constexpr std::uint32_t kStopword = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kAbsent = std::numeric_limits<std::uint32_t>::max();

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TermMap = std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>>;

// Open-addressing map from token bytes to a term id. The index build looks
// up every token it reads; std::unordered_map's node chasing dominated the
// build time (perf, SciFact), this flat table with stored hashes does not.
class TokenTable {
 public:
  TokenTable() : slots_(1u << 14) {}

  // The value stored for `key`, or make() stored and returned.
  template <typename Make>
  std::uint32_t find_or_insert(std::string_view key, Make&& make) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    const std::uint64_t h = hash(key);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.len == kEmptySlot) {
        std::uint32_t value = make();
        slot = {h, static_cast<std::uint32_t>(arena_.size()), static_cast<std::uint32_t>(key.size()), value};
        arena_.append(key);
        ++size_;
        return value;
      }
      if (slot.hash == h && slot.len == key.size() && arena_.compare(slot.offset, slot.len, key) == 0) {
        return slot.value;
      }
    }
  }

 private:
  static constexpr std::uint32_t kEmptySlot = std::numeric_limits<std::uint32_t>::max();
  struct Slot {
    std::uint64_t hash = 0;
    std::uint32_t offset = 0;
    std::uint32_t len = kEmptySlot;
    std::uint32_t value = 0;
  };

  static std::uint64_t hash(std::string_view key) {
    std::uint64_t h = 0x9E3779B97F4A7C15ull ^ key.size();
    const char* p = key.data();
    std::size_t n = key.size();
    for (; n >= 8; n -= 8, p += 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
      h ^= h >> 31;
    }
    std::uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (h ^ w) * 0x94d049bb133111ebull;
    return h ^ (h >> 29);
  }

  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.len == kEmptySlot) continue;
      std::size_t i = slot.hash & mask;
      while (slots_[i].len != kEmptySlot) i = (i + 1) & mask;
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;
  std::string arena_;
  std::size_t size_ = 0;
};

struct Posting {
  std::uint32_t doc = 0;
  float impact = 0;  // tf~ / (k1 + tf~), see search.hpp
};

struct RawPosting {
  std::uint32_t doc = 0;
  std::array<std::uint16_t, kMaxFields> tf{};
};

// One term's postings while documents are added, before the field lengths
// that turn counts into impacts are known. Each posting is packed: the
// document number as a varint delta from the one before (the first from 0),
// a byte with a bit per field that has a count, then those counts as
// varints. About 4 bytes where a RawPosting takes 12, and a big bundle's
// build holds every posting of the bundle this way at once.
class RawPostings {
 public:
  std::size_t size() const { return count_; }

  // `doc` is above every document added before.
  void add(std::uint32_t doc, const std::array<std::uint16_t, kMaxFields>& tf) {
    put(doc - last_);
    std::uint8_t fields = 0;
    for (std::size_t f = 0; f < kMaxFields; ++f)
      if (tf[f] != 0) fields = static_cast<std::uint8_t>(fields | (1u << f));
    bytes_.push_back(fields);
    for (std::size_t f = 0; f < kMaxFields; ++f)
      if (tf[f] != 0) put(tf[f]);
    last_ = doc;
    ++count_;
  }

  // Moves `next`'s postings after these; its documents all follow ours.
  void append(RawPostings&& next) {
    if (next.count_ == 0) return;
    if (count_ == 0) {
      *this = std::move(next);
      return;
    }
    std::size_t at = 0;
    const std::uint32_t first = next.get(at);  // next's first delta is from 0: its document number
    put(first - last_);
    bytes_.insert(bytes_.end(), next.bytes_.begin() + static_cast<std::ptrdiff_t>(at), next.bytes_.end());
    last_ = next.last_;
    count_ += next.count_;
    next = RawPostings();
  }

  template <typename Visit>
  void for_each(Visit&& visit) const {
    RawPosting posting;
    for (std::size_t at = 0; at < bytes_.size();) {
      posting.doc += get(at);
      const std::uint8_t fields = bytes_[at++];
      for (std::size_t f = 0; f < kMaxFields; ++f)
        posting.tf[f] = (fields >> f) & 1u ? static_cast<std::uint16_t>(get(at)) : std::uint16_t{0};
      visit(posting);
    }
  }

 private:
  void put(std::uint32_t value) {
    for (; value >= 0x80; value >>= 7) bytes_.push_back(static_cast<std::uint8_t>(value | 0x80));
    bytes_.push_back(static_cast<std::uint8_t>(value));
  }
  std::uint32_t get(std::size_t& at) const {
    std::uint32_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
      const std::uint8_t byte = bytes_[at++];
      value |= static_cast<std::uint32_t>(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
  }

  std::vector<std::uint8_t> bytes_;
  std::uint32_t last_ = 0;   // the last document added
  std::uint32_t count_ = 0;  // below the number of documents, which fits 32 bits
};

double status_multiplier(Status status) {
  switch (status) {
    case Status::draft: return 0.8;
    case Status::deprecated: return 0.5;
    case Status::stable: break;
  }
  return 1.0;
}

bool is_reserved(std::string_view id) {
  std::string_view name = id.substr(id.find_last_of('/') == std::string_view::npos ? 0 : id.find_last_of('/') + 1);
  return name == "index" || name == "log";
}

// Interns folded strings (types, tags, layers) as small ids for filtering.
struct Names {
  TermMap ids;
  std::uint32_t intern(std::string_view name) {
    auto it = ids.find(name);
    if (it != ids.end()) return it->second;
    auto id = static_cast<std::uint32_t>(ids.size());
    ids.emplace(std::string(name), id);
    return id;
  }
  std::uint32_t find(std::string_view name) const {
    auto it = ids.find(name);
    return it == ids.end() ? kAbsent : it->second;
  }
};

void validate(const IndexConfig& config) {
  const FieldWeights& w = config.weights;
  if (!(config.k1 >= 0) || !std::isfinite(config.k1)) throw InputError("search: k1 must be a number >= 0");
  if (!(config.b >= 0 && config.b <= 1)) throw InputError("search: b must be between 0 and 1");
  if (!(w.title >= 0 && w.tags >= 0 && w.description >= 0 && w.body >= 0)) {
    throw InputError("search: field weights must be >= 0");
  }
}

// Zeroed score accumulator reused by every query on this thread, so a
// query allocates nothing proportional to the collection.
struct Accumulator {
  std::vector<double> scores;
  std::vector<std::uint32_t> touched;  // documents with a score, first `count` entries
  std::size_t count = 0;
  void reserve(std::size_t n) {
    if (scores.size() < n) {
      scores.resize(n, 0.0);
      touched.resize(n);
    }
  }
  void clear() {
    for (std::size_t i = 0; i < count; ++i) scores[touched[i]] = 0.0;
    count = 0;
  }
};

struct AccumulatorLease {
  Accumulator& acc;
  ~AccumulatorLease() { acc.clear(); }
};

Accumulator& thread_accumulator() {
  thread_local Accumulator acc;
  return acc;
}

}  // namespace

std::size_t clamp_tool_limit(long long requested) {
  return static_cast<std::size_t>(std::clamp<long long>(requested, 1, 50));
}

IndexConfig lucene_flat_config() {
  IndexConfig config;
  config.mode = FieldMode::flat;
  config.k1 = 0.9;
  config.b = 0.4;
  config.analyzer = {Stemmer::porter, Stopwords::lucene};
  return config;
}

namespace {
using detail::Column;
using detail::Rows;
using detail::Strings;

// Term id -> postings by doc: a vector per term when built (each allocated
// as that term's raw postings are freed, so a build never holds both in
// full), one table read in place when restored. Saved as that table.
class PostingLists {
 public:
  PostingLists() = default;
  explicit PostingLists(std::vector<std::vector<Posting>> built) : built_(std::move(built)) {}
  explicit PostingLists(Rows<Posting> in_place) : in_place_(std::move(in_place)), restored_(true) {}

  std::size_t size() const { return restored_ ? in_place_.size() : built_.size(); }
  std::span<const Posting> operator[](std::size_t term) const {
    return restored_ ? in_place_[term] : std::span<const Posting>(built_[term]);
  }
  std::size_t total() const {
    if (restored_) return in_place_.total();
    std::size_t n = 0;
    for (const std::vector<Posting>& list : built_) n += list.size();
    return n;
  }
  void save(detail::Writer& w) const {
    std::vector<std::uint64_t> offsets{0};
    for (std::size_t t = 0; t < size(); ++t) offsets.push_back(offsets.back() + (*this)[t].size());
    w.put_span(std::span<const std::uint64_t>(offsets));
    w.begin_span(offsets.back());
    for (std::size_t t = 0; t < size(); ++t) w.put_elements((*this)[t]);
  }

 private:
  std::vector<std::vector<Posting>> built_;
  Rows<Posting> in_place_;
  bool restored_ = false;
};

struct IndexData {
  IndexConfig config;
  Analyzer analyzer;
  // doc number -> key, ascending: the id, or for a document of a named
  // bundle id + '\0' + bundle, so that ties go by id, then bundle.
  Strings ids;
  std::vector<const Concept*> concepts;
  Column<float> multiplier;
  Column<std::uint32_t> type;
  Column<std::uint32_t> layer;
  Rows<std::uint32_t> tags;   // doc -> sorted tag ids
  Rows<std::uint32_t> usage;  // doc -> sorted usage tag ids
  Names types, layers, tag_names, usage_names;
  Strings terms;  // ascending: a term's id is its position
  Column<double> idf;
  PostingLists postings;  // term id -> postings by doc
  IndexStats stats;
  std::shared_ptr<const void> file;  // what keeps a restored index's bytes mapped

  explicit IndexData(const IndexConfig& c) : config(c), analyzer(c.analyzer) {}
};

// The position of `term` in the ascending `terms`, or kAbsent.
std::uint32_t position_of(const Strings& terms, std::string_view term) {
  std::size_t low = 0, high = terms.size();
  while (low < high) {
    const std::size_t mid = low + (high - low) / 2;
    if (terms[mid] < term) low = mid + 1;
    else high = mid;
  }
  return low < terms.size() && terms[low] == term ? static_cast<std::uint32_t>(low) : kAbsent;
}

// Everything build() needs while documents stream through it.
// Builds the postings of a contiguous range of documents (numbered from
// `first`) with its own term ids; absorb() appends the next range's
// postings, so ranges built on several threads merge into the index a
// single thread would build (same term ids, same postings order).
class Builder {
 public:
  Builder(IndexData& index, std::uint32_t first) : index_(index), first_(first) {}

  void add(const Document& doc, std::uint32_t number) {
    for (std::size_t f = 0; f < kMaxFields; ++f) lengths_[f].push_back(0);
    if (index_.config.mode == FieldMode::flat) {
      add_field(doc.title, 0, number);
      add_field(doc.body, 0, number);
    } else {
      add_field(doc.title, 0, number);
      for (const std::string& tag : doc.tags) add_field(tag, 1, number);
      add_field(doc.description, 2, number);
      add_field(doc.body, 3, number);
    }
    flush_document(number);
  }

  void absorb(Builder& next) {
    for (std::size_t t = 0; t < next.names_.size(); ++t) {
      auto [pos, inserted] = terms_.try_emplace(next.names_[t], static_cast<std::uint32_t>(raw_.size()));
      if (inserted) {
        raw_.push_back(std::move(next.raw_[t]));
        names_.push_back(next.names_[t]);
      } else {
        raw_[pos->second].append(std::move(next.raw_[t]));
      }
    }
    for (std::size_t f = 0; f < kMaxFields; ++f) {
      lengths_[f].insert(lengths_[f].end(), next.lengths_[f].begin(), next.lengths_[f].end());
    }
  }

  // Terms in ascending order (a term's id in the index is its position),
  // with their idf and postings.
  void finish() {
    const std::size_t n = lengths_[0].size();
    index_.stats.documents = n;
    index_.stats.terms = raw_.size();
    std::array<double, kMaxFields> avg{};
    for (std::size_t f = 0; f < kMaxFields; ++f) {
      double total = std::accumulate(lengths_[f].begin(), lengths_[f].end(), 0.0);
      index_.stats.tokens += static_cast<std::size_t>(total);
      avg[f] = n == 0 ? 0.0 : total / static_cast<double>(n);
    }
    std::vector<std::uint32_t> order(raw_.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return names_[a] < names_[b]; });
    Strings::Builder terms;
    std::vector<double> idf;
    idf.reserve(order.size());
    std::vector<std::vector<Posting>> postings;
    postings.reserve(order.size());
    // Each term's raw postings are freed as its final ones are made, in
    // pieces the allocator keeps but cannot reuse for the larger final
    // vectors; handing them back every few million postings lowers a
    // 100,000-concept build's peak by about 20 MB (retrieval/docs/index-cache.md).
    constexpr std::size_t kTrimEvery = std::size_t{1} << 22;
    std::size_t since_trim = 0;
    for (std::uint32_t t : order) {
      terms.add(names_[t]);
      since_trim += raw_[t].size();
      idf.push_back(finish_term(t, avg, postings.emplace_back()));
      if (since_trim > kTrimEvery) {
        ::malloc_trim(0);
        since_trim = 0;
      }
    }
    index_.terms = terms.finish();
    index_.idf = Column<double>(std::move(idf));
    index_.postings = PostingLists(std::move(postings));
    index_.stats.postings = index_.postings.total();
  }

 private:
  std::array<double, kMaxFields> field_weights() const {
    const FieldWeights& w = index_.config.weights;
    if (index_.config.mode == FieldMode::flat) return {1.0, 0.0, 0.0, 0.0};
    return {w.title, w.tags, w.description, w.body};
  }

  std::uint32_t term_id(std::string_view token) {
    return surface_.find_or_insert(token, [&] {
      std::string term = index_.analyzer.term(token);
      if (term.empty()) return kStopword;
      auto [pos, inserted] = terms_.try_emplace(term, static_cast<std::uint32_t>(raw_.size()));
      if (inserted) {
        raw_.emplace_back();
        names_.push_back(std::move(term));
      }
      return pos->second;
    });
  }

  void add_field(std::string_view text, std::size_t field, std::uint32_t number) {
    for_each_token_fast(text, [&](std::string_view token) {
      std::uint32_t t = term_id(token);
      if (t == kStopword) return;
      ++lengths_[field][number - first_];
      if (slot_.size() <= t) slot_.resize(t + 1, kAbsent);
      if (slot_[t] == kAbsent) {
        slot_[t] = static_cast<std::uint32_t>(doc_terms_.size());
        doc_terms_.push_back({t, {}});
      }
      auto& tf = doc_terms_[slot_[t]].second[field];
      if (tf < std::numeric_limits<std::uint16_t>::max()) ++tf;
    }, scratch_);
  }

  void flush_document(std::uint32_t number) {
    for (auto& [t, tf] : doc_terms_) {
      raw_[t].add(number, tf);
      slot_[t] = kAbsent;
    }
    doc_terms_.clear();
  }

  // Writes term t's postings to `out` and returns its idf.
  double finish_term(std::size_t t, const std::array<double, kMaxFields>& avg, std::vector<Posting>& out) {
    const double k1 = index_.config.k1;
    const double b = index_.config.b;
    const auto w = field_weights();
    const double n = static_cast<double>(lengths_[0].size());
    RawPostings& raw = raw_[t];
    const double df = static_cast<double>(raw.size());
    out.reserve(raw.size());
    raw.for_each([&](const RawPosting& p) {
      double tf_tilde = 0.0;
      for (std::size_t f = 0; f < kMaxFields; ++f) {
        if (p.tf[f] == 0) continue;
        double norm = (1.0 - b) + (avg[f] > 0 ? b * lengths_[f][p.doc - first_] / avg[f] : 0.0);
        tf_tilde += w[f] * p.tf[f] / norm;
      }
      double denom = k1 + tf_tilde;
      out.push_back({p.doc, static_cast<float>(denom > 0 ? tf_tilde / denom : 0.0)});
    });
    raw = RawPostings();
    return std::log(1.0 + (n - df + 0.5) / (df + 0.5));
  }

  IndexData& index_;
  std::uint32_t first_ = 0;  // number of the first document of this range
  TermMap terms_;            // term -> id in this builder
  std::vector<std::string> names_;  // id -> term
  TokenTable surface_;  // folded token -> term id (kStopword for stop words)
  std::string scratch_;
  std::vector<RawPostings> raw_;
  std::array<std::vector<std::uint32_t>, kMaxFields> lengths_;
  std::vector<std::uint32_t> slot_;  // term id -> index in doc_terms_
  std::vector<std::pair<std::uint32_t, std::array<std::uint16_t, kMaxFields>>> doc_terms_;
};

std::size_t build_threads(const IndexConfig& config, std::size_t documents) {
  constexpr std::size_t kMinPerThread = 2000;  // below this a thread costs more than it saves
  std::size_t threads = config.threads != 0 ? config.threads : std::max(1u, std::thread::hardware_concurrency());
  return std::max<std::size_t>(1, std::min(threads, documents / kMinPerThread));
}

// Tokenises ranges of documents on several threads, then merges in order.
void build_postings(IndexData& index, std::span<const Document> documents, const std::vector<std::size_t>& order) {
  const std::size_t n = order.size();
  const std::size_t chunks = build_threads(index.config, n);
  std::vector<std::unique_ptr<Builder>> builders;
  for (std::size_t c = 0; c < chunks; ++c) {
    builders.push_back(std::make_unique<Builder>(index, static_cast<std::uint32_t>(n * c / chunks)));
  }
  auto run = [&](std::size_t c) {
    for (std::size_t i = n * c / chunks; i < n * (c + 1) / chunks; ++i) {
      builders[c]->add(documents[order[i]], static_cast<std::uint32_t>(i));
    }
  };
  std::vector<std::future<void>> pending;
  for (std::size_t c = 1; c < chunks; ++c) pending.push_back(std::async(std::launch::async, run, c));
  run(0);
  for (auto& f : pending) f.get();  // rethrows a worker's exception
  for (std::size_t c = 1; c < chunks; ++c) builders[0]->absorb(*builders[c]);
  builders[0]->finish();
}

// The per-document arrays while documents are added in number order.
struct DocumentColumns {
  Strings::Builder ids;
  std::string last_key;
  std::vector<float> multiplier;
  std::vector<std::uint32_t> type;
  std::vector<std::uint32_t> layer;
  Rows<std::uint32_t>::Builder tags;
  Rows<std::uint32_t>::Builder usage;

  void finish(IndexData& index) {
    index.ids = ids.finish();
    index.multiplier = Column<float>(std::move(multiplier));
    index.type = Column<std::uint32_t>(std::move(type));
    index.layer = Column<std::uint32_t>(std::move(layer));
    index.tags = tags.finish();
    index.usage = usage.finish();
  }
};

// Sorted, distinct ids of `names` (folded) in `table`.
template <typename Range>
std::vector<std::uint32_t> interned(Names& table, const Range& names) {
  std::vector<std::uint32_t> ids;
  for (const std::string& name : names) ids.push_back(table.intern(fold_case(name)));
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

void add_filters(IndexData& index, DocumentColumns& columns, const Document& doc) {
  columns.type.push_back(index.types.intern(fold_case(doc.type)));
  columns.layer.push_back(index.layers.intern(doc.layer));
  columns.tags.add(interned(index.tag_names, doc.tags));
  columns.usage.add(interned(index.usage_names, doc.usage));
}

struct Filter {
  bool impossible = false;
  std::uint32_t type = kAbsent;
  std::uint32_t layer = kAbsent;
  std::uint32_t usage = kAbsent;
  std::vector<std::uint32_t> tags;  // sorted
  std::vector<std::uint32_t> excluded;  // documents the selection excludes, sorted
};

Filter resolve_filter(const IndexData& index, const SearchOptions& options) {
  Filter filter;
  auto resolve = [&](const Names& names, std::string_view name) {
    std::uint32_t id = names.find(name);
    if (id == kAbsent) filter.impossible = true;
    return id;
  };
  if (!options.type.empty()) filter.type = resolve(index.types, fold_case(options.type));
  if (!options.layer.empty()) filter.layer = resolve(index.layers, options.layer);
  if (!options.usage_tag.empty()) filter.usage = resolve(index.usage_names, fold_case(options.usage_tag));
  for (const std::string& tag : options.tags) filter.tags.push_back(resolve(index.tag_names, fold_case(tag)));
  std::sort(filter.tags.begin(), filter.tags.end());
  if (options.selection) {
    for (const Exclusion& e : options.selection->excluded)  // ids are sorted, as the documents are
      if (const std::uint32_t doc = position_of(index.ids, e.id); doc != kAbsent) filter.excluded.push_back(doc);
  }
  return filter;
}

bool passes(const IndexData& index, const Filter& filter, std::uint32_t doc) {
  if (filter.type != kAbsent && index.type[doc] != filter.type) return false;
  if (filter.layer != kAbsent && index.layer[doc] != filter.layer) return false;
  if (filter.usage != kAbsent && !std::ranges::binary_search(index.usage[doc], filter.usage)) return false;
  if (std::binary_search(filter.excluded.begin(), filter.excluded.end(), doc)) return false;
  const std::span<const std::uint32_t> tags = index.tags[doc];
  return std::includes(tags.begin(), tags.end(), filter.tags.begin(), filter.tags.end());
}

// Local pointers: through the thread_local the compiler would reload the
// arrays on every posting (perf showed that as the hottest instruction).
void accumulate(std::span<const Posting> postings, double weight, Accumulator& acc) {
  double* scores = acc.scores.data();
  std::uint32_t* touched = acc.touched.data();
  std::size_t count = acc.count;
  for (const Posting& p : postings) {
    double& score = scores[p.doc];
    if (score == 0.0) touched[count++] = p.doc;
    score += weight * p.impact;
  }
  acc.count = count;
}

struct Scored {
  double score;
  std::uint32_t doc;
};

// The id and the bundle name of a document key (IndexData::ids).
std::string_view id_of(std::string_view key) { return key.substr(0, key.find('\0')); }
std::string_view bundle_of(std::string_view key) {
  const auto cut = key.find('\0');
  return cut == std::string_view::npos ? std::string_view() : key.substr(cut + 1);
}

// '\0' sorts before every other character, so keys in byte order are
// ordered by id, then bundle.
std::vector<std::string> document_keys(std::span<const Document> documents) {
  std::vector<std::string> keys;
  keys.reserve(documents.size());
  for (const Document& doc : documents) {
    std::string key(doc.id);
    if (!doc.bundle.empty()) (key += '\0') += doc.bundle;
    keys.push_back(std::move(key));
  }
  return keys;
}

// The positions of `keys` in ascending key order: the document numbers.
std::vector<std::size_t> key_order(const std::vector<std::string>& keys) {
  std::vector<std::size_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  return order;
}

// "a ranks before b": higher score, then lower doc number (= smaller id).
bool ranks_before(const Scored& a, const Scored& b) {
  return a.score > b.score || (a.score == b.score && a.doc < b.doc);
}

}  // namespace

struct SearchIndex::Impl : IndexData {
  using IndexData::IndexData;
};

SearchIndex::SearchIndex() = default;
SearchIndex::SearchIndex(SearchIndex&&) noexcept = default;
SearchIndex& SearchIndex::operator=(SearchIndex&&) noexcept = default;
SearchIndex::~SearchIndex() = default;

SearchIndex SearchIndex::build(const Bundle& bundle) { return build(bundle, IndexConfig{}); }

SearchIndex SearchIndex::build(const Bundle& bundle, const IndexConfig& config) {
  const NamedBundle one[] = {{"", &bundle}};
  return build(one, config);
}

void check_bundle_names(std::span<const NamedBundle> bundles) {
  for (std::size_t i = 0; i < bundles.size(); ++i) {
    if (bundles[i].name.empty() && bundles.size() > 1)
      throw UsageError("the bundle at " + bundles[i].bundle->root().string() + " has an empty name");
    for (std::size_t j = 0; j < i; ++j)
      if (bundles[j].name == bundles[i].name)
        throw UsageError("two bundles are named '" + bundles[i].name + "' (" + bundles[j].bundle->root().string() +
                         " and " + bundles[i].bundle->root().string() + "): give each bundle its own name");
  }
}

SearchIndex SearchIndex::build(std::span<const NamedBundle> bundles, const IndexConfig& config) {
  check_bundle_names(bundles);
  const bool named = bundles.size() > 1;
  std::size_t total = 0;
  for (const NamedBundle& b : bundles) total += b.bundle->concepts().size();
  std::vector<Document> docs;
  std::vector<const Concept*> sources;
  std::vector<std::vector<std::string>> usage;
  usage.reserve(total);  // the documents' spans point into it
  for (const NamedBundle& b : bundles)
    for (const Concept& c : b.bundle->concepts()) {
      if (is_reserved(c.id)) continue;
      usage.push_back(classify_usage(c));
      docs.push_back({c.id, c.title, c.description, c.body, c.tags, c.type, c.layer, c.status, usage.back(),
                      named ? std::string_view(b.name) : std::string_view()});
      sources.push_back(&c);
    }
  SearchIndex index = build(docs, config);
  // build() numbers documents in key order; map each back to its concept.
  const std::vector<std::size_t> order = key_order(document_keys(docs));
  for (std::size_t i = 0; i < order.size(); ++i) index.impl_->concepts[i] = sources[order[i]];
  return index;
}

SearchIndex SearchIndex::build(std::span<const Document> documents, const IndexConfig& config) {
  validate(config);
  std::vector<std::string> keys = document_keys(documents);
  const std::vector<std::size_t> order = key_order(keys);
  SearchIndex index;
  index.impl_ = std::make_unique<Impl>(config);
  Impl& impl = *index.impl_;
  DocumentColumns columns;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Document& doc = documents[order[i]];
    if (doc.id.empty()) throw InputError("search: a document has an empty id");
    if (doc.id.find('\0') != std::string_view::npos || doc.bundle.find('\0') != std::string_view::npos)
      throw InputError("search: a document id or bundle name holds a NUL character");
    if (i > 0 && keys[order[i]] == columns.last_key)
      throw InputError("search: duplicate document id '" + std::string(doc.id) + "'" +
                       (doc.bundle.empty() ? std::string() : " in bundle '" + std::string(doc.bundle) + "'"));
    columns.ids.add(keys[order[i]]);
    columns.last_key = std::move(keys[order[i]]);
    columns.multiplier.push_back(static_cast<float>(status_multiplier(doc.status)));
    add_filters(impl, columns, doc);
  }
  columns.finish(impl);
  build_postings(impl, documents, order);
  impl.concepts.assign(impl.ids.size(), nullptr);
  return index;
}

std::vector<Hit> SearchIndex::search(std::string_view query, const SearchOptions& options) const {
  const Impl& index = *impl_;
  if (options.limit == 0) return {};
  Filter filter = resolve_filter(index, options);
  if (filter.impossible) return {};
  Accumulator& acc = thread_accumulator();
  AccumulatorLease lease{acc};
  acc.reserve(index.ids.size());
  for (const WeightedTerm& wt : index.analyzer.query_terms(query)) {
    const std::uint32_t term = position_of(index.terms, wt.term);
    if (term == kAbsent) continue;
    accumulate(index.postings[term], wt.weight * index.idf[term], acc);
  }
  std::vector<Scored> heap;  // worst of the best `limit` on top
  heap.reserve(std::min(options.limit, acc.count));
  for (std::size_t i = 0; i < acc.count; ++i) {
    const std::uint32_t doc = acc.touched[i];
    if (!passes(index, filter, doc)) continue;
    Scored s{acc.scores[doc] * index.multiplier[doc], doc};
    if (heap.size() < options.limit) {
      heap.push_back(s);
      std::push_heap(heap.begin(), heap.end(), ranks_before);
    } else if (ranks_before(s, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), ranks_before);
      heap.back() = s;
      std::push_heap(heap.begin(), heap.end(), ranks_before);
    }
  }
  std::sort_heap(heap.begin(), heap.end(), ranks_before);
  std::vector<Hit> hits;
  hits.reserve(heap.size());
  for (const Scored& s : heap)
    hits.push_back({index.concepts[s.doc], s.score, id_of(index.ids[s.doc]), bundle_of(index.ids[s.doc])});
  return hits;
}

std::vector<Hit> SearchIndex::candidates(const SearchOptions& options) const {
  const Impl& index = *impl_;
  Filter filter = resolve_filter(index, options);
  std::vector<Hit> hits;
  if (filter.impossible) return hits;
  for (std::uint32_t doc = 0; doc < index.ids.size(); ++doc)
    if (passes(index, filter, doc))
      hits.push_back({index.concepts[doc], 0.0, id_of(index.ids[doc]), bundle_of(index.ids[doc])});
  return hits;
}

namespace {

// A name table as its names in id order.
std::vector<std::string> names_by_id(const TermMap& ids) {
  std::vector<std::string> out(ids.size());
  for (const auto& [name, id] : ids) out[id] = name;
  return out;
}

TermMap ids_of(const std::vector<std::string>& names) {
  TermMap out;
  out.reserve(names.size());
  for (std::uint32_t id = 0; id < names.size(); ++id)
    if (!out.emplace(names[id], id).second) throw detail::CorruptCache("a name is stored twice");
  return out;
}

void put_config(detail::Writer& w, const IndexConfig& c) {
  w.put<std::uint8_t>(static_cast<std::uint8_t>(c.mode));
  for (double x : {c.weights.title, c.weights.tags, c.weights.description, c.weights.body, c.k1, c.b}) w.put(x);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(c.analyzer.stemmer));
  w.put<std::uint8_t>(static_cast<std::uint8_t>(c.analyzer.stopwords));
}

IndexConfig get_config(detail::Reader& r) {
  IndexConfig c;
  c.mode = r.get_enum(FieldMode::flat);
  for (double* x : {&c.weights.title, &c.weights.tags, &c.weights.description, &c.weights.body, &c.k1, &c.b})
    *x = r.get<double>();
  c.analyzer.stemmer = r.get_enum(Stemmer::english);
  c.analyzer.stopwords = r.get_enum(Stopwords::lucene);
  return c;
}

// Every per-document array has one entry per document, every number that
// indexes another array is inside it, and ids and terms ascend: a corrupt
// file is refused here, never read out of bounds by a query.
void check_restored(const IndexData& index) {
  const std::size_t n = index.ids.size();
  auto fits = [](const auto& ids, std::size_t size) {
    return std::all_of(ids.begin(), ids.end(), [&](std::uint32_t id) { return id < size; });
  };
  auto ascending = [](const Strings& names) {
    for (std::size_t i = 1; i < names.size(); ++i)
      if (!(names[i - 1] < names[i])) return false;
    return true;
  };
  bool ok = index.multiplier.size() == n && index.type.size() == n && index.layer.size() == n &&
            index.tags.size() == n && index.usage.size() == n && index.idf.size() == index.terms.size() &&
            index.postings.size() == index.terms.size() && fits(index.type, index.types.ids.size()) &&
            fits(index.layer, index.layers.ids.size()) && ascending(index.ids) && ascending(index.terms);
  for (std::size_t d = 0; ok && d < n; ++d)
    ok = fits(index.tags[d], index.tag_names.ids.size()) && fits(index.usage[d], index.usage_names.ids.size());
  for (std::size_t t = 0; ok && t < index.postings.size(); ++t)
    ok = std::ranges::all_of(index.postings[t], [&](const Posting& p) { return p.doc < n; });
  if (!ok) throw detail::CorruptCache("the search index's arrays do not fit together");
}

}  // namespace

void SearchIndex::save(detail::Writer& w) const {
  const Impl& index = *impl_;
  put_config(w, index.config);
  index.ids.save(w);
  index.multiplier.save(w);
  index.type.save(w);
  index.layer.save(w);
  index.tags.save(w);
  index.usage.save(w);
  for (const Names* names : {&index.types, &index.layers, &index.tag_names, &index.usage_names})
    w.put_strings(names_by_id(names->ids));
  index.terms.save(w);
  index.idf.save(w);
  index.postings.save(w);
  for (std::size_t x : {index.stats.documents, index.stats.terms, index.stats.postings, index.stats.tokens})
    w.put<std::uint64_t>(x);
}

SearchIndex SearchIndex::restore(detail::Reader& r, const Bundle* bundle, std::shared_ptr<const void> file) {
  SearchIndex out;
  const IndexConfig config = get_config(r);
  try {
    validate(config);
  } catch (const InputError& e) {
    throw detail::CorruptCache(std::string("the stored index config is invalid (") + e.what() + ")");
  }
  out.impl_ = std::make_unique<Impl>(config);
  Impl& index = *out.impl_;
  index.file = std::move(file);
  index.ids = Strings::restore(r);
  index.multiplier = Column<float>::restore(r);
  index.type = Column<std::uint32_t>::restore(r);
  index.layer = Column<std::uint32_t>::restore(r);
  index.tags = Rows<std::uint32_t>::restore(r);
  index.usage = Rows<std::uint32_t>::restore(r);
  for (Names* names : {&index.types, &index.layers, &index.tag_names, &index.usage_names})
    names->ids = ids_of(r.get_strings());
  index.terms = Strings::restore(r);
  index.idf = Column<double>::restore(r);
  index.postings = PostingLists(Rows<Posting>::restore(r));
  for (std::size_t* x : {&index.stats.documents, &index.stats.terms, &index.stats.postings, &index.stats.tokens})
    *x = r.get<std::uint64_t>();
  check_restored(index);
  if (!bundle) {
    index.concepts.assign(index.ids.size(), nullptr);
    return out;
  }
  // Both are sorted by id, so one pass pairs them.
  index.concepts.reserve(index.ids.size());
  auto next = bundle->concepts().begin();
  for (std::size_t doc = 0; doc < index.ids.size(); ++doc) {
    const std::string_view id = index.ids[doc];
    while (next != bundle->concepts().end() && next->id < id) ++next;
    if (next == bundle->concepts().end() || next->id != id)
      throw detail::CorruptCache("the search index names a concept the bundle does not have");
    index.concepts.push_back(&*next++);
  }
  return out;
}

const IndexConfig& SearchIndex::config() const { return impl_->config; }

IndexStats SearchIndex::stats() const { return impl_->stats; }

}  // namespace okfbench::retrieval
