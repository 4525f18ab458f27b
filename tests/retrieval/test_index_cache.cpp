// The persistent index (retrieval/index_cache.hpp): a bundle and its index
// read back from the cache are the loaded ones; any change the rule covers
// makes the cache stale; a corrupt file is never trusted.
#include "retrieval/index_cache.hpp"

#include <openssl/evp.h>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <unistd.h>
#include <thread>

#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {
namespace fs = std::filesystem;
using okfbench::test::concept_md;
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

std::string sha256(std::string_view bytes) {
  unsigned char sum[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EXPECT_EQ(EVP_Digest(bytes.data(), bytes.size(), sum, &length, EVP_sha256(), nullptr), 1);
  return std::string(reinterpret_cast<const char*>(sum), 32);
}

// Rewrites the payload checksum, as index_cache.hpp defines it (SHA-256 of
// the SHA-256 of each 16 MiB block), so that a mutated payload passes it.
void reseal(const fs::path& file) {
  std::string bytes = read_file(file);
  constexpr std::size_t kHeader = 8 + 4 + 4 + 8 + 32;
  constexpr std::size_t kBlock = std::size_t{16} << 20;
  std::string sums;
  for (std::size_t at = kHeader; at < bytes.size(); at += kBlock)
    sums += sha256(std::string_view(bytes).substr(at, kBlock));
  std::memcpy(bytes.data() + 24, sha256(sums).data(), 32);
  write_file(file, bytes);
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
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x20;
  const std::vector<Case> cases = {
      {flipped, "corrupt: checksum mismatch"},
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
  EXPECT_EQ(load_cached(root, {}, {}, cache).reason, "corrupt: checksum mismatch");
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
  for (std::size_t at = 56; at < good.size(); at += 7) {
    std::string bytes = good;
    bytes[at] = static_cast<char>(bytes[at] ^ 0xFF);
    write_file(file, bytes);
    reseal(file);
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
