// The bundle commands: validate, browse, open, neighbors, history.
//
//   okfbench validate BUNDLE [--profile okf|repo|lessons|expertise] [--json]   exit 0 conformant, 1 not
//     (or, for an expertise pack, when its live nodes conflict), 2 usage
//   okfbench browse BUNDLE [LAYER]
//   okfbench open BUNDLE ID
//   okfbench neighbors BUNDLE ID [--in|--out] [--rel R] [--hops N]
//   okfbench history BUNDLE [ID]
// Human-readable by default, --json for scripts. Lookups go through the loaded
// Bundle only, so an ID such as ../../etc/passwd is "not found", never a file.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "agents/bundle_tools.hpp"
#include "cli/commands.hpp"
#include "cli/keep_until_exit.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "engine/bundle_source.hpp"
#include "engine/limits.hpp"
#include "engine/number_option.hpp"
#include "engine/selection_flags.hpp"
#include "retrieval/bundle.hpp"
#include "retrieval/computation.hpp"
#include "retrieval/expertise.hpp"
#include "retrieval/index_cache.hpp"
#include "retrieval/usage.hpp"
#include "retrieval/utf8.hpp"

namespace okfbench::cli {
namespace {
using nlohmann::ordered_json;
using retrieval::Bundle;
using retrieval::Concept;

struct BundleArgs {
  std::string bundle;
  std::string profile = "okf";
  std::size_t max_file_bytes = retrieval::LoadOptions{}.max_file_bytes;
  std::size_t max_files = retrieval::LoadOptions{}.max_files;
  std::size_t max_total_bytes = retrieval::LoadOptions{}.max_total_bytes;
  bool json = false;
  // Per command.
  std::string id;      // open, neighbors, history
  std::string layer;   // browse
  std::string now;     // validate: the instant staleness is judged at
  bool in = false;
  bool out = false;
  std::string relation;
  int hops = 1;
  bool prune = false;  // index
  engine::SourceFlags git;
  SelectionFlags selection;  // validate
};

retrieval::LoadOptions load_options(const BundleArgs& args) {
  retrieval::LoadOptions options;
  options.profile = profile_option(args.profile);
  options.max_file_bytes = args.max_file_bytes;
  options.max_files = args.max_files;
  options.max_total_bytes = args.max_total_bytes;
  return options;
}

// These commands read no search index: without a cache folder none is built
// (with one, a miss builds it for the cache file).
Bundle& load(const BundleArgs& args) {
  const engine::BundleSourceFolder source = engine::BundleSourceFolder::open(args.bundle, args.git);
  return keep_until_exit(
      engine::load_unindexed_bundle(source.root(), load_options(args), args.git.index_cache_dir()));
}

void print(const ordered_json& json) { std::printf("%s\n", json_text(json, 2).c_str()); }

std::string joined_counts(const std::map<std::string, std::size_t>& counts) {
  std::string out;
  for (const auto& [name, count] : counts) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, count);
  return out.empty() ? "-" : out;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out.empty() ? "-" : out;
}

// ---- validate ----

// The lessons profile's part of the report: statuses as written and what
// the policy selects and excludes.
struct LessonReport {
  std::map<std::string, std::size_t> status;  // "invalid" for a status that is not one
  std::vector<std::string> selected, preferred;
  std::shared_ptr<const retrieval::Selection> selection;
};

// The expertise profile's part: the pack's version, what the policy keeps
// and excludes for the task, and the keys whose live nodes disagree.
struct ExpertiseReport {
  std::string version;
  std::vector<std::string> task_tags, selected;
  std::shared_ptr<const retrieval::Selection> selection;
  std::vector<retrieval::Conflict> conflicts;
};

struct Report {
  std::map<std::string, std::size_t> types, trust, status;
  std::map<std::string, std::size_t> usage;  // repo profile: concepts per usage tag
  std::size_t wikilinks = 0, broken_wikilinks = 0;  // repo profile
  std::vector<std::string> stale, deprecated, draft;
  std::size_t errors = 0, warnings = 0;
  std::optional<LessonReport> lessons;  // lessons profile
  std::optional<ExpertiseReport> expertise;  // expertise profile
  std::string profile_hint;  // engine::profile_hint_text, or ""
};

Report summarize(const Bundle& bundle, const std::string& now) {
  Report report;
  for (const Concept& item : bundle.concepts()) {
    ++report.types[item.type];
    ++report.trust[std::string(retrieval::to_string(item.trust))];
    ++report.status[std::string(retrieval::to_string(item.status))];
    if (item.is_stale(now)) report.stale.push_back(item.id);
    if (item.status == retrieval::Status::deprecated) report.deprecated.push_back(item.id);
    if (item.status == retrieval::Status::draft) report.draft.push_back(item.id);
    if (bundle.options().profile != retrieval::Profile::repo) continue;
    for (const std::string& tag : retrieval::classify_usage(item)) ++report.usage[tag];
    for (const retrieval::Link& link : item.links) {
      if (link.form == retrieval::LinkForm::markdown) continue;
      ++report.wikilinks;
      if (!link.resolved) ++report.broken_wikilinks;
    }
  }
  for (const retrieval::Diagnostic& d : bundle.diagnostics())
    ++(d.severity == retrieval::Severity::error ? report.errors : report.warnings);
  return report;
}

ordered_json diagnostic_json(const retrieval::Diagnostic& d) {
  return {{"severity", retrieval::to_string(d.severity)}, {"path", d.path}, {"line", d.line}, {"message", d.message}};
}

ordered_json broken_links_json(const Bundle& bundle) {
  ordered_json out = ordered_json::array();
  for (const Concept& item : bundle.concepts())
    for (const retrieval::Link& link : item.links)
      if (!link.resolved) out.push_back({{"from", item.id}, {"line", link.line}, {"href", link.raw}});
  return out;
}

// The policy flags, judging expiry at --now when --as-of is not given.
SelectionFlags validate_flags(const BundleArgs& args) {
  SelectionFlags flags = args.selection;
  if (flags.as_of.empty()) flags.as_of = args.now;
  return flags;
}

std::vector<std::string> selected_ids(const Bundle& bundle, const retrieval::Selection& selection) {
  std::vector<std::string> out;
  for (const Concept& item : bundle.concepts())
    if (!selection.excludes(item.id)) out.push_back(item.id);
  return out;
}

std::optional<ExpertiseReport> expertise_report(const Bundle& bundle, const BundleArgs& args,
                                                std::shared_ptr<const retrieval::Selection> selection) {
  if (bundle.options().profile != retrieval::Profile::expertise) return std::nullopt;
  ExpertiseReport report;
  report.version = retrieval::pack_version(bundle);
  report.task_tags = args.selection.task_tags;
  report.selected = selected_ids(bundle, *selection);
  report.selection = std::move(selection);
  report.conflicts = retrieval::detect_conflicts(bundle, expertise_policy(validate_flags(args)));
  return report;
}

void print_expertise_text(const ExpertiseReport& r) {
  std::printf("pack version: %s\n", r.version.empty() ? "-" : r.version.c_str());
  std::printf("task tags: %s\n", joined(r.task_tags).c_str());
  std::printf("policy: %s\n", r.selection->policy.c_str());
  std::printf("selected: %s\n", joined(r.selected).c_str());
  for (const retrieval::Exclusion& e : r.selection->excluded)
    std::printf("excluded: %s (%s)\n", e.id.c_str(), e.reason.c_str());
  for (const retrieval::Conflict& c : r.conflicts)
    std::printf("conflict: key %s: %s (%zu different texts)\n", c.key.c_str(), joined(c.ids).c_str(), c.texts);
  std::printf("conflicts: %zu\n", r.conflicts.size());
}

ordered_json expertise_json(const ExpertiseReport& r) {
  ordered_json out = {{"version", r.version},   {"task_tags", r.task_tags},         {"policy", r.selection->policy},
                      {"selected", r.selected}, {"excluded", ordered_json::array()}, {"conflicts", ordered_json::array()}};
  for (const retrieval::Exclusion& e : r.selection->excluded)
    out["excluded"].push_back({{"id", e.id}, {"reason", e.reason}});
  for (const retrieval::Conflict& c : r.conflicts)
    out["conflicts"].push_back({{"key", c.key}, {"ids", c.ids}, {"texts", c.texts}});
  return out;
}

std::optional<LessonReport> lesson_report(const Bundle& bundle, std::shared_ptr<const retrieval::Selection> selection) {
  if (bundle.options().profile != retrieval::Profile::lessons) return std::nullopt;
  LessonReport report;
  report.selection = selection;
  for (const Concept& item : bundle.concepts()) {
    const auto& status = item.lifecycle->status;
    ++report.status[status ? std::string(retrieval::to_string(*status)) : "invalid"];
    if (selection->excludes(item.id)) continue;
    report.selected.push_back(item.id);
    if (selection->prefers(item.id)) report.preferred.push_back(item.id);
  }
  return report;
}

void print_lessons_text(const LessonReport& r) {
  std::printf("lessons: %s\n", joined_counts(r.status).c_str());
  std::printf("policy: %s\n", r.selection->policy.c_str());
  std::printf("selected: %s\n", joined(r.selected).c_str());
  if (!r.preferred.empty()) std::printf("preferred: %s\n", joined(r.preferred).c_str());
  for (const retrieval::Exclusion& e : r.selection->excluded)
    std::printf("excluded: %s (%s)\n", e.id.c_str(), e.reason.c_str());
}

ordered_json lessons_json(const LessonReport& r) {
  ordered_json out = {{"status", r.status}, {"policy", r.selection->policy}, {"selected", r.selected},
                      {"preferred", r.preferred}, {"excluded", ordered_json::array()}};
  for (const retrieval::Exclusion& e : r.selection->excluded)
    out["excluded"].push_back({{"id", e.id}, {"reason", e.reason}});
  return out;
}

void print_validate_text(const BundleArgs& args, const Bundle& bundle, const Report& r, const std::string& now) {
  std::printf("bundle: %s (profile %s)\n", engine::shown_source(args.bundle).c_str(), args.profile.c_str());
  std::printf("concepts: %zu in %zu layers (%s)\n", bundle.concepts().size(), bundle.layers().size(),
              joined_counts(bundle.layers()).c_str());
  std::printf("types: %s\n", joined_counts(r.types).c_str());
  std::printf("links: %zu (%zu resolved, %zu broken)\n", bundle.link_count(),
              bundle.link_count() - bundle.broken_link_count(), bundle.broken_link_count());
  if (bundle.options().profile == retrieval::Profile::repo) {
    std::printf("wikilinks: %zu (%zu resolved, %zu broken)\n", r.wikilinks, r.wikilinks - r.broken_wikilinks,
                r.broken_wikilinks);
    std::printf("usage: %s\n", joined_counts(r.usage).c_str());
  }
  std::printf("trust: %s\n", joined_counts(r.trust).c_str());
  std::printf("status: %s\n", joined_counts(r.status).c_str());
  std::printf("stale at %s: %s\n", now.c_str(), joined(r.stale).c_str());
  std::printf("deprecated: %s\n", joined(r.deprecated).c_str());
  std::printf("draft: %s\n", joined(r.draft).c_str());
  if (r.lessons) print_lessons_text(*r.lessons);
  if (r.expertise) print_expertise_text(*r.expertise);
  for (const Concept& item : bundle.concepts())
    for (const retrieval::Link& link : item.links)
      if (!link.resolved) std::printf("broken link: %s:%d: %s\n", item.path.c_str(), link.line, retrieval::printable(link.raw).c_str());
  for (const retrieval::Diagnostic& d : bundle.diagnostics())
    std::printf("%s:%d: %s: %s\n", d.path.c_str(), d.line, std::string(retrieval::to_string(d.severity)).c_str(),
                d.message.c_str());
  std::printf("diagnostics: %zu errors, %zu warnings\n", r.errors, r.warnings);
  std::printf("conformant: %s\n", r.errors == 0 ? "yes" : "no");
  if (!r.profile_hint.empty()) std::printf("hint: %s\n", r.profile_hint.c_str());
}

int run_validate(const BundleArgs& args) {
  Bundle& bundle = load(args);
  std::string now = !args.now.empty() ? args.now : !args.selection.as_of.empty() ? args.selection.as_of : retrieval::now_utc();
  Report r = summarize(bundle, now);
  // Errors or no concepts may mean the wrong profile: a vault read as OKF.
  if (r.errors > 0 || bundle.concepts().empty()) r.profile_hint = engine::profile_hint_text(bundle);
  std::shared_ptr<const retrieval::Selection> selection = make_selection(bundle, validate_flags(args));
  r.lessons = lesson_report(bundle, selection);
  r.expertise = expertise_report(bundle, args, selection);
  // An expertise pack whose live nodes disagree is not fit to use either.
  const int exit_code = r.errors == 0 && (!r.expertise || r.expertise->conflicts.empty()) ? 0 : 1;
  if (!args.json) {
    print_validate_text(args, bundle, r, now);
    return exit_code;
  }
  ordered_json out = {{"bundle", retrieval::escape_invalid_utf8(engine::shown_source(args.bundle))},  // a folder name need not be UTF-8
                      {"profile", args.profile},
                      {"conformant", r.errors == 0},
                      {"concepts", bundle.concepts().size()},
                      {"layers", bundle.layers()},
                      {"types", r.types},
                      {"links", {{"total", bundle.link_count()},
                                 {"resolved", bundle.link_count() - bundle.broken_link_count()},
                                 {"broken", bundle.broken_link_count()}}},
                      {"broken_links", broken_links_json(bundle)},
                      {"trust", r.trust},
                      {"status", r.status},
                      {"now", now},
                      {"stale", r.stale},
                      {"deprecated", r.deprecated},
                      {"draft", r.draft},
                      {"errors", r.errors},
                      {"warnings", r.warnings},
                      {"diagnostics", ordered_json::array()}};
  for (const retrieval::Diagnostic& d : bundle.diagnostics()) out["diagnostics"].push_back(diagnostic_json(d));
  if (!r.profile_hint.empty()) out["hint"] = r.profile_hint;
  if (bundle.options().profile == retrieval::Profile::repo) {
    out["wikilinks"] = {{"total", r.wikilinks}, {"resolved", r.wikilinks - r.broken_wikilinks}, {"broken", r.broken_wikilinks}};
    out["usage"] = r.usage;
  }
  if (r.lessons) out["lessons"] = lessons_json(*r.lessons);
  if (r.expertise) out["expertise"] = expertise_json(*r.expertise);
  print(out);
  return exit_code;
}

// ---- browse ----

int run_browse(const BundleArgs& args) {
  Bundle& bundle = load(args);
  std::optional<retrieval::LayerIndex> index = bundle.index(args.layer);
  if (!index)
    throw InputError(fmt::format("{}: no directory `{}` in the bundle; run `okfbench browse {}` to list the layers",
                                 args.bundle, args.layer, args.bundle));
  if (args.json) {
    ordered_json out = {{"layer", index->layer}, {"subdirs", index->subdirs}, {"concepts", ordered_json::array()},
                        {"synthesized", index->synthesized}};
    for (const retrieval::IndexEntry& e : index->concepts)
      out["concepts"].push_back({{"id", e.id}, {"title", e.title}, {"description", e.description}, {"type", e.type}});
    print(out);
    return 0;
  }
  std::printf("%s/\n", index->layer.empty() ? "." : index->layer.c_str());
  std::map<std::string, std::size_t> layers = bundle.layers();
  for (const std::string& subdir : index->subdirs) {
    std::string path = index->layer.empty() ? subdir : index->layer + "/" + subdir;
    auto count = layers.find(path);
    if (count != layers.end())
      std::printf("  %s/  (%zu concepts)\n", subdir.c_str(), count->second);
    else
      std::printf("  %s/\n", subdir.c_str());
  }
  for (const retrieval::IndexEntry& e : index->concepts)
    std::printf("  %s  %s%s%s\n", e.id.c_str(), e.title.c_str(), e.description.empty() ? "" : " - ",
                e.description.c_str());
  return 0;
}

// ---- open ----

ordered_json concept_json(const Concept& item, const std::string& now) {
  ordered_json out = {{"id", item.id},
                      {"path", item.path},
                      {"type", item.type},
                      {"title", item.title},
                      {"description", item.description},
                      {"tags", item.tags},
                      {"status", retrieval::to_string(item.status)},
                      {"trust", retrieval::to_string(item.trust)},
                      {"stale_after", item.stale_after},
                      {"stale", item.is_stale(now)},
                      {"sources", ordered_json::array()},
                      {"links", ordered_json::array()},
                      {"citations", ordered_json::array()},
                      {"body", item.body}};
  for (const retrieval::Source& s : item.sources)
    out["sources"].push_back({{"id", s.id}, {"resource", s.resource}, {"title", s.title}, {"author", s.author},
                              {"usage_count", s.usage_count}, {"last_modified", s.last_modified}});
  if (std::optional<retrieval::ComputationContract> contract = retrieval::computation_contract(item))
    out["computation"] = agents::contract_json(*contract);
  for (const retrieval::Link& l : item.links)
    out["links"].push_back({{"target", l.target}, {"href", l.raw}, {"relation", l.relation}, {"resolved", l.resolved}});
  for (const retrieval::Citation& c : retrieval::distinct_citations(item))
    out["citations"].push_back({{"label", c.label}, {"text", c.text}});
  return out;
}

void print_concept_text(const Concept& item, const std::string& now) {
  std::printf("id: %s\ntype: %s\ntitle: %s\n", item.id.c_str(), item.type.c_str(), item.title.c_str());
  if (!item.description.empty()) std::printf("description: %s\n", item.description.c_str());
  std::printf("status: %s\ntrust: %s\n", std::string(retrieval::to_string(item.status)).c_str(),
              std::string(retrieval::to_string(item.trust)).c_str());
  if (!item.stale_after.empty())
    std::printf("stale_after: %s%s\n", item.stale_after.c_str(), item.is_stale(now) ? " (STALE)" : "");
  if (!item.tags.empty()) std::printf("tags: %s\n", joined(item.tags).c_str());
  for (const retrieval::Source& s : item.sources)
    std::printf("source: %s%s\n", s.title.empty() ? "" : (s.title + ": ").c_str(), retrieval::source_text(s).c_str());
  if (std::optional<retrieval::ComputationContract> contract = retrieval::computation_contract(item))
    std::printf("%s", retrieval::contract_lines(*contract).c_str());
  std::printf("\n%s", retrieval::printable(item.body).c_str());  // a NUL or CR in the body never cuts or rewrites a line
  if (!item.body.empty() && item.body.back() != '\n') std::printf("\n");
}

int run_open(const BundleArgs& args) {
  Bundle& bundle = load(args);
  std::string now = retrieval::now_utc();
  if (const Concept* item = bundle.lookup(args.id)) {
    if (args.json)
      print(concept_json(*item, now));
    else
      print_concept_text(*item, now);
    return 0;
  }
  if (std::optional<retrieval::LayerIndex> index = bundle.index(args.id)) {  // a directory reads its index
    if (args.json)
      print({{"layer", index->layer}, {"index", index->text}, {"synthesized", index->synthesized}});
    else
      std::printf("%s", index->text.c_str());
    return 0;
  }
  throw InputError(fmt::format("{}: concept `{}` not found; run `okfbench browse {}` to see what there is",
                               args.bundle, args.id, args.bundle));
}

// ---- neighbors ----

int run_neighbors(const BundleArgs& args) {
  Bundle& bundle = load(args);
  const Concept* item = bundle.lookup(args.id);
  if (!item)
    throw InputError(fmt::format("{}: concept `{}` not found; run `okfbench browse {}` to see what there is",
                                 args.bundle, args.id, args.bundle));
  retrieval::Direction direction = args.in == args.out ? retrieval::Direction::both
                                   : args.in           ? retrieval::Direction::in
                                                       : retrieval::Direction::out;
  std::vector<retrieval::Neighbor> found = bundle.neighbors(item->id, direction, args.relation, args.hops);
  std::vector<const retrieval::Link*> broken;
  if (direction != retrieval::Direction::in) broken = bundle.unresolved(item->id);
  if (args.json) {
    ordered_json out = {{"id", item->id}, {"neighbors", ordered_json::array()}, {"unresolved", ordered_json::array()}};
    for (const retrieval::Neighbor& n : found) {
      const Concept* other = bundle.find(n.id);
      out["neighbors"].push_back({{"id", n.id}, {"title", other->title}, {"relation", n.relation},
                                  {"from", n.from}, {"hops", n.hops}});
    }
    for (const retrieval::Link* link : broken)
      out["unresolved"].push_back({{"href", link->raw}, {"line", link->line}, {"relation", link->relation}});
    print(out);
    return 0;
  }
  for (const retrieval::Neighbor& n : found)
    std::printf("%d  %-16s %s  %s%s\n", n.hops, n.relation.c_str(), n.id.c_str(), bundle.find(n.id)->title.c_str(),
                n.from == item->id ? "" : fmt::format("  (via {})", n.from).c_str());
  for (const retrieval::Link* link : broken)
    std::printf("unresolved  %s  line %d: %s\n", link->relation.c_str(), link->line, link->raw.c_str());
  if (found.empty() && broken.empty()) std::printf("no neighbors\n");
  return 0;
}

// ---- history ----

int run_history(const BundleArgs& args) {
  Bundle& bundle = load(args);
  if (!args.id.empty() && !bundle.lookup(args.id))
    throw InputError(fmt::format("{}: concept `{}` not found; run `okfbench browse {}` to see what there is",
                                 args.bundle, args.id, args.bundle));
  std::vector<retrieval::LogEntry> entries = bundle.history(args.id);
  if (args.json) {
    ordered_json out = ordered_json::array();
    for (const retrieval::LogEntry& e : entries)
      out.push_back({{"date", e.date}, {"kind", e.kind}, {"text", e.text}, {"scope", e.scope}});
    print(out);
    return 0;
  }
  for (const retrieval::LogEntry& e : entries)
    std::printf("%s  %s%s%s%s\n", e.date.c_str(), e.scope.empty() ? "" : (e.scope + "/  ").c_str(), e.kind.c_str(),
                e.kind.empty() ? "" : ": ", e.text.c_str());
  if (entries.empty()) std::printf("no history\n");
  return 0;
}

// `okfbench index --prune`: the cache files removed, and why.
void print_pruned(const std::vector<retrieval::PrunedFile>& pruned, const std::filesystem::path& dir, bool json) {
  std::uintmax_t bytes = 0;
  for (const retrieval::PrunedFile& file : pruned) bytes += file.bytes;
  if (json) {
    ordered_json out{{"folder", dir.string()}, {"pruned", ordered_json::array()}, {"bytes", bytes}};
    for (const retrieval::PrunedFile& file : pruned)
      out["pruned"].push_back({{"file", file.file.string()}, {"bytes", file.bytes}, {"reason", file.reason}});
    print(out);
    return;
  }
  for (const retrieval::PrunedFile& file : pruned)
    std::printf("%s\n", fmt::format("removed {} ({:.1f} MB): {}", file.file.string(),
                                    static_cast<double>(file.bytes) / 1e6, file.reason).c_str());
  std::printf("%s\n", fmt::format("pruned {} file{} ({:.1f} MB) from {}", pruned.size(), pruned.size() == 1 ? "" : "s",
                                  static_cast<double>(bytes) / 1e6, dir.string()).c_str());
}

// `okfbench index`: the cache written (or found current) and what it holds.
int run_index(const BundleArgs& args) {
  const std::filesystem::path dir = args.git.index_cache_dir();
  if (dir.empty())
    throw UsageError("okfbench index writes the index cache: drop --no-index-cache, or name a folder with "
                     "--index-cache DIR (neither $XDG_CACHE_HOME nor $HOME is set)");
  if (args.bundle.empty() && !args.prune)
    throw UsageError("okfbench index needs a BUNDLE to index (or --prune alone to clean the cache folder)");
  if (args.prune) {
    // With a bundle as well, the pruning report goes to stderr and stdout keeps the index's.
    if (args.bundle.empty()) {
      print_pruned(retrieval::prune_index_cache(dir, true), dir, args.json);
      return 0;
    }
    for (const retrieval::PrunedFile& file : retrieval::prune_index_cache(dir, true))
      std::fprintf(stderr, "%s\n", fmt::format("okfbench: removed {}: {}", file.file.string(), file.reason).c_str());
  }
  const engine::BundleSourceFolder source = engine::BundleSourceFolder::open(args.bundle, args.git);
  const auto start = std::chrono::steady_clock::now();
  const retrieval::CachedBundle& loaded =
      keep_until_exit(engine::load_cached_bundle(source.root(), load_options(args), {}, dir));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!loaded.from_cache && !loaded.written)
    throw InputError(fmt::format("{}: the index cache was not written ({})", engine::shown_source(args.bundle), loaded.note));
  std::error_code error;
  const std::uintmax_t bytes = std::filesystem::file_size(loaded.file, error);
  const std::string state = loaded.from_cache ? "current" : "written";
  if (args.json) {
    ordered_json out{{"bundle", engine::shown_source(args.bundle)},      {"file", loaded.file.string()},
                     {"state", state},             {"reason", loaded.reason},
                     {"concepts", loaded.bundle.concepts().size()},
                     {"documents", loaded.index.stats().documents},
                     {"cache_bytes", error ? 0 : bytes}, {"seconds", seconds}};
    print(out);
    return 0;
  }
  std::printf("%s\n", fmt::format("{}: {} ({} concepts, {} indexed, {:.1f} MB, {:.2f} s{})", loaded.file.string(), state,
                                  loaded.bundle.concepts().size(), loaded.index.stats().documents,
                                  error ? 0.0 : static_cast<double>(bytes) / 1e6, seconds,
                                  loaded.from_cache ? "" : "; " + loaded.reason).c_str());
  return 0;
}

CLI::App* add_common(CLI::App& app, const char* name, const char* help, const std::shared_ptr<BundleArgs>& args) {
  CLI::App* cmd = app.add_subcommand(name, help);
  cmd->add_option("bundle", args->bundle, "Bundle folder or git URL")->required();
  cmd->add_option("--profile", args->profile,
                  "okf (OKF v0.2 conformance), repo (plain markdown accepted), lessons (lesson lifecycle) or "
                  "expertise (expertise pack)")
      ->check(CLI::IsMember({"okf", "repo", "lessons", "expertise"}))
      ->capture_default_str();
  cmd->add_option("--max-file-bytes", args->max_file_bytes, "Skip files larger than this")
      ->check(number_in(engine::limits::max_file_bytes))
      ->capture_default_str();
  cmd->add_option("--max-files", args->max_files, "Load at most this many concept files")
      ->check(number_in(engine::limits::max_files))
      ->capture_default_str();
  cmd->add_option("--max-total-bytes", args->max_total_bytes, "Stop loading past this many bytes")
      ->check(number_in(engine::limits::max_total_bytes))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Machine-readable output");
  add_source_flags(*cmd, args->git);
  return cmd;
}

}  // namespace

void add_bundle_commands(CLI::App& app, Action& action) {
  auto validate = std::make_shared<BundleArgs>();
  CLI::App* cmd = add_common(app, "validate", "Check a bundle against OKF v0.2 and report its shape (exit 1 when not conformant)", validate);
  cmd->add_option("--now", validate->now, "Judge staleness at this ISO 8601 instant (default: now)");
  add_selection_flags(*cmd, validate->selection);
  cmd->callback([validate, &action] { action = [validate] { return run_validate(*validate); }; });
  auto index = std::make_shared<BundleArgs>();
  cmd = add_common(app, "index",
                   "Write the bundle's persistent index (parsed bundle and search index) to the index cache, or "
                   "report it current",
                   index);
  cmd->get_option("bundle")->required(false);
  cmd->add_flag("--prune", index->prune,
                "First remove the cache files no load will read again (bundles that are gone, corrupt files, "
                "other okfbench versions' files, killed writers' temporary files) and say which; without "
                "BUNDLE, only that");
  cmd->callback([index, &action] { action = [index] { return run_index(*index); }; });

  auto browse = std::make_shared<BundleArgs>();
  cmd = add_common(app, "browse", "List a directory of a bundle: subdirectories and concepts with titles", browse);
  cmd->add_option("layer", browse->layer, "Directory inside the bundle (default: the root)");
  cmd->callback([browse, &action] { action = [browse] { return run_browse(*browse); }; });

  auto open = std::make_shared<BundleArgs>();
  cmd = add_common(app, "open", "Print one concept: metadata header and body (a directory prints its index)", open);
  cmd->add_option("id", open->id, "Concept id, e.g. runbooks/slow-queries or /runbooks/slow-queries.md")->required();
  cmd->callback([open, &action] { action = [open] { return run_open(*open); }; });

  auto neighbors = std::make_shared<BundleArgs>();
  cmd = add_common(app, "neighbors", "Concepts linked from (--out) or to (--in) a concept, both by default", neighbors);
  cmd->add_option("id", neighbors->id, "Concept id")->required();
  cmd->add_flag("--in", neighbors->in, "Backlinks only");
  cmd->add_flag("--out", neighbors->out, "Outbound links only");
  cmd->add_option("--rel", neighbors->relation, "Only edges of this relation, e.g. JOINS_WITH");
  cmd->add_option("--hops", neighbors->hops, "Follow edges this many hops")->check(number_in(engine::limits::neighbor_hops))
      ->capture_default_str();
  cmd->callback([neighbors, &action] { action = [neighbors] { return run_neighbors(*neighbors); }; });

  auto history = std::make_shared<BundleArgs>();
  cmd = add_common(app, "history", "Log entries of every log.md, newest first; with ID only those about it", history);
  cmd->add_option("id", history->id, "Concept id");
  cmd->callback([history, &action] { action = [history] { return run_history(*history); }; });
}

}  // namespace okfbench::cli
