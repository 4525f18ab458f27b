// The persistent index (retrieval/index_cache.hpp): a bundle and its index
// read back from the cache are the loaded ones; any change the rule covers
// makes the cache stale; a corrupt file is never trusted.
#include "retrieval/index_cache.hpp"

#include <xxhash.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <sys/stat.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <regex>
#include <cstring>
#include <map>
#include <optional>
#include <utility>
#include <unistd.h>
#include <thread>

#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {
namespace fs = std::filesystem;
using okfbench::test::concept_md;
using ::testing::HasSubstr;
using okfbench::test::fresh_dir;
using okfbench::test::make_bundle;
using okfbench::test::read_file;
using okfbench::test::write_file;
using namespace std::chrono_literals;

// Everything a command can see of a bundle and its index, as text.
std::string snapshot(const Bundle& bundle, const SearchIndex& index) {
  std::string out;
  for (const Concept& c : bundle.concepts()) {
    out += fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}\n", c.id, c.path, c.layer, c.type, c.title, c.description,
                       fmt::join(c.tags, ","), c.body, c.frontmatter_yaml, c.bytes);
    for (const Link& l : c.links)
      out += fmt::format("  link {} {} {} {} {} {}\n", l.target, l.raw, l.relation, l.text, l.line, l.resolved);
    for (const Citation& x : c.citations) out += fmt::format("  cite {} {}\n", x.label, x.text);
    for (const Source& s : c.sources) out += fmt::format("  source {} {} {}\n", s.id, s.resource, s.author);
    for (const auto& [k, v] : c.extra) out += fmt::format("  extra {}={}\n", k, v);
    for (const Neighbor& n : bundle.neighbors(c.id, Direction::both))
      out += fmt::format("  neighbour {} {}\n", n.id, n.relation);
  }
  for (const Diagnostic& d : bundle.diagnostics())
    out += fmt::format("diagnostic {} {}:{} {}\n", to_string(d.severity), d.path, d.line, d.message);
  for (const LogEntry& e : bundle.history()) out += fmt::format("log {} {} {} {}\n", e.date, e.kind, e.text, e.scope);
  if (auto root = bundle.index()) out += "index " + root->text + "\n";
  out += fmt::format("links {} broken {} bytes {}\n", bundle.link_count(), bundle.broken_link_count(),
                     bundle.total_bytes());
  const IndexStats stats = index.stats();
  out += fmt::format("stats {} {} {} {}\n", stats.documents, stats.terms, stats.postings, stats.tokens);
  SearchOptions ten;
  ten.limit = 10;
  for (const char* query : {"revenue", "active users churn", "orders table", "the", "zzz"})
    for (const Hit& hit : index.search(query, ten))
      out += fmt::format("hit {} {} {:.17g} {}\n", query, hit.id, hit.score, hit.concept_ptr->title);
  return out;
}

std::string fresh_snapshot(const fs::path& root, const LoadOptions& options = {}, const IndexConfig& config = {}) {
  Bundle bundle = Bundle::load(root, options);
  SearchIndex index = SearchIndex::build(bundle, config);
  return snapshot(bundle, index);
}

// Sets every mtime below `root` (and its own) `age` into the past, so no
// stamp is racy (written in the clock tick the load began in).
void age_tree(const fs::path& root, std::chrono::seconds age = 60s) {
  const auto then = fs::file_time_type::clock::now() - age;
  for (const auto& entry : fs::recursive_directory_iterator(root)) fs::last_write_time(entry.path(), then);
  fs::last_write_time(root, then);
}

fs::path small_bundle(const std::string& name) {
  fs::path root = make_bundle(
      name, {{"index.md", "# Sales\n\nRevenue and orders.\n"},
             {"log.md", "# Log\n\n## 2026-01-02\n\n* **Added**: [orders](/tables/orders.md).\n"},
             {"metrics/revenue.md", concept_md("type: Metric\ntitle: Revenue\ntags: [money, sales]\n",
                                               "Revenue sums [orders](/tables/orders.md) and [gone](/nope.md).\n")},
             {"tables/orders.md", concept_md("type: Table\ntitle: Orders table\nowner: sales\n",
                                             "One row per order. See [revenue](../metrics/revenue.md).[^1]\n\n"
                                             "[^1]: The warehouse schema.\n")},
             {"tables/broken.md", "no frontmatter here\n"},
             {"notes/churn.md", concept_md("type: Note\ntitle: Churn\n", "Active users churn monthly.\n")}});
  age_tree(root);
  return root;
}

TEST(IndexCache, ARestoredBundleAndIndexAreTheLoadedOnes) {
  const fs::path cache = fresh_dir("index-cache-same");
  for (const fs::path& root : {small_bundle("cache-same"), okfbench::test::source_dir() / "datasets/bundles/demo"}) {
    const std::string expected = fresh_snapshot(root);
    CachedBundle first = load_cached(root, {}, {}, cache);
    EXPECT_FALSE(first.from_cache);
    EXPECT_EQ(first.reason, "no cache file");
    EXPECT_EQ(first.note, "");
    EXPECT_TRUE(first.written);
    EXPECT_TRUE(fs::is_regular_file(first.file));
    EXPECT_EQ(fs::status(first.file).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_EQ(snapshot(first.bundle, first.index), expected);
    CachedBundle second = load_cached(root, {}, {}, cache);
    EXPECT_TRUE(second.from_cache) << second.reason;
    EXPECT_EQ(second.file, first.file);
    EXPECT_FALSE(second.written);
    EXPECT_EQ(snapshot(second.bundle, second.index), expected);
    EXPECT_EQ(second.bundle.root(), fs::canonical(root));
  }
}

// remember() resolves every raw link again: a bundle read back from the cache
// must hold them as written (revenue's link to /nope.md is broken until a
// concept `nope` exists), so it ends where a fresh load remembering the
// same concept ends.
TEST(IndexCache, ARestoredBundleResolvesItsLinksAgainWhenAConceptIsRemembered) {
  const fs::path cache = fresh_dir("index-cache-remember");
  Bundle::RememberRequest request;
  request.concept_id = "nope";
  request.title = "Nope";
  request.body = "Now there is one; see [[Churn]].";
  request.date = "2026-02-02";
  std::string expected;
  {
    const fs::path root = small_bundle("cache-remember-fresh");
    Bundle fresh = Bundle::load(root);
    ASSERT_EQ(fresh.broken_link_count(), 1u);
    ASSERT_EQ(fresh.remember(request).error, "");
    EXPECT_EQ(fresh.broken_link_count(), 0u);
    expected = snapshot(fresh, SearchIndex::build(fresh, {}));
  }
  const fs::path root = small_bundle("cache-remember-cached");
  ASSERT_TRUE(load_cached(root, {}, {}, cache).written);
  CachedBundle cached = load_cached(root, {}, {}, cache);
  ASSERT_TRUE(cached.from_cache) << cached.reason;
  ASSERT_EQ(cached.bundle.remember(request).error, "");
  EXPECT_EQ(cached.bundle.broken_link_count(), 0u);
  ASSERT_EQ(cached.bundle.neighbors("nope", Direction::in).size(), 1u);
  EXPECT_EQ(cached.bundle.neighbors("nope", Direction::in)[0].id, "metrics/revenue");
  // Each remember() stamps the wall-clock second it wrote; the two may
  // straddle a second, which is not what this test is about.
  const std::regex stamp("at: \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ");
  EXPECT_EQ(std::regex_replace(snapshot(cached.bundle, SearchIndex::build(cached.bundle, {})), stamp, "at: TIME"),
            std::regex_replace(expected, stamp, "at: TIME"));
}

TEST(IndexCache, AChangedAddedOrRemovedFileMakesItStale) {
  const fs::path cache = fresh_dir("index-cache-stale");
  const fs::path root = small_bundle("cache-stale");
  load_cached(root, {}, {}, cache);

  write_file(root / "notes/churn.md", concept_md("type: Note\ntitle: Churn\n", "Active users leave monthly.\n"));
  CachedBundle changed = load_cached(root, {}, {}, cache);
  EXPECT_FALSE(changed.from_cache);
  EXPECT_EQ(changed.reason, "stale: 'notes/churn.md' changed");
  EXPECT_EQ(changed.bundle.find("notes/churn")->body, "\nActive users leave monthly.\n");

  age_tree(root);
  load_cached(root, {}, {}, cache);
  write_file(root / "notes/new.md", concept_md("type: Note\n", "New.\n"));
  EXPECT_EQ(load_cached(root, {}, {}, cache).reason, "stale: directory 'notes' changed");

  age_tree(root);
  load_cached(root, {}, {}, cache);
  fs::remove(root / "tables/orders.md");
  CachedBundle removed = load_cached(root, {}, {}, cache);
  EXPECT_EQ(removed.reason, "stale: directory 'tables' changed");
  EXPECT_EQ(removed.bundle.find("tables/orders"), nullptr);

  age_tree(root);
  load_cached(root, {}, {}, cache);
  write_file(root / "notes/deeper/below.md", concept_md("type: Note\n", "Below.\n"));
  EXPECT_EQ(load_cached(root, {}, {}, cache).reason, "stale: directory 'notes' changed");
  age_tree(root);
  load_cached(root, {}, {}, cache);
  CachedBundle settled = load_cached(root, {}, {}, cache);
  EXPECT_TRUE(settled.from_cache) << settled.reason;
  EXPECT_EQ(snapshot(settled.bundle, settled.index), fresh_snapshot(root));
}

TEST(IndexCache, AFileRewrittenWithItsOldMtimeAndSizeIsSeenByItsCtime) {
  const fs::path cache = fresh_dir("index-cache-ctime");
  const fs::path root = small_bundle("cache-ctime");
  const fs::path page = root / "notes/churn.md";
  const auto old_mtime = fs::last_write_time(page);
  load_cached(root, {}, {}, cache);
  std::this_thread::sleep_for(20ms);  // past the clock tick the load began in
  write_file(page, concept_md("type: Note\ntitle: Churn\n", "Active users churn weekly.\n"));  // same size
  fs::last_write_time(page, old_mtime);  // as `touch -d` or `cp -p` would
  CachedBundle seen = load_cached(root, {}, {}, cache);
  EXPECT_EQ(seen.reason, "stale: 'notes/churn.md' changed");
  EXPECT_EQ(seen.bundle.find("notes/churn")->body, "\nActive users churn weekly.\n");
}

TEST(IndexCache, ATouchedFileWithTheSameBytesKeepsTheCache) {
  const fs::path cache = fresh_dir("index-cache-touch");
  const fs::path root = small_bundle("cache-touch");
  load_cached(root, {}, {}, cache);
  fs::last_write_time(root / "metrics/revenue.md", fs::file_time_type::clock::now() - 30s);
  CachedBundle touched = load_cached(root, {}, {}, cache);
  EXPECT_TRUE(touched.from_cache) << touched.reason;
}

TEST(IndexCache, AFileStampedInTheTickTheLoadBeganIsComparedByContent) {
  const fs::path cache = fresh_dir("index-cache-racy");
  const fs::path root = small_bundle("cache-racy");
  // An mtime after the load began stands for a write in the same clock tick.
  const auto later = fs::file_time_type::clock::now() + 1h;
  fs::last_write_time(root / "notes/churn.md", later);
  load_cached(root, {}, {}, cache);
  EXPECT_TRUE(load_cached(root, {}, {}, cache).from_cache);
  // The same size, the same mtime: only the content tells.
  write_file(root / "notes/churn.md", concept_md("type: Note\ntitle: Churn\n", "Active users churn weekly.\n"));
  fs::last_write_time(root / "notes/churn.md", later);
  CachedBundle racy = load_cached(root, {}, {}, cache);
  EXPECT_EQ(racy.reason, "stale: 'notes/churn.md' changed");
  EXPECT_EQ(racy.bundle.find("notes/churn")->body, "\nActive users churn weekly.\n");
}

std::string xxh128(std::string_view bytes) {
  XXH128_canonical_t sum;
  XXH128_canonicalFromHash(&sum, XXH3_128bits(bytes.data(), bytes.size()));
  return std::string(reinterpret_cast<const char*>(sum.digest), sizeof sum.digest);
}

// The header as index_cache.hpp describes it: magic, format, header length
// and payload length, then per section its offset, length and checksum.
constexpr std::size_t kTable = 8 + 4 + 4 + 8;
constexpr std::size_t kSectionEntry = 8 + 8 + 16;
enum { kManifest, kSearchSection, kBundleSection };

// [offset, offset + length) of section `i` of a cache file's bytes, or
// nullopt when the table says something the file cannot hold.
std::optional<std::pair<std::size_t, std::size_t>> section_range(const std::string& bytes, int i) {
  std::uint64_t offset = 0, length = 0;
  if (bytes.size() < kTable + 3 * kSectionEntry) return std::nullopt;
  std::memcpy(&offset, bytes.data() + kTable + i * kSectionEntry, 8);
  std::memcpy(&length, bytes.data() + kTable + i * kSectionEntry + 8, 8);
  if (offset > bytes.size() || length > bytes.size() - offset) return std::nullopt;
  return std::pair<std::size_t, std::size_t>(offset, offset + length);
}

// Rewrites each section's checksum, as index_cache.hpp defines it (XXH3-128
// of the XXH3-128 of each 16 MiB block of the section), so that a mutated
// file passes them.
void reseal(const fs::path& file) {
  std::string bytes = read_file(file);
  constexpr std::size_t kBlock = std::size_t{16} << 20;
  for (int i = 0; i < 3; ++i) {
    const auto range = section_range(bytes, i);
    if (!range) continue;  // a mutated table: refused before any checksum
    std::string sums;
    for (std::size_t at = range->first; at < range->second; at += kBlock)
      sums += xxh128(std::string_view(bytes).substr(at, std::min(kBlock, range->second - at)));
    std::memcpy(bytes.data() + kTable + i * kSectionEntry + 16, xxh128(sums).data(), 16);
  }
  write_file(file, bytes);
}

// The byte in the middle of section `i` flipped.
std::string flipped_in(std::string bytes, int i) {
  const auto range = section_range(bytes, i);
  EXPECT_TRUE(range.has_value());
  bytes[(range->first + range->second) / 2] ^= 0x20;
  return bytes;
}

TEST(IndexCache, ACorruptTruncatedOrForeignFileIsRebuiltNeverTrusted) {
  const fs::path cache = fresh_dir("index-cache-corrupt");
  const fs::path root = small_bundle("cache-corrupt");
  const std::string expected = fresh_snapshot(root);
  const fs::path file = load_cached(root, {}, {}, cache).file;
  const std::string good = read_file(file);
  struct Case {
    std::string bytes;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {flipped_in(good, kManifest), "corrupt: checksum mismatch in the manifest section"},
      {flipped_in(good, kSearchSection), "corrupt: checksum mismatch in the search section"},
      {flipped_in(good, kBundleSection), "corrupt: checksum mismatch in the bundle section"},
      {good.substr(0, 30) + std::string(8, '\xff') + good.substr(38), "corrupt: the header's section table is wrong"},
      {good.substr(0, good.size() - 7), "corrupt: truncated or extended"},
      {good + "x", "corrupt: truncated or extended"},
      {good.substr(0, 20), "corrupt: shorter than its header"},
      {"", "corrupt: shorter than its header"},
      {std::string(200, 'z'), "corrupt: not an okfbench index cache"},
  };
  std::string other_format = good;
  other_format[8] = static_cast<char>(other_format[8] + 1);  // the format number's low byte
  for (const Case& c : cases) {
    write_file(file, c.bytes);
    CachedBundle rebuilt = load_cached(root, {}, {}, cache);
    EXPECT_FALSE(rebuilt.from_cache);
    EXPECT_EQ(rebuilt.reason, c.reason);
    EXPECT_EQ(rebuilt.note, fmt::format("index cache {} was {}; rebuilt", file.string(), c.reason));
    EXPECT_EQ(snapshot(rebuilt.bundle, rebuilt.index), expected);
    EXPECT_TRUE(load_cached(root, {}, {}, cache).from_cache) << c.reason;  // written again, whole
  }
  write_file(file, other_format);  // an okfbench of another format: rebuilt without a warning
  CachedBundle other = load_cached(root, {}, {}, cache);
  EXPECT_FALSE(other.from_cache);
  EXPECT_TRUE(other.reason.starts_with("written in format ")) << other.reason;
  EXPECT_EQ(other.note, "");
}

TEST(IndexCache, APayloadOfSeveralChecksumBlocksRoundTripsAndEachBlockIsChecked) {
  const fs::path cache = fresh_dir("index-cache-blocks");
  std::map<std::string, std::string> files;
  for (int i = 0; i < 6; ++i)  // 18 MB of bodies: two 16 MiB blocks
    files[fmt::format("big/page-{}.md", i)] =
        concept_md(fmt::format("type: Page\ntitle: Page {}\n", i), std::string(3'000'000, static_cast<char>('a' + i)) + "\n");
  const fs::path root = make_bundle("cache-blocks", files);
  age_tree(root);
  const fs::path file = load_cached(root, {}, {}, cache).file;
  ASSERT_GT(fs::file_size(file), std::size_t{17} << 20);
  CachedBundle again = load_cached(root, {}, {}, cache);
  ASSERT_TRUE(again.from_cache) << again.reason;
  EXPECT_EQ(snapshot(again.bundle, again.index), fresh_snapshot(root));
  std::string bytes = read_file(file);
  bytes[bytes.size() - 1000] ^= 0x01;  // in the second block
  write_file(file, bytes);
  EXPECT_EQ(load_cached(root, {}, {}, cache).reason, "corrupt: checksum mismatch in the bundle section");
  reseal(file);  // the rewritten file, sealed by the formula documented: it must still read
  EXPECT_TRUE(load_cached(root, {}, {}, cache).from_cache);
}

// Mutations that keep the checksum right (a file written by a buggy or
// hostile program) are refused by the reader's own checks or read back
// without a crash; either way the load returns a bundle.
TEST(IndexCache, ResealedMutationsNeverCrashTheReader) {
  const fs::path cache = fresh_dir("index-cache-mutate");
  const fs::path root = small_bundle("cache-mutate");
  const fs::path file = load_cached(root, {}, {}, cache).file;
  const std::string good = read_file(file);
  std::size_t refused = 0;
  for (std::size_t at = kTable; at < good.size(); at += 7) {
    std::string bytes = good;
    bytes[at] = static_cast<char>(bytes[at] ^ 0xFF);
    write_file(file, bytes);
    reseal(file);
    if (std::optional<CachedSearch> search = load_cached_search(root, {}, {}, cache)) {
      for (const Hit& hit : search->index().search("revenue orders churn", {}))
        EXPECT_TRUE(search->card(hit.id).has_value()) << "mutated byte " << at;
    }
    CachedBundle loaded = load_cached(root, {}, {}, cache);
    refused += loaded.from_cache ? 0 : 1;
    EXPECT_GE(loaded.bundle.concepts().size(), 1u);
  }
  EXPECT_GT(refused, 0u);
}

TEST(IndexCache, AnotherIndexConfigIsBuiltFromTheCachedBundle) {
  const fs::path cache = fresh_dir("index-cache-config");
  const fs::path root = small_bundle("cache-config");
  load_cached(root, {}, {}, cache);
  const IndexConfig flat = lucene_flat_config();
  CachedBundle other = load_cached(root, {}, flat, cache);
  EXPECT_TRUE(other.from_cache);
  EXPECT_TRUE(other.index.config() == flat);
  EXPECT_EQ(snapshot(other.bundle, other.index), fresh_snapshot(root, {}, flat));
}

// Hits, scores and cards of `index` over a few queries and a filter, as
// text; card_of gives what a listing shows of a hit.
template <typename CardOf>
std::string search_snapshot(const SearchIndex& index, CardOf card_of) {
  std::string out;
  SearchOptions ten;
  ten.limit = 10;
  SearchOptions tables = ten;
  tables.layer = "tables";
  for (const SearchOptions& options : {ten, tables})
    for (const char* query : {"revenue", "active users churn", "orders table", "the", "zzz"})
      for (const Hit& hit : index.search(query, options)) {
        const ConceptCard card = card_of(hit);
        out += fmt::format("hit {} {} {:.17g} {}|{}|{}\n", query, hit.id, hit.score, card.title, card.description,
                           card.type);
      }
  return out;
}

// From the cache file alone: no hit names a concept, every one has a card.
std::string search_snapshot(const CachedSearch& search) {
  return search_snapshot(search.index(), [&](const Hit& hit) {
    EXPECT_EQ(hit.concept_ptr, nullptr);
    return search.card(hit.id).value();
  });
}

// The same from a fresh load.
std::string fresh_search_snapshot(const fs::path& root) {
  const Bundle bundle = Bundle::load(root);
  const SearchIndex index = SearchIndex::build(bundle);
  return search_snapshot(index, [](const Hit& hit) {
    return ConceptCard{hit.concept_ptr->title, hit.concept_ptr->description, hit.concept_ptr->type};
  });
}

TEST(IndexCache, ASearchFromTheCacheFileAloneRanksAsAFreshLoad) {
  const fs::path cache = fresh_dir("index-cache-search");
  for (const fs::path& root : {small_bundle("cache-search"), okfbench::test::source_dir() / "datasets/bundles/demo"}) {
    load_cached(root, {}, {}, cache);
    std::string why = "unset";
    std::optional<CachedSearch> search = load_cached_search(root, {}, {}, cache, &why);
    ASSERT_TRUE(search.has_value()) << why;
    EXPECT_EQ(why, "");
    EXPECT_EQ(search_snapshot(*search), fresh_search_snapshot(root));
    const Bundle bundle = Bundle::load(root);
    std::size_t errors = 0;
    for (const Diagnostic& d : bundle.diagnostics()) errors += d.severity == Severity::error ? 1 : 0;
    EXPECT_EQ(search->skipped_files(), errors);
    for (const Concept& c : bundle.concepts()) {
      const std::optional<ConceptCard> card = search->card(c.id);
      ASSERT_TRUE(card.has_value()) << c.id;
      EXPECT_EQ(std::string(card->title) + "|" + std::string(card->description) + "|" + std::string(card->type),
                c.title + "|" + c.description + "|" + c.type);
    }
    EXPECT_FALSE(search->card("no/such-concept").has_value());
    EXPECT_FALSE(search->card("").has_value());
  }
}

TEST(IndexCache, ASearchFromTheCacheFileNeedsItCurrentWholeAndForItsConfig) {
  const fs::path cache = fresh_dir("index-cache-search-needs");
  const fs::path root = small_bundle("cache-search-needs");
  std::string why;
  EXPECT_FALSE(load_cached_search(root, {}, {}, {}, &why));
  EXPECT_EQ(why, "no cache folder");
  EXPECT_FALSE(load_cached_search(root, {}, {}, cache, &why));
  EXPECT_EQ(why, "no cache file");
  EXPECT_FALSE(fs::exists(index_cache_file(cache, fs::canonical(root), {}))) << "it writes nothing";
  const fs::path file = load_cached(root, {}, {}, cache).file;
  const std::string good = read_file(file);
  EXPECT_FALSE(load_cached_search(root, {}, lucene_flat_config(), cache, &why));
  EXPECT_EQ(why, "holds an index for another config");
  LoadOptions repo;
  repo.profile = Profile::repo;
  EXPECT_FALSE(load_cached_search(root, repo, {}, cache, &why));
  EXPECT_EQ(why, "no cache file");

  // Only the sections it reads are checked: a damaged bundle section does not stop a search.
  write_file(file, flipped_in(good, kBundleSection));
  EXPECT_TRUE(load_cached_search(root, {}, {}, cache, &why)) << why;
  write_file(file, flipped_in(good, kSearchSection));
  EXPECT_FALSE(load_cached_search(root, {}, {}, cache, &why));
  EXPECT_EQ(why, "corrupt: checksum mismatch in the search section");
  write_file(file, flipped_in(good, kManifest));
  EXPECT_FALSE(load_cached_search(root, {}, {}, cache, &why));
  EXPECT_EQ(why, "corrupt: checksum mismatch in the manifest section");
  write_file(file, good.substr(0, good.size() - 1));
  EXPECT_FALSE(load_cached_search(root, {}, {}, cache, &why));
  EXPECT_EQ(why, "corrupt: truncated or extended");
  EXPECT_EQ(read_file(file), good.substr(0, good.size() - 1)) << "it writes nothing";

  write_file(file, good);
  write_file(root / "notes/churn.md", concept_md("type: Note\ntitle: Churn\n", "Active users leave monthly.\n"));
  EXPECT_FALSE(load_cached_search(root, {}, {}, cache, &why));
  EXPECT_EQ(why, "stale: 'notes/churn.md' changed");
}

// For callers that read no index: nothing is indexed without a cache
// folder, and a current file's search section is never read.
TEST(IndexCache, ABundleWithoutItsIndexReadsOnlyTheManifestAndBundleSections) {
  const fs::path cache = fresh_dir("index-cache-unindexed");
  const fs::path root = small_bundle("cache-unindexed");
  const std::string fresh = fresh_snapshot(root);
  auto loaded = [&](const fs::path& dir, std::string& note) {
    Bundle bundle = load_cached_unindexed(root, {}, dir, note);
    return snapshot(bundle, SearchIndex::build(bundle, {}));
  };
  std::string note;
  EXPECT_EQ(loaded({}, note), fresh);
  EXPECT_TRUE(fs::is_empty(cache));

  // A miss loads the files and writes the cache with the default index, so the next search finds it current.
  EXPECT_EQ(loaded(cache, note), fresh);
  EXPECT_EQ(note, "");
  const fs::path file = index_cache_file(cache, fs::canonical(root), {});
  ASSERT_TRUE(fs::exists(file));
  std::string why;
  EXPECT_TRUE(load_cached_search(root, {}, {}, cache, &why)) << why;
  const std::string good = read_file(file);

  // A damaged search section is not read, and stays for the next search to find and rebuild.
  write_file(file, flipped_in(good, kSearchSection));
  EXPECT_EQ(loaded(cache, note), fresh);
  EXPECT_EQ(note, "");
  EXPECT_EQ(read_file(file), flipped_in(good, kSearchSection));
  EXPECT_FALSE(load_cached(root, {}, {}, cache).from_cache);

  // A damaged bundle section is rebuilt, with a note.
  write_file(file, flipped_in(good, kBundleSection));
  EXPECT_EQ(loaded(cache, note), fresh);
  EXPECT_THAT(note, HasSubstr("checksum mismatch in the bundle section; rebuilt"));
  EXPECT_TRUE(load_cached(root, {}, {}, cache).from_cache);

  // Stale: the new file is loaded.
  write_file(root / "notes/churn.md", concept_md("type: Note\ntitle: Churn\n", "Active users leave monthly.\n"));
  note.clear();
  EXPECT_EQ(loaded(cache, note), fresh_snapshot(root));
  EXPECT_EQ(note, "");
}

TEST(IndexCache, EachProfileAndLimitHasItsOwnFile) {
  const fs::path root = fs::canonical(small_bundle("cache-keys"));
  LoadOptions repo;
  repo.profile = Profile::repo;
  LoadOptions small;
  small.max_file_bytes = 100;
  LoadOptions threads;
  threads.threads = 1;
  threads.io_uring = false;
  const fs::path dir = "/c";
  EXPECT_NE(index_cache_file(dir, root, {}), index_cache_file(dir, root, repo));
  EXPECT_NE(index_cache_file(dir, root, {}), index_cache_file(dir, root, small));
  EXPECT_EQ(index_cache_file(dir, root, {}), index_cache_file(dir, root, threads));
  EXPECT_NE(index_cache_file(dir, root, {}), index_cache_file(dir, root / "metrics", {}));
  const fs::path cache = fresh_dir("index-cache-keys");
  load_cached(root, {}, {}, cache);
  CachedBundle as_repo = load_cached(root, repo, {}, cache);
  EXPECT_FALSE(as_repo.from_cache);
  EXPECT_EQ(snapshot(as_repo.bundle, as_repo.index), fresh_snapshot(root, repo));
}

TEST(IndexCache, ConcurrentLoadsAllSeeTheBundleAndLeaveOneWholeFile) {
  const fs::path cache = fresh_dir("index-cache-threads");
  const fs::path root = small_bundle("cache-threads");
  const std::string expected = fresh_snapshot(root);
  std::vector<std::string> seen(6);
  {
    std::vector<std::jthread> threads;
    for (std::string& out : seen)
      threads.emplace_back([&] {
        CachedBundle loaded = load_cached(root, {}, {}, cache);
        out = snapshot(loaded.bundle, loaded.index) + loaded.note;
      });
  }
  for (const std::string& s : seen) EXPECT_EQ(s, expected);
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(cache)) files.push_back(entry.path().filename().string());
  ASSERT_EQ(files.size(), 1u) << fmt::format("{}", fmt::join(files, " "));
  EXPECT_TRUE(files[0].ends_with(".okfidx"));
  EXPECT_TRUE(load_cached(root, {}, {}, cache).from_cache);
}

TEST(IndexCache, KilledWritersTemporaryFilesAreRemovedByTheNextWrite) {
  const fs::path cache = fresh_dir("index-cache-leftover");
  const fs::path root = small_bundle("cache-leftover");
  const fs::path file = index_cache_file(cache, fs::canonical(root), {});
  const fs::path dead = file.string() + ".tmp.2147483646.0";  // above any pid_max: no such process
  const fs::path alive = file.string() + fmt::format(".tmp.{}.7", ::getpid());  // another writer, still running
  const fs::path other = cache / "0123456789abcdef0123456789abcdef.okfidx.tmp.2147483646.0";  // another bundle's
  const fs::path unrelated = cache / "notes.txt";
  for (const fs::path& p : {dead, alive, other, unrelated}) write_file(p, "partial");
  load_cached(root, {}, {}, cache);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_FALSE(fs::exists(other));
  EXPECT_TRUE(fs::exists(alive));
  EXPECT_TRUE(fs::exists(unrelated));
  EXPECT_TRUE(fs::exists(file));
}

// What prune_index_cache() removes: files no load will read again, each with
// why; what it keeps: files of bundles that are there (a '\n' in the root's
// name included), other formats unless asked, files that are not caches.
TEST(IndexCache, PruneRemovesOnlyWhatNoLoadWillReadAgain) {
  const fs::path cache = fresh_dir("index-cache-prune");
  const fs::path kept = small_bundle("cache-prune-kept");
  const fs::path gone = small_bundle("cache-prune-gone");
  const fs::path replaced = small_bundle("cache-prune-replaced");
  const fs::path odd = small_bundle("cache-prune-odd\nname");
  for (const fs::path& root : {kept, gone, replaced, odd}) ASSERT_TRUE(load_cached(root, {}, {}, cache).written);
  const auto file_of = [&](const fs::path& root) { return index_cache_file(cache, fs::canonical(root), {}); };
  const fs::path kept_file = file_of(kept), gone_file = file_of(gone), replaced_file = file_of(replaced),
                 odd_file = file_of(odd);
  // Another okfbench's file: the same bytes with another format number.
  std::string other = read_file(kept_file);
  other[8] = static_cast<char>(other[8] + 1);
  const fs::path other_file = cache / "00000000000000000000000000000000.okfidx";
  write_file(other_file, other);
  const fs::path corrupt_file = cache / "11111111111111111111111111111111.okfidx";
  write_file(corrupt_file, read_file(kept_file).substr(0, 100));  // ours (our magic), cut short
  const fs::path not_ours = cache / "33333333333333333333333333333333.okfidx";
  write_file(not_ours, "not a cache file at all");  // our name, not our magic: not provably ours
  const fs::path dead_writer = cache / "22222222222222222222222222222222.okfidx.tmp.2147483646.0";
  write_file(dead_writer, "partial");
  const fs::path unrelated = cache / "notes.txt";
  write_file(unrelated, "mine");
  const std::string gone_canonical = fs::canonical(gone).string();
  const std::string replaced_canonical = fs::canonical(replaced).string();
  fs::remove_all(gone);
  fs::remove_all(replaced);
  write_file(replaced, "a file where the bundle was");

  std::vector<PrunedFile> pruned = prune_index_cache(cache, false);
  std::map<fs::path, std::string> why;
  for (const PrunedFile& p : pruned) {
    EXPECT_GT(p.bytes, 0u) << p.file;
    why[p.file] = p.reason;
  }
  EXPECT_EQ(why.size(), 4u);
  EXPECT_EQ(why[gone_file], "bundle " + gone_canonical + " is gone");
  EXPECT_EQ(why[replaced_file], "bundle " + replaced_canonical + " is no longer a folder");
  EXPECT_THAT(why[corrupt_file], HasSubstr("corrupt: "));
  EXPECT_EQ(why[dead_writer], "left by writer 2147483646, which is gone");
  for (const fs::path& there : {kept_file, odd_file, other_file, unrelated, not_ours})
    EXPECT_TRUE(fs::exists(there)) << there;
  EXPECT_TRUE(load_cached(kept, {}, {}, cache).from_cache);

  pruned = prune_index_cache(cache, true);  // other formats as well
  ASSERT_EQ(pruned.size(), 1u);
  EXPECT_EQ(pruned[0].file, other_file);
  EXPECT_THAT(pruned[0].reason, HasSubstr("by another okfbench"));

  fs::remove_all(odd);  // the root's last lines are the load options, not its name
  pruned = prune_index_cache(cache, false);
  ASSERT_EQ(pruned.size(), 1u);
  EXPECT_EQ(pruned[0].file, odd_file);
  EXPECT_TRUE(fs::exists(kept_file));
  EXPECT_TRUE(fs::exists(unrelated));
  EXPECT_TRUE(prune_index_cache(cache / "no-such-folder", true).empty());
}

// Every write prunes: a bundle's cache file goes with the bundle at the next
// write of any cache in the folder.
TEST(IndexCache, WritingACachePrunesTheFilesOfBundlesThatAreGone) {
  const fs::path cache = fresh_dir("index-cache-prune-on-write");
  const fs::path gone = small_bundle("cache-prune-on-write-gone");
  const fs::path next = small_bundle("cache-prune-on-write-next");
  ASSERT_TRUE(load_cached(gone, {}, {}, cache).written);
  const fs::path gone_file = index_cache_file(cache, fs::canonical(gone), {});
  fs::remove_all(gone);
  EXPECT_TRUE(fs::exists(gone_file));
  ASSERT_TRUE(load_cached(next, {}, {}, cache).written);
  EXPECT_FALSE(fs::exists(gone_file));
}

TEST(IndexCache, AFolderThatCannotBeWrittenIsANoteNotAnError) {
  const fs::path blocked = fresh_dir("index-cache-blocked") / "file";
  write_file(blocked, "in the way\n");
  const fs::path root = small_bundle("cache-blocked");
  CachedBundle loaded = load_cached(root, {}, {}, blocked / "index");
  EXPECT_FALSE(loaded.from_cache);
  EXPECT_FALSE(loaded.written);
  EXPECT_TRUE(loaded.note.starts_with("index cache not written: cannot create ")) << loaded.note;
  EXPECT_EQ(snapshot(loaded.bundle, loaded.index), fresh_snapshot(root));
  CachedBundle none = load_cached(root, {}, {}, {});
  EXPECT_EQ(none.reason, "no cache folder");
  EXPECT_TRUE(none.file.empty());
}

// A file must be the current user's and writable by no one else to be read
// as a cache (XXH3 is no MAC: whoever can write the file can reseal it).
// Anything else is loaded from the bundle, said in the note, and replaced.
TEST(IndexCache, AFileOwnedBySomeoneElseOrWritableByOthersIsNeverServed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown a file to another user";
  const fs::path cache = fresh_dir("index-cache-planted");
  const fs::path root = small_bundle("cache-planted");
  const std::string expected = fresh_snapshot(root);
  const fs::path file = load_cached(root, {}, {}, cache).file;
  ASSERT_TRUE(load_cached(root, {}, {}, cache).from_cache);
  struct Case {
    std::function<void()> plant;
    std::string said;
  };
  const std::vector<Case> cases = {
      {[&] { ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0); }, "it is owned by uid 65534, not by you (uid 0)"},
      {[&] { fs::permissions(file, fs::perms::group_write, fs::perm_options::add); }, "writable by group or others"},
      {[&] { fs::permissions(file, fs::perms::others_write, fs::perm_options::add); }, "writable by group or others"},
  };
  for (const Case& c : cases) {
    c.plant();
    std::string why;
    EXPECT_FALSE(load_cached_search(root, {}, {}, cache, &why));
    EXPECT_THAT(why, HasSubstr(c.said));
    CachedBundle loaded = load_cached(root, {}, {}, cache);
    EXPECT_FALSE(loaded.from_cache);
    EXPECT_THAT(loaded.note, HasSubstr(file.string()));
    EXPECT_THAT(loaded.note, HasSubstr(c.said));
    EXPECT_EQ(snapshot(loaded.bundle, loaded.index), expected);
    EXPECT_TRUE(load_cached(root, {}, {}, cache).from_cache) << c.said;  // replaced by a file of ours
  }
}

TEST(IndexCache, ACacheFolderOthersCanWriteIsNotUsedAndSaidOnce) {
  const fs::path cache = fresh_dir("index-cache-shared-folder");
  const fs::path root = small_bundle("cache-shared-folder");
  ASSERT_TRUE(load_cached(root, {}, {}, cache).written);
  fs::permissions(cache, fs::perms::all | fs::perms::sticky_bit);  // a shared /tmp-like folder
  CachedBundle first = load_cached(root, {}, {}, cache);
  EXPECT_FALSE(first.from_cache);
  EXPECT_FALSE(first.written);
  EXPECT_THAT(first.note, HasSubstr("index cache folder " + cache.string() + " not used"));
  EXPECT_THAT(first.note, HasSubstr("chmod go-w"));
  EXPECT_EQ(snapshot(first.bundle, first.index), fresh_snapshot(root));
  EXPECT_EQ(load_cached(root, {}, {}, cache).note, "");  // said once
  std::string why;
  EXPECT_FALSE(load_cached_search(root, {}, {}, cache, &why));
  EXPECT_THAT(why, HasSubstr("writable by group or others"));
  std::string note;
  load_cached_unindexed(root, {}, cache, note);
  EXPECT_TRUE(prune_index_cache(cache, true).empty());
  if (::geteuid() == 0) {
    const fs::path theirs = fresh_dir("index-cache-their-folder");
    ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
    CachedBundle loaded = load_cached(root, {}, {}, theirs);
    EXPECT_FALSE(loaded.from_cache);
    EXPECT_THAT(loaded.note, HasSubstr("owned by uid 65534"));
  }
}

// A FIFO at the cache path would block open(2) for ever: the load reads the
// bundle instead, and says so. Run on a thread, so a hang fails the test.
TEST(IndexCache, AFifoOrSymlinkAtTheCachePathNeverBlocksNorIsFollowed) {
  const fs::path cache = fresh_dir("index-cache-fifo");
  const fs::path root = small_bundle("cache-fifo");
  const fs::path file = index_cache_file(cache, fs::canonical(root), {});
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
  auto done = std::make_shared<std::promise<std::pair<std::string, std::string>>>();
  std::future<std::pair<std::string, std::string>> result = done->get_future();
  std::thread([done, root, cache] {
    std::string why;
    const bool found = load_cached_search(root, {}, {}, cache, &why).has_value();
    std::string note;
    load_cached_unindexed(root, {}, cache, note);
    done->set_value({found ? "served" : why, note});
  }).detach();
  ASSERT_EQ(result.wait_for(20s), std::future_status::ready) << "a load blocked on the FIFO";
  const auto [why, note] = result.get();
  EXPECT_THAT(why, HasSubstr("not a regular file"));
  EXPECT_THAT(note, HasSubstr("not a regular file"));
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(file)));  // replaced by a cache of ours
  EXPECT_TRUE(load_cached(root, {}, {}, cache).from_cache);

  const fs::path elsewhere = fresh_dir("index-cache-link-target") / "real.okfidx";
  fs::copy_file(file, elsewhere);
  fs::remove(file);
  fs::create_symlink(elsewhere, file);
  CachedBundle linked = load_cached(root, {}, {}, cache);
  EXPECT_FALSE(linked.from_cache);
  EXPECT_THAT(linked.note, HasSubstr("symbolic link"));
}

// Pruning removes only what it can prove it wrote: our names, our magic,
// regular files of the current user; never through a symbolic link.
TEST(IndexCache, PruneLeavesForeignFilesAndSymlinkedFoldersAlone) {
  const fs::path cache = fresh_dir("index-cache-prune-foreign");
  const fs::path gone = small_bundle("cache-prune-foreign-gone");
  ASSERT_TRUE(load_cached(gone, {}, {}, cache).written);
  const fs::path gone_file = index_cache_file(cache, fs::canonical(gone), {});
  const std::string ours = read_file(gone_file);
  fs::remove_all(gone);  // every file of ours below is now prunable
  const fs::path elsewhere = fresh_dir("index-cache-prune-foreign-target");
  const fs::path precious = elsewhere / "44444444444444444444444444444444.okfidx";
  write_file(precious, ours);
  const fs::path linked_file = cache / "55555555555555555555555555555555.okfidx";
  fs::create_symlink(precious, linked_file);
  const fs::path fifo = cache / "66666666666666666666666666666666.okfidx";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path linked_folder = fresh_dir("index-cache-prune-foreign-link") / "index";
  fs::create_symlink(elsewhere, linked_folder);

  EXPECT_TRUE(prune_index_cache(linked_folder, true).empty());  // a symlinked cache folder is not pruned
  EXPECT_TRUE(fs::exists(precious));
  std::vector<PrunedFile> pruned = prune_index_cache(cache, true);
  ASSERT_EQ(pruned.size(), 1u);  // only the file this okfbench wrote
  EXPECT_EQ(pruned[0].file, gone_file);
  EXPECT_TRUE(fs::exists(precious));
  EXPECT_TRUE(fs::is_symlink(linked_file));
  EXPECT_TRUE(fs::is_fifo(fifo));
  if (::geteuid() == 0) {
    const fs::path theirs = cache / "77777777777777777777777777777777.okfidx";
    write_file(theirs, ours);
    ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
    EXPECT_TRUE(prune_index_cache(cache, true).empty());
    EXPECT_TRUE(fs::exists(theirs));
  }
}

TEST(IndexCache, TheDefaultFolderFollowsXdgCacheHome) {
  const char* saved = std::getenv("XDG_CACHE_HOME");
  const std::string restore = saved ? saved : "";
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg-here", 1);
  EXPECT_EQ(default_index_cache_dir(), fs::path("/tmp/xdg-here/okfbench/index"));
  ::unsetenv("XDG_CACHE_HOME");
  if (const char* home = std::getenv("HOME"); home && *home) {
    EXPECT_EQ(default_index_cache_dir(), fs::path(home) / ".cache/okfbench/index");
  }
  if (saved) ::setenv("XDG_CACHE_HOME", restore.c_str(), 1);
}

}  // namespace
}  // namespace okfbench::retrieval
