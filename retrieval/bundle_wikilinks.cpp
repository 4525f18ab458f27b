// Wikilinks in the repo profile: `[[Note]]` names a file by its name, found
// anywhere in the tree, the way Obsidian resolves it.
#include <algorithm>
#include <array>
#include <tuple>

#include "retrieval/analyzer.hpp"
#include "retrieval/bundle_impl.hpp"

namespace okfbench::retrieval {
namespace {

// The file kinds Obsidian embeds as attachments: `![[photo.png]]` is a
// picture on the page, not a link to a note, so it is no edge when no note
// has that name.
constexpr std::array attachment_extensions{
    "png", "jpg", "jpeg", "gif", "bmp", "svg", "webp", "avif", "mp3", "wav", "m4a", "ogg", "flac",
    "3gp", "webm", "mp4", "ogv", "mov", "mkv", "pdf", "canvas", "base", "excalidraw"};

std::string_view last_part(std::string_view path) { return path.substr(path.rfind('/') + 1); }

bool is_attachment(std::string_view name) {
  std::size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return false;
  std::string extension = fold_case(name.substr(dot + 1));
  return std::any_of(attachment_extensions.begin(), attachment_extensions.end(),
                     [&](std::string_view known) { return extension == known; });
}

std::size_t depth(std::string_view id) { return static_cast<std::size_t>(std::count(id.begin(), id.end(), '/')); }

}  // namespace

void Bundle::Impl::index_names() {
  names.clear();
  if (options.profile != Profile::repo) return;
  for (std::size_t at = 0; at < concepts.size(); ++at) names[fold_case(last_part(concepts[at].id))].push_back(at);
}

std::string Bundle::Impl::resolve_wikilink(std::string_view target, bool& is_edge) const {
  is_edge = true;
  std::optional<std::string> path = join_path({}, target);  // "/x" is the same name as "x"
  if (!path || path->empty()) return {};
  std::string folded = fold_case(*path);
  if (folded.ends_with(".md")) folded.resize(folded.size() - 3);
  const std::string suffix = "/" + folded;
  const Concept* best = nullptr;
  if (auto it = names.find(std::string(last_part(folded))); it != names.end()) {
    for (std::size_t at : it->second) {
      const Concept& candidate = concepts[at];
      std::string id = fold_case(candidate.id);
      if (id != folded && !id.ends_with(suffix)) continue;
      // Shortest path wins: fewest directories, then fewest bytes, then id order.
      if (!best || std::make_tuple(depth(candidate.id), candidate.id.size(), std::string_view(candidate.id)) <
                       std::make_tuple(depth(best->id), best->id.size(), std::string_view(best->id)))
        best = &candidate;
    }
  }
  if (best) return best->id;
  if (is_attachment(last_part(*path))) is_edge = false;
  return {};
}

}  // namespace okfbench::retrieval
