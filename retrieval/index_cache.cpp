#include "retrieval/index_cache.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <ctime>
#include <fmt/format.h>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <xxhash.h>

#include "core/digest.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "retrieval/binary_io.hpp"
#include "retrieval/bundle_impl.hpp"
#include "retrieval/columns.hpp"
#include "retrieval/file_reader.hpp"

namespace okfbench::retrieval {
namespace {
namespace fs = std::filesystem;
using detail::CorruptCache;
using detail::Manifest;
using detail::Reader;
using detail::Stamp;
using detail::Writer;

// Bumped whenever binary_io's layout of anything in the file changes, or what
// a load yields from the same files (9: frontmatter control characters are
// reported and replaced).
constexpr std::uint32_t kFormat = 9;
constexpr char kMagic[8] = {'O', 'K', 'F', 'B', 'I', 'D', 'X', '\n'};

// A whole cache file in another format (another okfbench wrote it): not
// corrupt, only not ours to read; rebuilt without a warning.
class OtherFormat : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The sections, in file order (index_cache.hpp).
enum SectionId : std::size_t { kHead, kSearch, kBundle, kSections };
constexpr const char* kSectionNames[kSections] = {"manifest", "search", "bundle"};

struct Section {
  std::uint64_t offset;  // from the start of the file
  std::uint64_t bytes;
  unsigned char checksum[16];
};

struct Header {
  char magic[8];
  std::uint32_t format;
  std::uint32_t header_bytes;
  std::uint64_t payload_bytes;
  Section sections[kSections];
};

// What a cache file must have been written for: the same root and the load
// options that change what a load yields, one line each after the root
// (root_of reads the root back from the end).
constexpr int kKeyOptionLines = 4;
std::string cache_key(const fs::path& root, const LoadOptions& options) {
  return fmt::format("{}\n{}\n{}\n{}\n{}", root.string(), to_string(options.profile), options.max_file_bytes,
                     options.max_files, options.max_total_bytes);
}

// The clock file systems stamp mtimes with (the coarse real-time clock), so
// anything changed after this moment has an mtime at or after it.
std::int64_t now_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

bool same_index(const IndexConfig& a, const IndexConfig& b) {
  IndexConfig x = a;
  x.threads = b.threads;  // the index is the same for any number of threads
  return x == b;
}

void put_stamps(Writer& w, const std::vector<Stamp>& stamps) {
  w.put<std::uint64_t>(stamps.size());
  for (const Stamp& s : stamps) {
    w.put_string(s.path);
    w.put(s.size);
    w.put(s.mtime_ns);
    w.put(s.ctime_ns);
    w.put(s.inode);
    w.put(s.digest);
  }
}

// A stamp as the manifest section holds it, its path read in place: checking
// a current cache allocates no string per file.
struct StampView {
  std::string_view path;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  std::uint64_t inode = 0;
  std::array<unsigned char, 16> digest{};
};

std::vector<StampView> get_stamps(Reader& r) {
  std::vector<StampView> out(r.count(8 + 8 + 8 + 8 + 8 + 16));
  for (StampView& s : out) {
    s.path = r.get_view();
    s.size = r.get<std::uint64_t>();
    s.mtime_ns = r.get<std::int64_t>();
    s.ctime_ns = r.get<std::int64_t>();
    s.inode = r.get<std::uint64_t>();
    s.digest = r.get<std::array<unsigned char, 16>>();
  }
  return out;
}

// Runs work(0) .. work(threads - 1), the first on the calling thread, and
// rethrows the first exception any of them threw once all have ended.
template <typename Work>
void on_threads(std::size_t threads, Work work) {
  std::vector<std::exception_ptr> failed(threads);
  auto guarded = [&](std::size_t t) {
    try {
      work(t);
    } catch (...) {
      failed[t] = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> workers;
    for (std::size_t t = 1; t < threads; ++t) workers.emplace_back(guarded, t);
    guarded(0);
  }
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
}

// A section's checksum: XXH3-128 over the XXH3-128 of each kBlock bytes (the
// last block shorter), so that a reader checks the blocks on all cores. It
// guards against damage, not forgery (whoever can write the cache folder
// can write any file there), and runs at memory speed where SHA-256 took a
// fifth of a cached search's CPU.
constexpr std::size_t kBlock = std::size_t{16} << 20;
using Checksum = std::array<unsigned char, 16>;

Checksum canonical(XXH128_hash_t hash) {
  XXH128_canonical_t bytes;
  XXH128_canonicalFromHash(&bytes, hash);
  Checksum out;
  std::memcpy(out.data(), bytes.digest, out.size());
  return out;
}

Checksum xxh128(std::string_view bytes) { return canonical(XXH3_128bits(bytes.data(), bytes.size())); }

// The checksum of bytes streamed in through add().
class BlockDigest {
 public:
  BlockDigest() { start_block(); }
  void add(std::string_view bytes) {
    while (!bytes.empty()) {
      const std::size_t take = std::min(bytes.size(), kBlock - filled_);
      XXH3_128bits_update(block_.get(), bytes.data(), take);
      filled_ += take;
      bytes.remove_prefix(take);
      if (filled_ == kBlock) end_block();
    }
  }
  Checksum finish() {
    if (filled_ > 0) end_block();
    return xxh128(sums_);
  }

 private:
  void start_block() {
    if (!block_ || XXH3_128bits_reset(block_.get()) != XXH_OK) throw std::bad_alloc();
    filled_ = 0;
  }
  void end_block() {
    const Checksum sum = canonical(XXH3_128bits_digest(block_.get()));
    sums_.append(reinterpret_cast<const char*>(sum.data()), sum.size());
    start_block();
  }
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> block_{XXH3_createState(), XXH3_freeState};
  std::size_t filled_ = 0;
  std::string sums_;
};

// The same checksum of bytes in memory, blocks hashed on several threads;
// `after` (if any) is called with each block once hashed, on its thread.
Checksum block_checksum(std::string_view bytes, const std::function<void(std::string_view)>& after = {}) {
  const std::size_t blocks = (bytes.size() + kBlock - 1) / kBlock;
  std::string sums(blocks * sizeof(Checksum), '\0');
  const std::size_t threads = std::clamp<std::size_t>(blocks, 1, std::max(1u, std::thread::hardware_concurrency()));
  on_threads(threads, [&](std::size_t t) {
    for (std::size_t b = t; b < blocks; b += threads) {
      const Checksum sum = xxh128(bytes.substr(b * kBlock, kBlock));
      std::memcpy(sums.data() + b * sum.size(), sum.data(), sum.size());
      if (after) after(bytes.substr(b * kBlock, kBlock));
    }
  });
  return xxh128(sums);
}

// A read-only mapping of a whole file.
class Mapping {
 public:
  // nullopt (and `why`) when the file cannot be opened or mapped.
  // Never blocks (a FIFO at the path) nor follows a symbolic link; `refused`
  // is set for a file that is there but not a cache of ours to read: not a
  // regular file, or untrusted_owner().
  static std::optional<Mapping> open(const fs::path& file, std::string& why, bool* refused = nullptr) {
    FileDescriptor fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    struct stat info {};
    if (fd.get() < 0 || ::fstat(fd.get(), &info) != 0) {
      const int error = errno;
      why = error == ENOENT ? "no cache file" : fmt::format("cannot open the cache file: {}", std::strerror(error));
      if (error == ELOOP) {
        why = "not used: it is a symbolic link: remove it";
        if (refused) *refused = true;
      }
      return std::nullopt;
    }
    std::string problem = S_ISREG(info.st_mode) ? untrusted_owner(info.st_uid, info.st_mode)
                                                : "it is not a regular file (a FIFO, device or folder?): remove it";
    if (!problem.empty()) {
      why = "not used: " + problem;
      if (refused) *refused = true;
      return std::nullopt;
    }
    Mapping m;
    m.size_ = static_cast<std::size_t>(info.st_size);
    if (m.size_ == 0) return m;
    void* data = ::mmap(nullptr, m.size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (data == MAP_FAILED) {
      why = fmt::format("cannot map the cache file: {}", std::strerror(errno));
      return std::nullopt;
    }
    m.data_ = static_cast<const char*>(data);
    return m;
  }
  Mapping(Mapping&& other) noexcept : data_(std::exchange(other.data_, nullptr)), size_(other.size_) {}
  ~Mapping() {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
  }
  const char* data() const { return data_; }
  std::size_t size() const { return size_; }
  // Drops the pages wholly inside `bytes` from this process (they are read
  // from the file again if touched): a section copied out of the file need
  // not stay resident.
  void release(std::string_view bytes) const {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto from = (reinterpret_cast<std::uintptr_t>(bytes.data()) + page - 1) / page * page;
    const auto to = (reinterpret_cast<std::uintptr_t>(bytes.data()) + bytes.size()) / page * page;
    if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
  }

 private:
  Mapping() = default;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

// One section of a mapped cache file, with the checksum its header gives.
struct SectionBytes {
  SectionId id = kHead;
  std::string_view bytes;
  Checksum checksum{};

  // Throws CorruptCache unless the bytes have the checksum. A reader checks
  // only the sections it reads. `release` (if any) drops each block from
  // memory once hashed, for a section that is copied out after.
  void check(const std::function<void(std::string_view)>& release = {}) const {
    if (block_checksum(bytes, release) != checksum)
      throw CorruptCache(fmt::format("checksum mismatch in the {} section", kSectionNames[id]));
  }
};

// The sections of a cache file whose header and length are right.
std::array<SectionBytes, kSections> sections_of(const Mapping& file) {
  Header header{};
  if (file.size() < sizeof header) throw CorruptCache("shorter than its header");
  std::memcpy(&header, file.data(), sizeof header);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) throw CorruptCache("not an okfbench index cache");
  if (header.format != kFormat)
    throw OtherFormat(fmt::format("written in format {} by another okfbench (this one writes format {})",
                                  header.format, kFormat));
  if (header.header_bytes != sizeof header) throw CorruptCache("the header's length is wrong");
  if (header.payload_bytes != file.size() - sizeof header) throw CorruptCache("truncated or extended");
  std::array<SectionBytes, kSections> out;
  std::uint64_t at = sizeof header;
  for (std::size_t i = 0; i < kSections; ++i) {
    const Section& section = header.sections[i];
    if (section.offset != at || section.bytes > file.size() - at)
      throw CorruptCache("the header's section table is wrong");
    out[i] = {static_cast<SectionId>(i), std::string_view(file.data() + at, section.bytes), std::to_array(section.checksum)};
    at += section.bytes;
  }
  if (at != file.size()) throw CorruptCache("the header's section table is wrong");
  return out;
}

// Whether the file `stamp` names, below `root_fd`, still has the bytes the
// stamp's digest was taken of.
bool same_content(int root_fd, const StampView& stamp) {
  FileContent content = read_whole_file(FileLocation{root_fd, std::string(stamp.path)}, SIZE_MAX);
  return content.error.empty() && detail::content_digest(content.bytes) == stamp.digest;
}

// "" when file `stamp` still is as stamped (the rule in index_cache.hpp),
// otherwise what changed.
std::string file_change(int root_fd, const StampView& file, std::int64_t start) {
  thread_local std::string path;  // the system call wants it NUL-terminated; reused, so rarely allocated
  path.assign(file.path);
  struct stat info {};
  if (::fstatat(root_fd, path.c_str(), &info, 0) != 0) return fmt::format("'{}' is gone", file.path);
  const Stamp now = detail::stamp_of({}, info);
  const bool same_stamp = now.size == file.size && now.mtime_ns == file.mtime_ns && now.ctime_ns == file.ctime_ns &&
                          now.inode == file.inode;
  if (same_stamp && file.mtime_ns < start && file.ctime_ns < start) return {};
  return same_content(root_fd, file) ? std::string() : fmt::format("'{}' changed", file.path);
}

// The first file change in walk order, the files checked on several
// threads (a stat each is most of a current cache's start-up).
std::string first_file_change(int root_fd, const std::vector<StampView>& files, std::int64_t start) {
  constexpr std::size_t kMinPerThread = 4096;
  const std::size_t threads =
      std::clamp<std::size_t>(files.size() / kMinPerThread, 1, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::string> found(threads);
  on_threads(threads, [&](std::size_t t) {
    for (std::size_t i = files.size() * t / threads; i < files.size() * (t + 1) / threads; ++i)
      if (found[t] = file_change(root_fd, files[i], start); !found[t].empty()) return;
  });
  for (std::string& change : found)
    if (!change.empty()) return change;
  return {};
}

// The manifest section read in place: valid while its mapping is.
struct ManifestView {
  std::vector<StampView> directories;
  std::vector<StampView> files;
};

// "" when the tree at `root` still is what `manifest` stamped (the rule in
// index_cache.hpp); otherwise the first difference found.
std::string first_change(int root_fd, const ManifestView& manifest, std::int64_t start) {
  std::string path;
  for (const StampView& dir : manifest.directories) {
    path.assign(dir.path.empty() ? "." : dir.path);
    struct stat info {};
    if (::fstatat(root_fd, path.c_str(), &info, 0) != 0) return fmt::format("directory '{}' is gone", dir.path);
    const Stamp now = detail::stamp_of({}, info);
    if (now.mtime_ns != dir.mtime_ns || now.ctime_ns != dir.ctime_ns || now.inode != dir.inode)
      return fmt::format("directory '{}' changed", dir.path);
    if (dir.mtime_ns >= start) return fmt::format("directory '{}' changed while the cache was written", dir.path);
  }
  return first_file_change(root_fd, manifest.files, start);
}

struct Payload {
  std::string key;
  std::int64_t start = 0;
  ManifestView manifest;
};

Payload read_head(Reader& r) {
  Payload p;
  p.key = r.get_string();
  p.start = r.get<std::int64_t>();
  p.manifest.directories = get_stamps(r);
  p.manifest.files = get_stamps(r);
  return p;
}

// The search section: the index, then the number of files skipped with an
// error, then the concept cards (id, title, description, type), by id.
void put_search(Writer& w, const Bundle& bundle, const SearchIndex& index) {
  index.save(w);
  w.put<std::uint64_t>(std::count_if(bundle.diagnostics().begin(), bundle.diagnostics().end(),
                                     [](const Diagnostic& d) { return d.severity == Severity::error; }));
  for (std::string Concept::*field : {&Concept::id, &Concept::title, &Concept::description, &Concept::type}) {
    detail::Strings::Builder column;
    for (const Concept& c : bundle.concepts()) column.add(c.*field);
    column.finish().save(w);
  }
}

// The concept cards: after the index and the skipped count in the search
// section, rows by id, read in place.
struct CardColumns {
  detail::Strings ids, titles, descriptions, types;

  static CardColumns get(Reader& r) {
    CardColumns out;
    for (detail::Strings* column : {&out.ids, &out.titles, &out.descriptions, &out.types})
      *column = detail::Strings::restore(r);
    const std::size_t rows = out.ids.size();
    if (out.titles.size() != rows || out.descriptions.size() != rows || out.types.size() != rows)
      throw CorruptCache("the concept cards do not fit together");
    for (std::size_t i = 1; i < rows; ++i)
      if (!(out.ids[i - 1] < out.ids[i])) throw CorruptCache("the concept cards are not in id order");
    return out;
  }
};

// Every document of the index has a card: both are in id order, so one
// pass pairs them (as SearchIndex::restore pairs documents and concepts).
void check_cards_cover(const SearchIndex& index, const CardColumns& cards) {
  std::size_t row = 0;
  for (const Hit& doc : index.candidates({})) {
    while (row < cards.ids.size() && cards.ids[row] < doc.id) ++row;
    if (row == cards.ids.size() || cards.ids[row] != doc.id)
      throw CorruptCache("the search index names a concept that has no card");
  }
}

// f() with what makes a cache file unusable turned into `reason` (and
// `corrupt` for a file that does not read back).
template <typename F>
void when_usable(F f, std::string& reason, bool& corrupt) {
  try {
    f();
  } catch (const OtherFormat& e) {
    reason = e.what();
  } catch (const InputError& e) {  // OpenSSL failed: the file cannot be checked, so it is not used
    reason = fmt::format("cannot be checked: {}", e.what());
  } catch (const CorruptCache& e) {
    reason = fmt::format("corrupt: {}", e.what());
    corrupt = true;
  }
}

Reader reader_of(std::string_view bytes) { return Reader(bytes.data(), bytes.data() + bytes.size()); }

// A mapped cache file whose header is right, whose manifest section is
// whole and says the tree at the root is unchanged.
struct CurrentFile {
  std::shared_ptr<const Mapping> file;  // restored indexes read it in place
  std::array<SectionBytes, kSections> sections;
};

std::optional<CurrentFile> open_current(const fs::path& file, const fs::path& root, const LoadOptions& options,
                                        std::string& reason, bool& corrupt) {
  std::optional<Mapping> mapped = Mapping::open(file, reason, &corrupt);  // a refused file is said like a corrupt one
  if (!mapped) return std::nullopt;
  std::optional<CurrentFile> out;
  when_usable([&] {
    const std::array<SectionBytes, kSections> sections = sections_of(*mapped);
    sections[kHead].check();
    Reader r = reader_of(sections[kHead].bytes);
    Payload head = read_head(r);
    if (!r.done_but_padding()) throw CorruptCache("bytes after the end of the manifest");
    if (head.key != cache_key(root, options)) {
      reason = "written for another bundle or other load options";
      return;
    }
    FileDescriptor root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (root_fd.get() < 0) {
      reason = fmt::format("cannot open the bundle root: {}", std::strerror(errno));
      return;
    }
    if (std::string change = first_change(root_fd.get(), head.manifest, head.start); !change.empty()) {
      reason = "stale: " + change;
      return;
    }
    out.emplace(CurrentFile{std::make_shared<const Mapping>(std::move(*mapped)), sections});
  }, reason, corrupt);
  return out;
}

// The bundle section of a current file, checked and copied out. Its pages
// are released as they are hashed and again as they are copied (only an
// index reads the file in place), so the section is never resident whole
// beside its copy.
Bundle restore_bundle(const CurrentFile& current, const fs::path& root, const LoadOptions& options) {
  const Mapping& file = *current.file;
  const auto release = [&file](std::string_view bytes) { file.release(bytes); };
  current.sections[kBundle].check(release);
  Reader r = reader_of(current.sections[kBundle].bytes);
  r.release_behind(release, kBlock);
  Bundle bundle = Bundle::restore(r, root, options);
  if (!r.done_but_padding()) throw CorruptCache("bytes after the end of the bundle");
  current.file->release(current.sections[kBundle].bytes);
  return bundle;
}

// The cached bundle, or nullopt with `reason` (and `corrupt` set when the
// file exists but does not read back).
std::optional<CachedBundle> read_cache(const fs::path& file, const fs::path& root, const LoadOptions& options,
                                       const IndexConfig& config, std::string& reason, bool& corrupt) {
  std::optional<CurrentFile> current = open_current(file, root, options, reason, corrupt);
  if (!current) return std::nullopt;
  std::optional<CachedBundle> out;
  when_usable([&] {
    current->sections[kSearch].check();
    Bundle bundle = restore_bundle(*current, root, options);
    Reader rs = reader_of(current->sections[kSearch].bytes);
    SearchIndex index = SearchIndex::restore(rs, &bundle, current->file);
    rs.get<std::uint64_t>();
    CardColumns::get(rs);
    if (!rs.done_but_padding()) throw CorruptCache("bytes after the end of the search section");
    if (!same_index(index.config(), config)) index = SearchIndex::build(bundle, config);
    out.emplace(CachedBundle{std::move(bundle), std::move(index), true, "", "", false, file});
  }, reason, corrupt);
  return out;
}

// All of `bytes` at `offset`, or std::system_error.
void write_all(int fd, std::string_view bytes, std::uint64_t offset) {
  while (!bytes.empty()) {
    const ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::system_error(n < 0 ? errno : ENOSPC, std::generic_category(), "cannot write the cache file");
    bytes.remove_prefix(static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
  }
}

// Streams the cache to `fd`: header space first, each section with its
// checksum, the header last.
void write_payload(int fd, const std::string& key, std::int64_t start, const Manifest& manifest, const Bundle& bundle,
                   const SearchIndex& index) {
  Header header{};
  std::uint64_t at = sizeof header;
  auto section = [&](SectionId id, auto&& fill) {
    BlockDigest digest;
    Section& out = header.sections[id];
    out.offset = at;
    Writer w(
        [&](std::string_view bytes) {
          digest.add(bytes);
          write_all(fd, bytes, at);
          at += bytes.size();
        },
        std::size_t{4} << 20);
    fill(w);
    w.align();  // the next section starts 8-aligned
    w.flush();
    out.bytes = at - out.offset;
    const auto sum = digest.finish();
    std::memcpy(out.checksum, sum.data(), sum.size());
  };
  section(kHead, [&](Writer& w) {
    w.put_string(key);
    w.put(start);
    put_stamps(w, manifest.directories);
    put_stamps(w, manifest.files);
  });
  section(kSearch, [&](Writer& w) { put_search(w, bundle, index); });
  section(kBundle, [&](Writer& w) { bundle.save(w); });
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.format = kFormat;
  header.header_bytes = sizeof header;
  header.payload_bytes = at - sizeof header;
  write_all(fd, std::string_view(reinterpret_cast<const char*>(&header), sizeof header), 0);
}

// Whether `name` starts with the name index_cache_file() gives (32 hex
// digits, ".okfidx"); `rest` is what follows.
bool cache_name(std::string_view name, std::string_view& rest) {
  constexpr std::size_t kHex = 32;
  constexpr std::string_view kSuffix = ".okfidx";
  if (name.size() < kHex + kSuffix.size()) return false;
  for (std::size_t i = 0; i < kHex; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(name[i])) || std::isupper(static_cast<unsigned char>(name[i]))) return false;
  if (name.substr(kHex, kSuffix.size()) != kSuffix) return false;
  rest = name.substr(kHex + kSuffix.size());
  return true;
}

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The pid of a writer's temporary file ("HASH.okfidx.tmp.PID.N", as
// write_cache names it), or 0 for any other name.
pid_t writer_of(const std::string& name) {
  std::string_view rest;
  constexpr std::string_view kMark = ".tmp.";
  if (!cache_name(name, rest) || rest.substr(0, kMark.size()) != kMark) return 0;
  rest.remove_prefix(kMark.size());
  const std::size_t dot = rest.find('.');
  if (dot == std::string_view::npos || !all_digits(rest.substr(dot + 1))) return 0;
  const std::string pid(rest.substr(0, dot));
  if (!all_digits(pid) || pid.size() > 10) return 0;
  const long long value = std::stoll(pid);
  if (value <= 0 || value > INT32_MAX) return 0;
  return static_cast<pid_t>(value);
}

// The bundle root a cache file was written for: its key (cache_key) up to
// the lines of load options that end it (a root may hold '\n').
std::optional<fs::path> root_of(const SectionBytes& head) {
  Reader r(head.bytes.data(), head.bytes.data() + head.bytes.size());
  const std::string_view key = r.get_view();
  std::size_t end = key.size();
  for (int line = 0; line < kKeyOptionLines; ++line) {
    if (end == 0) return std::nullopt;
    end = key.rfind('\n', end - 1);
    if (end == std::string_view::npos || end == 0) return std::nullopt;
  }
  return fs::path(std::string(key.substr(0, end)));
}

// Why the cache file `file` will never be read again, or "" when it may be.
std::string unreadable_reason(const fs::path& file, bool other_formats) {
  std::string why;
  std::optional<Mapping> mapped = Mapping::open(file, why);
  if (!mapped) return {};  // gone meanwhile, or not ours to judge
  if (mapped->size() < sizeof kMagic || std::memcmp(mapped->data(), kMagic, sizeof kMagic) != 0)
    return {};  // not provably written by an okfbench: left alone
  try {
    const std::optional<fs::path> root = root_of(sections_of(*mapped)[kHead]);
    if (!root) return "its key names no bundle";
    std::error_code error;
    const fs::file_status status = fs::status(*root, error);
    if (status.type() == fs::file_type::not_found) return fmt::format("bundle {} is gone", root->string());
    if (!error && !fs::is_directory(status)) return fmt::format("bundle {} is no longer a folder", root->string());
    return {};  // there, or cannot tell (a folder we may not read)
  } catch (const OtherFormat& e) {
    return other_formats ? std::string(e.what()) : std::string();
  } catch (const CorruptCache& e) {
    return fmt::format("corrupt: {}", e.what());
  }
}

// Writes the cache file whole under a temporary name, then renames it into
// place. "" when written; otherwise why not (and nothing is left behind).
std::string write_cache(const fs::path& file, const std::string& key, std::int64_t start, const Manifest& manifest,
                        const Bundle& bundle, const SearchIndex& index) {
  static std::atomic<unsigned> counter{0};
  std::error_code error;
  fs::create_directories(file.parent_path(), error);
  if (error) return fmt::format("cannot create {}: {}", file.parent_path().string(), error.message());
  prune_index_cache(file.parent_path(), false);
  const fs::path temporary =
      file.string() + fmt::format(".tmp.{}.{}", ::getpid(), counter.fetch_add(1, std::memory_order_relaxed));
  // Owner-only: the file holds the bundle's text, whoever may read the bundle.
  FileDescriptor fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (fd.get() < 0) return fmt::format("cannot create {}: {}", temporary.string(), std::strerror(errno));
  try {
    write_payload(fd.get(), key, start, manifest, bundle, index);
    if (::close(fd.release()) != 0) throw std::system_error(errno, std::generic_category(), "cannot close the cache file");
    fs::rename(temporary, file);
    return {};
  } catch (const std::exception& e) {
    fs::remove(temporary, error);
    return fmt::format("{}: {}", file.string(), e.what());
  }
}

}  // namespace

namespace {

// Why the cache folder `dir` is not used (untrusted_folder), said once per
// folder and process in `note`; "" when it may be used.
std::string refused_folder(const fs::path& dir, std::string* note) {
  std::string problem = untrusted_folder(dir);
  if (problem.empty()) return {};
  static std::mutex mutex;
  static std::set<fs::path> said;
  const std::lock_guard<std::mutex> lock(mutex);
  if (note && said.insert(dir).second)
    *note = fmt::format("index cache folder {} not used (loaded from the files): {}", dir.string(), problem);
  return "the cache folder is not used: " + problem;
}

}  // namespace

struct CachedSearch::Cards {
  std::shared_ptr<const Mapping> file;  // the columns read it in place
  CardColumns columns;
};

CachedSearch::CachedSearch(SearchIndex index, std::unique_ptr<Cards> cards, std::size_t skipped, fs::path file)
    : index_(std::move(index)), cards_(std::move(cards)), skipped_files_(skipped), file_(std::move(file)) {}
CachedSearch::CachedSearch(CachedSearch&&) noexcept = default;
CachedSearch::~CachedSearch() = default;

std::optional<ConceptCard> CachedSearch::card(std::string_view id) const {
  const CardColumns& c = cards_->columns;
  std::size_t low = 0, high = c.ids.size();
  while (low < high) {
    const std::size_t mid = low + (high - low) / 2;
    if (c.ids[mid] < id) low = mid + 1;
    else high = mid;
  }
  if (low == c.ids.size() || c.ids[low] != id) return std::nullopt;
  return ConceptCard{c.titles[low], c.descriptions[low], c.types[low]};
}

std::optional<CachedSearch> load_cached_search(const fs::path& root, const LoadOptions& options,
                                               const IndexConfig& config, const fs::path& dir, std::string* why) {
  std::string reason = "no cache folder";
  bool corrupt = false;
  std::optional<CachedSearch> out;
  std::error_code error;
  const fs::path canonical = fs::canonical(root, error);
  if (!dir.empty() && !error && (reason = refused_folder(dir, nullptr)).empty()) {
    reason = "no cache folder";
    const fs::path file = index_cache_file(dir, canonical, options);
    if (std::optional<CurrentFile> current = open_current(file, canonical, options, reason, corrupt)) {
      when_usable([&] {
        current->sections[kSearch].check();
        Reader r = reader_of(current->sections[kSearch].bytes);
        SearchIndex index = SearchIndex::restore(r, nullptr, current->file);
        const std::size_t skipped = r.count(0);
        CardColumns columns = CardColumns::get(r);
        if (!r.done_but_padding()) throw CorruptCache("bytes after the end of the search section");
        check_cards_cover(index, columns);
        if (!same_index(index.config(), config)) {
          reason = "holds an index for another config";
          return;
        }
        auto cards = std::make_unique<CachedSearch::Cards>(CachedSearch::Cards{current->file, std::move(columns)});
        out.emplace(CachedSearch(std::move(index), std::move(cards), skipped, file));
      }, reason, corrupt);
    }
  }
  if (why) *why = out ? std::string() : reason;
  return out;
}

std::string untrusted_owner(unsigned owner, unsigned mode) {
  const uid_t me = ::geteuid();
  if (owner != me)
    return fmt::format("it is owned by uid {}, not by you (uid {}): remove it, or chown it to yourself if you trust it",
                       owner, me);
  if ((mode & (S_IWGRP | S_IWOTH)) != 0)
    return fmt::format("it is writable by group or others (mode {:o}): chmod go-w it, or remove it", mode & 07777);
  return {};
}

std::string untrusted_folder(const fs::path& dir) {
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) return {};
  return untrusted_owner(info.st_uid, info.st_mode);
}

fs::path default_index_cache_dir() {
  const fs::path base = user_cache_dir();
  return base.empty() ? fs::path() : base / "index";
}

fs::path index_cache_file(const fs::path& dir, const fs::path& root, const LoadOptions& options) {
  return dir / (sha256_hex(cache_key(root, options)).substr(0, 32) + ".okfidx");
}

namespace {

// Loads from the files, builds the index for `config` and writes the cache
// file; `reason` and `corrupt` say why the file was not used.
CachedBundle rebuild(const fs::path& file, const fs::path& root, const LoadOptions& options, const IndexConfig& config,
                     std::string reason, bool corrupt) {
  const std::int64_t start = now_ns();
  Manifest manifest;
  Bundle bundle = Bundle::load(root, options, manifest);
  SearchIndex index = SearchIndex::build(bundle, config);
  std::string written = write_cache(file, cache_key(root, options), start, manifest, bundle, index);
  std::string note;
  if (corrupt) note = fmt::format("index cache {} was {}; rebuilt", file.string(), reason);
  if (!written.empty()) note += (note.empty() ? "" : "; ") + fmt::format("index cache not written: {}", written);
  return {std::move(bundle), std::move(index), false, std::move(reason), std::move(note), written.empty(), file};
}

}  // namespace

CachedBundle load_cached(const fs::path& root, const LoadOptions& options, const IndexConfig& config,
                         const fs::path& dir) {
  std::error_code error;
  const fs::path canonical = fs::canonical(root, error);
  if (dir.empty() || error) {  // no cache, or a root Bundle::load reports properly
    Bundle bundle = Bundle::load(root, options);
    SearchIndex index = SearchIndex::build(bundle, config);
    return {std::move(bundle), std::move(index), false, "no cache folder", "", false, {}};
  }
  if (std::string note; !refused_folder(dir, &note).empty()) {
    Bundle bundle = Bundle::load(root, options);
    SearchIndex index = SearchIndex::build(bundle, config);
    return {std::move(bundle), std::move(index), false, "untrusted cache folder", std::move(note), false, {}};
  }
  const fs::path file = index_cache_file(dir, canonical, options);
  std::string reason;
  bool corrupt = false;
  if (std::optional<CachedBundle> hit = read_cache(file, canonical, options, config, reason, corrupt)) return std::move(*hit);
  return rebuild(file, canonical, options, config, std::move(reason), corrupt);
}

Bundle load_cached_unindexed(const fs::path& root, const LoadOptions& options, const fs::path& dir, std::string& note) {
  std::error_code error;
  const fs::path canonical = fs::canonical(root, error);
  if (dir.empty() || error || !refused_folder(dir, &note).empty()) return Bundle::load(root, options);
  const fs::path file = index_cache_file(dir, canonical, options);
  std::string reason;
  bool corrupt = false;
  if (std::optional<CurrentFile> current = open_current(file, canonical, options, reason, corrupt)) {
    std::optional<Bundle> out;
    when_usable([&] { out.emplace(restore_bundle(*current, canonical, options)); }, reason, corrupt);
    if (out) return std::move(*out);
  }
  CachedBundle rebuilt = rebuild(file, canonical, options, IndexConfig{}, std::move(reason), corrupt);
  note = std::move(rebuilt.note);
  return std::move(rebuilt.bundle);
}

std::vector<PrunedFile> prune_index_cache(const fs::path& dir, bool other_formats) {
  std::vector<PrunedFile> pruned;
  struct stat folder {};
  // Never through a symbolic link, nor in a folder someone else could have filled.
  if (::lstat(dir.c_str(), &folder) != 0 || !S_ISDIR(folder.st_mode) ||
      !untrusted_owner(folder.st_uid, folder.st_mode).empty())
    return pruned;
  std::error_code error;
  // Errors only end the listing: pruning is housekeeping, never a failure.
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != ::geteuid()) continue;
    std::string why;
    std::string_view rest;
    if (const pid_t pid = writer_of(name); pid != 0) {
      if (::kill(pid, 0) != 0 && errno == ESRCH) why = fmt::format("left by writer {}, which is gone", pid);
    } else if (cache_name(name, rest) && rest.empty()) {
      why = unreadable_reason(path, other_formats);
    }
    if (why.empty()) continue;
    std::error_code remove_error;
    if (fs::remove(path, remove_error)) pruned.push_back({path, static_cast<std::uintmax_t>(info.st_size), std::move(why)});
  }
  std::sort(pruned.begin(), pruned.end(), [](const PrunedFile& a, const PrunedFile& b) { return a.file < b.file; });
  return pruned;
}

}  // namespace okfbench::retrieval
