#include "retrieval/links.hpp"

#include <vector>

namespace okfbench::retrieval {
namespace {

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string_view strip_fragment_and_query(std::string_view href) {
  std::size_t cut = href.find_first_of("#?");
  return cut == std::string_view::npos ? href : href.substr(0, cut);
}

}  // namespace

bool is_external(std::string_view href) {
  if (href.starts_with("//")) return true;
  // RFC 3986 scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
  if (href.empty() || !is_alpha(href[0])) return false;
  for (std::size_t i = 1; i < href.size(); ++i) {
    char c = href[i];
    if (c == ':') return true;
    if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.') return false;
  }
  return false;
}

std::string percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      int hi = hex_value(text[i + 1]);
      int lo = hex_value(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

std::string_view parent_dir(std::string_view path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view{} : path.substr(0, slash);
}

std::optional<std::string> join_path(std::string_view base_dir, std::string_view relative) {
  std::vector<std::string_view> parts;
  auto push_segments = [&parts](std::string_view text) -> bool {
    std::size_t start = 0;
    while (start <= text.size()) {
      std::size_t end = text.find('/', start);
      if (end == std::string_view::npos) end = text.size();
      std::string_view segment = text.substr(start, end - start);
      if (segment == "..") {
        if (parts.empty()) return false;
        parts.pop_back();
      } else if (!segment.empty() && segment != ".") {
        parts.push_back(segment);
      }
      start = end + 1;
    }
    return true;
  };
  if (!push_segments(base_dir) || !push_segments(relative)) return std::nullopt;
  std::string joined;
  for (std::string_view part : parts) {
    if (!joined.empty()) joined.push_back('/');
    joined.append(part);
  }
  return joined;
}

ResolvedHref resolve_href(std::string_view from_file, std::string_view href) {
  ResolvedHref result;
  if (is_external(href)) {
    result.kind = HrefKind::external;
    return result;
  }
  std::string decoded = percent_decode(strip_fragment_and_query(href));
  if (decoded.empty()) return result;  // "#section": same page
  std::string_view target = decoded;
  std::string_view base = target.front() == '/' ? std::string_view{} : parent_dir(from_file);
  std::optional<std::string> joined = join_path(base, target);
  if (!joined) {
    result.kind = HrefKind::escapes_root;
    return result;
  }
  result.kind = HrefKind::path;
  result.path = std::move(*joined);
  result.directory = target.back() == '/' || target == "." || target.ends_with("/.") ||
                     target == ".." || target.ends_with("/..");
  return result;
}

std::string relation_from_heading(std::string_view heading) {
  std::string out;
  bool pending_separator = false;
  for (char c : heading) {
    auto byte = static_cast<unsigned char>(c);
    bool keep = is_alpha(c) || is_digit(c) || byte >= 0x80;
    if (!keep) {
      pending_separator = !out.empty();
      continue;
    }
    if (pending_separator) out.push_back('_');
    pending_separator = false;
    out.push_back(c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c);
  }
  return out.empty() ? std::string("LINKS_TO") : out;
}

std::optional<std::string> normalize_reference(std::string_view reference) {
  if (is_external(reference)) return std::nullopt;
  std::string decoded = percent_decode(strip_fragment_and_query(reference));
  std::optional<std::string> joined = join_path({}, decoded);
  if (!joined || joined->empty()) return std::nullopt;
  if (joined->ends_with(".md")) joined->resize(joined->size() - 3);
  // "x/...md" loses its ".md" only now: the last part may have become a dot
  // segment, which names a directory (never a concept) and may climb.
  const std::string_view last = std::string_view(*joined).substr(joined->rfind('/') + 1);
  if (last.empty() || last == "." || last == "..") return std::nullopt;
  return joined;
}

}  // namespace okfbench::retrieval
