// Bundle::save and Bundle::restore: a loaded bundle in the index cache's
// byte format (retrieval/binary_io.hpp). What finalize() derives (resolved
// links, backlinks, diagnostics, counts) is stored as well: running it again
// was half of a restore's time. The raw links stay, for remember().
#include "retrieval/binary_io.hpp"
#include "retrieval/bundle_impl.hpp"

namespace okfbench::retrieval {
namespace {
namespace fs = std::filesystem;
using detail::Reader;
using detail::Writer;

void put(Writer& w, const Diagnostic& d) {
  w.put<std::uint8_t>(static_cast<std::uint8_t>(d.severity));
  w.put_string(d.path);
  w.put<std::int32_t>(d.line);
  w.put_string(d.message);
}

Diagnostic get_diagnostic(Reader& r) {
  Diagnostic d;
  d.severity = r.get_enum(Severity::error);
  d.path = r.get_string();
  d.line = r.get<std::int32_t>();
  d.message = r.get_string();
  return d;
}

void put(Writer& w, const Link& link) {
  for (const std::string* field : {&link.target, &link.raw, &link.relation, &link.text}) w.put_string(*field);
  w.put<std::int32_t>(link.line);
  w.put<std::uint8_t>(link.resolved);
  w.put<std::uint8_t>(link.from_frontmatter);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(link.form));
}

Link get_link(Reader& r) {
  Link link;
  for (std::string* field : {&link.target, &link.raw, &link.relation, &link.text}) *field = r.get_string();
  link.line = r.get<std::int32_t>();
  link.resolved = r.get_bool();
  link.from_frontmatter = r.get_bool();
  link.form = r.get_enum(LinkForm::embed);
  return link;
}

void put(Writer& w, const Source& s) {
  for (const std::string* field : {&s.id, &s.resource, &s.title, &s.author, &s.usage_count, &s.last_modified})
    w.put_string(*field);
}

Source get_source(Reader& r) {
  Source s;
  for (std::string* field : {&s.id, &s.resource, &s.title, &s.author, &s.usage_count, &s.last_modified})
    *field = r.get_string();
  return s;
}

void put(Writer& w, const Lifecycle& l) {
  w.put<std::uint8_t>(l.status ? static_cast<std::uint8_t>(*l.status) + 1 : 0);
  w.put_string(l.status_text);
  w.put_string(l.scope);
  w.put_string(l.expires_at);
  w.put<std::uint8_t>(l.expires_valid);
  w.put_string(l.key);
  w.put_strings(l.applies_to);
}

Lifecycle get_lifecycle(Reader& r) {
  Lifecycle l;
  const auto status = r.get_enum<std::uint8_t>(static_cast<std::uint8_t>(LessonStatus::rejected) + 1);
  l.status = status == 0 ? std::nullopt : std::optional(static_cast<LessonStatus>(status - 1));
  l.status_text = r.get_string();
  l.scope = r.get_string();
  l.expires_at = r.get_string();
  l.expires_valid = r.get_bool();
  l.key = r.get_string();
  l.applies_to = r.get_strings();
  return l;
}

template <typename T, typename Put>
void put_list(Writer& w, const std::vector<T>& items, Put&& put_one) {
  w.put<std::uint64_t>(items.size());
  for (const T& item : items) put_one(item);
}

// Each element takes at least `min_bytes`, so a corrupt count is refused
// before anything is allocated.
template <typename Get>
auto get_list(Reader& r, std::size_t min_bytes, Get&& get_one) {
  const std::size_t n = r.count(min_bytes);
  std::vector<decltype(get_one())> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(get_one());
  return out;
}

void put(Writer& w, const Concept& c) {
  for (const std::string* field : {&c.id, &c.path, &c.layer, &c.type, &c.title, &c.description, &c.resource,
                                   &c.stale_after, &c.generated_by, &c.generated_at, &c.body, &c.frontmatter_yaml})
    w.put_string(*field);
  w.put_strings(c.tags);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(c.status));
  put_list(w, c.verified, [&](const Verification& v) {
    w.put_string(v.by);
    w.put_string(v.at);
  });
  w.put<std::uint8_t>(static_cast<std::uint8_t>(c.trust));
  w.put<std::uint8_t>(c.generated);
  put_list(w, c.sources, [&](const Source& s) { put(w, s); });
  put_list(w, c.citations, [&](const Citation& citation) {
    w.put_string(citation.label);
    w.put_string(citation.text);
  });
  w.put<std::uint64_t>(c.extra.size());
  for (const auto& [key, value] : c.extra) {
    w.put_string(key);
    w.put_string(value);
  }
  w.put<std::uint64_t>(c.bytes);
  w.put<std::uint8_t>(c.lifecycle.has_value());
  if (c.lifecycle.has_value()) put(w, *c.lifecycle);
  put_list(w, c.links, [&](const Link& link) { put(w, link); });
}

Concept get_concept(Reader& r) {
  Concept c;
  for (std::string* field : {&c.id, &c.path, &c.layer, &c.type, &c.title, &c.description, &c.resource,
                             &c.stale_after, &c.generated_by, &c.generated_at, &c.body, &c.frontmatter_yaml})
    *field = r.get_string();
  c.tags = r.get_strings();
  c.status = r.get_enum(Status::deprecated);
  c.verified = get_list(r, 16, [&] { return Verification{r.get_string(), r.get_string()}; });
  c.trust = r.get_enum(TrustTier::human_reviewed);
  c.generated = r.get_bool();
  c.sources = get_list(r, 48, [&] { return get_source(r); });
  c.citations = get_list(r, 16, [&] { return Citation{r.get_string(), r.get_string()}; });
  const std::size_t extra = r.count(16);
  for (std::size_t i = 0; i < extra; ++i) {
    std::string key = r.get_string();
    c.extra[std::move(key)] = r.get_string();
  }
  c.bytes = r.get<std::uint64_t>();
  if (r.get_bool()) c.lifecycle.make() = get_lifecycle(r);
  c.links = get_list(r, 39, [&] { return get_link(r); });
  return c;
}

void put(Writer& w, const detail::StoredLogEntry& e) {
  for (const std::string* field : {&e.entry.date, &e.entry.kind, &e.entry.text, &e.entry.scope}) w.put_string(*field);
  w.put_strings(e.targets);
}

detail::StoredLogEntry get_log_entry(Reader& r) {
  detail::StoredLogEntry e;
  for (std::string* field : {&e.entry.date, &e.entry.kind, &e.entry.text, &e.entry.scope}) *field = r.get_string();
  e.targets = r.get_strings();
  return e;
}

// neighbors() follows backlinks by index: every one must name a link there is.
void check_edges(const std::vector<Concept>& concepts,
                 const std::vector<std::vector<std::pair<std::size_t, std::size_t>>>& backlinks) {
  if (backlinks.size() != concepts.size()) throw detail::CorruptCache("backlinks and concepts differ in number");
  for (const auto& edges : backlinks)
    for (const auto& [source, link] : edges)
      if (source >= concepts.size() || link >= concepts[source].links.size())
        throw detail::CorruptCache("a backlink names a link that is not there");
}

}  // namespace

void Bundle::save(Writer& w) const {
  const Impl& impl = *impl_;
  put_list(w, impl.concepts, [&](const Concept& c) { put(w, c); });
  put_list(w, impl.raw_links, [&](const detail::PackedRawLinks& links) { w.put_string(links.bytes()); });
  put_list(w, impl.load_diagnostics, [&](const Diagnostic& d) { put(w, d); });
  w.put<std::uint64_t>(impl.directories.size());
  for (const std::string& dir : impl.directories) w.put_string(dir);
  w.put<std::uint64_t>(impl.index_texts.size());
  for (const auto& [dir, text] : impl.index_texts) {
    w.put_string(dir);
    w.put_string(text);
  }
  w.put<std::uint8_t>(impl.root_index_frontmatter.has_value());
  if (impl.root_index_frontmatter) {
    w.put_string(impl.root_index_frontmatter->yaml);
    w.put<std::int32_t>(impl.root_index_frontmatter->line);
  }
  put_list(w, impl.logs, [&](const auto& log) {
    w.put_string(log.first);
    put_list(w, log.second, [&](const detail::StoredLogEntry& e) { put(w, e); });
  });
  w.put<std::uint64_t>(impl.total_bytes);
  put_list(w, impl.diagnostics, [&](const Diagnostic& d) { put(w, d); });
  put_list(w, impl.backlinks, [&](const auto& edges) {
    put_list(w, edges, [&](const std::pair<std::size_t, std::size_t>& edge) {
      w.put<std::uint64_t>(edge.first);
      w.put<std::uint64_t>(edge.second);
    });
  });
  w.put<std::uint64_t>(impl.link_count);
  w.put<std::uint64_t>(impl.broken_link_count);
}

Bundle Bundle::restore(Reader& r, const fs::path& root, const LoadOptions& options) {
  Bundle bundle;
  Impl& impl = *bundle.impl_;
  impl.root = root;
  impl.options = options;
  impl.concepts = get_list(r, 8 * 14, [&] { return get_concept(r); });
  impl.raw_links = get_list(r, 8, [&] { return detail::PackedRawLinks::from_bytes(r.get_view()); });
  if (impl.raw_links.size() != impl.concepts.size()) throw detail::CorruptCache("links and concepts differ in number");
  for (std::size_t i = 1; i < impl.concepts.size(); ++i)
    if (!(impl.concepts[i - 1].id < impl.concepts[i].id)) throw detail::CorruptCache("concepts are not sorted by id");
  impl.load_diagnostics = get_list(r, 21, [&] { return get_diagnostic(r); });
  const std::size_t directories = r.count(8);
  for (std::size_t i = 0; i < directories; ++i) impl.directories.insert(r.get_string());
  const std::size_t indexes = r.count(16);
  for (std::size_t i = 0; i < indexes; ++i) {
    std::string dir = r.get_string();
    impl.index_texts[std::move(dir)] = r.get_string();
  }
  if (r.get_bool()) {
    std::string yaml = r.get_string();
    impl.root_index_frontmatter = IndexFrontmatter{std::move(yaml), r.get<std::int32_t>()};
  }
  impl.logs = get_list(r, 16, [&] {
    std::string scope = r.get_string();
    return std::pair(std::move(scope), get_list(r, 40, [&] { return get_log_entry(r); }));
  });
  impl.total_bytes = r.get<std::uint64_t>();
  impl.diagnostics = get_list(r, 21, [&] { return get_diagnostic(r); });
  impl.backlinks = get_list(r, 8, [&] {
    return get_list(r, 16, [&] {  // braces: the two reads happen in order
      return std::pair<std::size_t, std::size_t>{r.get<std::uint64_t>(), r.get<std::uint64_t>()};
    });
  });
  impl.link_count = r.get<std::uint64_t>();
  impl.broken_link_count = r.get<std::uint64_t>();
  check_edges(impl.concepts, impl.backlinks);
  impl.index_names();
  return bundle;
}

}  // namespace okfbench::retrieval
