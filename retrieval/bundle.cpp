// Bundle::load: walk, parallel parse, deterministic merge; and the queries.
#include <set>
#include <algorithm>
#include <cctype>
#include <deque>
#include <unordered_map>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "retrieval/bundle_impl.hpp"
#include "core/error.hpp"
#include "retrieval/expertise.hpp"
#include "retrieval/frontmatter.hpp"

namespace okfbench::retrieval {
namespace fs = std::filesystem;
using detail::FileKind;
using detail::FileTask;
using detail::ParsedFile;

namespace {

void add_ancestors(std::set<std::string, std::less<>>& directories, std::string_view path) {
  for (std::string_view dir = parent_dir(path); !directories.contains(dir); dir = parent_dir(dir)) {
    directories.emplace(dir);
    if (dir.empty()) break;
  }
}

void sort_diagnostics(std::vector<Diagnostic>& diagnostics) {
  std::stable_sort(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.path, a.line) < std::tie(b.path, b.line);
  });
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void check_clashes(const std::vector<Concept>& concepts, const std::set<std::string, std::less<>>& directories,
                   std::vector<Diagnostic>& diagnostics) {
  std::unordered_map<std::string, const Concept*> folded;
  for (const Concept& item : concepts) {
    if (directories.contains(item.id))
      diagnostics.push_back({Severity::warning, item.path, 0,
                             fmt::format("concept id `{0}` is also a directory ({0}/); `{0}` names the concept "
                                         "and `{0}/` its directory index, which readers confuse; rename one",
                                         item.id)});
    auto [it, inserted] = folded.emplace(lower(item.id), &item);
    if (!inserted)
      diagnostics.push_back({Severity::warning, item.path, 0,
                             fmt::format("concept id `{}` differs from `{}` only by letter case; they collide on "
                                         "case-insensitive file systems; rename one",
                                         item.id, it->second->id)});
  }
}

// Puts `concepts` in id order and `raw_links` in step with them. Concept is
// large: a sorted permutation is applied along its cycles, so each element
// moves about once instead of log n times.
void sort_by_id(std::vector<Concept>& concepts, std::vector<detail::PackedRawLinks>& raw_links) {
  std::vector<std::size_t> order(concepts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&concepts](std::size_t a, std::size_t b) { return concepts[a].id < concepts[b].id; });
  for (std::size_t start = 0; start < order.size(); ++start) {
    if (order[start] == start) continue;
    Concept item = std::move(concepts[start]);
    detail::PackedRawLinks links = std::move(raw_links[start]);
    std::size_t at = start;
    for (std::size_t from = order[at]; from != start; at = from, from = order[at]) {
      concepts[at] = std::move(concepts[from]);
      raw_links[at] = std::move(raw_links[from]);
      order[at] = at;
    }
    concepts[at] = std::move(item);
    raw_links[at] = std::move(links);
    order[at] = at;
  }
}

}  // namespace

std::vector<Citation> distinct_citations(const Concept& item) {
  std::vector<Citation> out;
  std::set<std::string> labels, texts;
  for (const Citation& citation : item.citations) {
    const bool fresh = citation.label.empty() ? texts.insert(citation.text).second : labels.insert(citation.label).second;
    if (fresh) out.push_back(citation);
  }
  return out;
}

std::string_view to_string(Severity severity) { return severity == Severity::error ? "error" : "warning"; }

std::string_view to_string(Status status) {
  switch (status) {
    case Status::draft: return "draft";
    case Status::deprecated: return "deprecated";
    default: return "stable";
  }
}

std::string_view to_string(TrustTier tier) {
  switch (tier) {
    case TrustTier::human_reviewed: return "human-reviewed";
    case TrustTier::machine_confirmed: return "machine-confirmed";
    default: return "unverified";
  }
}

std::string_view to_string(Profile profile) {
  switch (profile) {
    case Profile::repo: return "repo";
    case Profile::lessons: return "lessons";
    case Profile::expertise: return "expertise";
    case Profile::okf: break;
  }
  return "okf";
}

std::optional<Profile> parse_profile(std::string_view name) {
  for (Profile p : {Profile::okf, Profile::repo, Profile::lessons, Profile::expertise})
    if (name == to_string(p)) return p;
  return std::nullopt;
}

std::string_view profile_names() { return "okf, repo, lessons or expertise"; }

constexpr LessonStatus kLessonStatuses[] = {LessonStatus::candidate, LessonStatus::reviewed, LessonStatus::active,
                                            LessonStatus::deprecated, LessonStatus::rejected};

std::string_view to_string(LessonStatus status) {
  switch (status) {
    case LessonStatus::reviewed: return "reviewed";
    case LessonStatus::active: return "active";
    case LessonStatus::deprecated: return "deprecated";
    case LessonStatus::rejected: return "rejected";
    case LessonStatus::candidate: break;
  }
  return "candidate";
}

std::optional<LessonStatus> parse_lesson_status(std::string_view name) {
  for (LessonStatus s : kLessonStatuses)
    if (name == to_string(s)) return s;
  return std::nullopt;
}

std::string now_utc() {
  auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now);
}

bool Concept::is_stale(const std::string& now) const {
  std::optional<std::int64_t> limit = parse_timestamp(stale_after);
  std::optional<std::int64_t> current = parse_timestamp(now);
  return limit && current && *current >= *limit;
}

Bundle::Bundle() : impl_(std::make_unique<Impl>()) {}
Bundle::Bundle(Bundle&&) noexcept = default;
Bundle& Bundle::operator=(Bundle&&) noexcept = default;
Bundle::~Bundle() = default;

Bundle Bundle::load(const fs::path& root, const LoadOptions& options) {
  return load(root, options, nullptr);
}

Bundle Bundle::load(const fs::path& root, const LoadOptions& options, detail::Manifest& manifest) {
  return load(root, options, &manifest);
}

Bundle Bundle::load(const fs::path& root, const LoadOptions& options, detail::Manifest* manifest) {
  std::error_code error;
  if (!fs::is_directory(root, error))
    throw InputError(fmt::format("{}: not a directory; pass the folder that holds the bundle's markdown files",
                                 root.string()));
  Bundle bundle;
  Impl& impl = *bundle.impl_;
  impl.root = fs::canonical(root, error);
  if (error)
    throw InputError(fmt::format("{}: cannot resolve the bundle path: {}", root.string(), error.message()));
  impl.options = options;
  detail::DirectoryHandles handles;  // outlives the pipeline: its threads open files relative to them
  detail::ParsePipeline pipeline(options, manifest != nullptr);
  detail::walk_bundle(impl.root, options, handles, impl.load_diagnostics, pipeline, manifest);
  impl.directories.insert("");
  impl.concepts.reserve(pipeline.size());  // at most one per file: no reallocation moves them all again
  impl.raw_links.reserve(pipeline.size());
  std::size_t walked = 0;
  Impl::Budget budget{options.max_total_bytes};
  pipeline.finish([&](ParsedFile& file) {
    if (manifest && walked < manifest->files.size()) manifest->files[walked].digest = file.digest;
    ++walked;
    impl.take(file, budget);
  });
  sort_by_id(impl.concepts, impl.raw_links);
  std::sort(impl.logs.begin(), impl.logs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (options.profile == Profile::expertise)  // a pack declares its version in the root index.md
    for (Diagnostic& d : check_pack_index(impl.root_index_frontmatter)) impl.load_diagnostics.push_back(std::move(d));
  impl.finalize();
  return bundle;
}

void Bundle::Impl::take(ParsedFile& file, Budget& budget) {
  if (budget.exceeded && file.kind == FileKind::concept_file) return;
  if (file.kind == FileKind::concept_file) budget.read += file.parsed.item.bytes;
  if (file.kind == FileKind::concept_file && budget.read > budget.limit) {
    // Checked in walk order after reading (sizes come from the read, saving a
    // stat per file); the cut-off file and everything after it are dropped.
    budget.exceeded = true;
    load_diagnostics.push_back(
        {Severity::error, file.path, 0,
         fmt::format("the markdown files exceed {} bytes in total (max_total_bytes); files from here on were not "
                     "loaded; raise --max-total-bytes",
                     budget.limit)});
    return;
  }
  for (Diagnostic& diagnostic : file.diagnostics) load_diagnostics.push_back(std::move(diagnostic));
  if (!file.loaded) return;
  add_ancestors(directories, file.path);
  if (file.kind == FileKind::concept_file) {
    total_bytes += file.parsed.item.bytes;
    concepts.push_back(std::move(file.parsed.item));
    raw_links.emplace_back(file.parsed.raw_links);
    file.parsed.raw_links = {};
  } else if (file.kind == FileKind::index) {
    if (file.path == "index.md") root_index_frontmatter = std::move(file.frontmatter);
    index_texts[std::string(parent_dir(file.path))] = std::move(file.text);
  } else {
    logs.emplace_back(std::string(parent_dir(file.path)), std::move(file.entries));
  }
}

std::optional<std::size_t> Bundle::Impl::position(std::string_view id) const {
  auto it = std::lower_bound(concepts.begin(), concepts.end(), id,
                             [](const Concept& item, std::string_view key) { return item.id < key; });
  if (it == concepts.end() || it->id != id) return std::nullopt;
  return static_cast<std::size_t>(it - concepts.begin());
}

std::string Bundle::Impl::resolve_path(const ResolvedHref& href, bool& is_edge) const {
  is_edge = true;
  const std::string& path = href.path;
  auto directory_index = [this](const std::string& dir) {
    return directories.contains(dir) ? (dir.empty() ? std::string("index") : dir + "/index") : std::string();
  };
  if (href.directory || path.empty()) return directory_index(path);
  std::string_view name = std::string_view(path).substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (path.ends_with(".md")) {
    std::string id = path.substr(0, path.size() - 3);
    if (name == "index.md") return directory_index(std::string(parent_dir(path)));
    if (name == "log.md") {
      std::string_view scope = parent_dir(path);
      bool found = std::any_of(logs.begin(), logs.end(), [&](const auto& log) { return log.first == scope; });
      return found ? id : std::string();
    }
    return position(id) ? id : std::string();
  }
  if (position(path)) return path;  // extensionless link to a concept
  if (directories.contains(path)) return directory_index(path);
  if (name.find('.') != std::string_view::npos) is_edge = false;  // a link to an asset such as a .py file
  return {};
}

void Bundle::Impl::finalize() {
  std::vector<Diagnostic> link_diagnostics;
  link_count = 0;
  broken_link_count = 0;
  backlinks.assign(concepts.size(), {});
  index_names();
  for (std::size_t source = 0; source < concepts.size(); ++source) {
    Concept& item = concepts[source];
    item.links.clear();
    item.links.reserve(raw_links[source].size());  // exact, where growth by doubling left a third unused
    for (const detail::RawLinkView& raw : raw_links[source].views()) {
      Link link{"", std::string(raw.href), std::string(raw.relation), std::string(raw.text), raw.line, false,
                raw.from_frontmatter, raw.form};
      bool is_edge = true;
      if (raw.form != LinkForm::markdown) {
        link.raw = raw.written;
        link.target = resolve_wikilink(raw.href, is_edge);
      } else {
        ResolvedHref href = resolve_href(item.path, raw.href);
        if (href.kind == HrefKind::external || href.kind == HrefKind::anchor) continue;
        if (href.kind == HrefKind::escapes_root)
          link_diagnostics.push_back({Severity::warning, item.path, raw.line,
                                      fmt::format("link `{}` climbs above the bundle root with `..`; it was "
                                                  "treated as broken; link inside the bundle (e.g. `/x.md`)",
                                                  raw.href)});
        else
          link.target = resolve_path(href, is_edge);
      }
      if (!is_edge) continue;
      link.resolved = !link.target.empty();
      if (link.resolved) {
        if (std::optional<std::size_t> target = position(link.target))
          backlinks[*target].emplace_back(source, item.links.size());
      } else {
        ++broken_link_count;
      }
      ++link_count;
      item.links.push_back(std::move(link));
    }
  }
  check_clashes(concepts, directories, link_diagnostics);
  diagnostics = load_diagnostics;
  diagnostics.insert(diagnostics.end(), link_diagnostics.begin(), link_diagnostics.end());
  sort_diagnostics(diagnostics);
}

const fs::path& Bundle::root() const { return impl_->root; }
const std::vector<Concept>& Bundle::concepts() const { return impl_->concepts; }
const std::vector<Diagnostic>& Bundle::diagnostics() const { return impl_->diagnostics; }
std::size_t Bundle::link_count() const { return impl_->link_count; }
std::size_t Bundle::broken_link_count() const { return impl_->broken_link_count; }
std::size_t Bundle::total_bytes() const { return impl_->total_bytes; }
const LoadOptions& Bundle::options() const { return impl_->options; }
const std::optional<Bundle::IndexFrontmatter>& Bundle::root_index_frontmatter() const {
  return impl_->root_index_frontmatter;
}
std::optional<std::size_t> Bundle::position(std::string_view id) const { return impl_->position(id); }

const Concept* Bundle::find(std::string_view id) const {
  std::optional<std::size_t> at = impl_->position(id);
  return at ? &impl_->concepts[*at] : nullptr;
}

const Concept* Bundle::lookup(std::string_view reference) const {
  std::optional<std::string> id = normalize_reference(reference);
  return id ? find(*id) : nullptr;
}

std::vector<const Link*> Bundle::unresolved(std::string_view id) const {
  std::vector<const Link*> links;
  if (const Concept* item = lookup(id))
    for (const Link& link : item->links)
      if (!link.resolved) links.push_back(&link);
  return links;
}

std::vector<Neighbor> Bundle::neighbors(std::string_view id, Direction direction, std::string_view relation,
                                        int hops) const {
  std::vector<Neighbor> found;
  std::optional<std::string> start_id = normalize_reference(id);
  std::optional<std::size_t> start = start_id ? position(*start_id) : std::nullopt;
  if (!start || hops < 1) return found;
  std::string wanted = relation.empty() ? std::string() : relation_from_heading(relation);
  std::vector<bool> seen(impl_->concepts.size(), false);
  seen[*start] = true;
  std::deque<std::pair<std::size_t, int>> queue{{*start, 0}};
  auto reach = [&](std::size_t from, std::size_t to, const std::string& edge, int depth) {
    if (seen[to] || (!wanted.empty() && edge != wanted)) return;
    seen[to] = true;
    found.push_back({impl_->concepts[to].id, edge, impl_->concepts[from].id, depth});
    if (depth < hops) queue.emplace_back(to, depth);
  };
  while (!queue.empty()) {
    auto [current, depth] = queue.front();
    queue.pop_front();
    if (direction != Direction::in)
      for (const Link& link : impl_->concepts[current].links)
        if (std::optional<std::size_t> to = link.resolved ? position(link.target) : std::nullopt)
          reach(current, *to, link.relation, depth + 1);
    if (direction != Direction::out)
      for (auto [source, link_index] : impl_->backlinks[current])
        reach(current, source, impl_->concepts[source].links[link_index].relation, depth + 1);
  }
  return found;
}

std::map<std::string, std::size_t> Bundle::layers() const {
  std::map<std::string, std::size_t> counts;
  for (const Concept& item : impl_->concepts)
    if (!item.layer.empty()) ++counts[item.layer];
  return counts;
}

namespace {

std::optional<std::string> normalize_layer(std::string_view layer) {
  std::optional<std::string> dir = join_path({}, percent_decode(layer));
  if (!dir) return std::nullopt;
  if (*dir == "index.md" || *dir == "index") return std::string();
  for (std::string_view suffix : {"/index.md", "/index"})
    if (dir->ends_with(suffix)) return dir->substr(0, dir->size() - suffix.size());
  return dir;
}

std::string synthesize_index(const LayerIndex& index) {
  std::string text = fmt::format("# {}\n\n", index.layer.empty() ? "Bundle" : index.layer);
  for (const IndexEntry& entry : index.concepts) {
    std::string_view name = std::string_view(entry.id).substr(entry.id.rfind('/') + 1);
    text += fmt::format("* [{}]({}.md){}{}\n", entry.title, name, entry.description.empty() ? "" : " - ",
                        entry.description);
  }
  if (!index.subdirs.empty()) {
    text += "\n# Subdirectories\n\n";
    for (const std::string& subdir : index.subdirs) text += fmt::format("* [{0}]({0}/)\n", subdir);
  }
  return text;
}

}  // namespace

std::string synthesized_index_text(const LayerIndex& index) { return synthesize_index(index); }

std::optional<LayerIndex> Bundle::index(std::string_view layer) const {
  std::optional<std::string> dir = normalize_layer(layer);
  if (!dir || !impl_->directories.contains(*dir)) return std::nullopt;
  LayerIndex index;
  index.layer = *dir;
  for (const std::string& other : impl_->directories)
    if (!other.empty() && other != *dir && parent_dir(other) == *dir)
      index.subdirs.push_back(other.substr(dir->empty() ? 0 : dir->size() + 1));
  for (const Concept& item : impl_->concepts)
    if (parent_dir(item.path) == *dir)
      index.concepts.push_back({item.id, item.title, item.description, item.type});
  if (auto it = impl_->index_texts.find(*dir); it != impl_->index_texts.end()) {
    index.text = it->second;
  } else {
    index.text = synthesize_index(index);
    index.synthesized = true;
  }
  return index;
}

}  // namespace okfbench::retrieval
