#include "mcp/http_checks.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <string>

namespace okfbench::mcp {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// A decimal port 1-65535 without sign or leading zero; 0 when it is not one.
int port_number(std::string_view text) {
  if (text.empty() || text.size() > 5 || text.front() == '0') return 0;
  int port = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (ec != std::errc() || end != text.data() + text.size() || port > 65535) return 0;
  return port;
}

bool loopback_name(std::string_view name) {
  std::string n = lower(name);
  return n == "localhost" || n == "127.0.0.1" || n == "[::1]";
}

// "NAME", "NAME:PORT", "[V6]" or "[V6]:PORT"; false when the text is none of these.
bool split_authority(std::string_view authority, std::string_view& name, std::optional<std::string_view>& port) {
  std::size_t name_end = authority.starts_with('[') ? authority.find(']') : authority.find(':');
  if (authority.starts_with('[')) {
    if (name_end == std::string_view::npos) return false;
    ++name_end;
  }
  name = authority.substr(0, std::min(name_end, authority.size()));
  std::string_view rest = authority.substr(name.size());
  port.reset();
  if (rest.empty()) return !name.empty();
  if (rest.front() != ':') return false;
  port = rest.substr(1);
  return true;
}

}  // namespace

bool loopback_host(std::string_view host, int port) {
  std::string_view name;
  std::optional<std::string_view> port_text;
  if (!split_authority(host, name, port_text) || !loopback_name(name)) return false;
  return !port_text || port_number(*port_text) == port;
}

bool loopback_origin(std::string_view origin) {
  constexpr std::string_view scheme_end = "://";
  std::size_t at = origin.find(scheme_end);
  if (at == std::string_view::npos) return false;
  std::string scheme = lower(origin.substr(0, at));
  if (scheme != "http" && scheme != "https") return false;
  std::string_view authority = origin.substr(at + scheme_end.size());
  if (authority.find_first_of("@/?#\\ ") != std::string_view::npos) return false;
  std::string_view name;
  std::optional<std::string_view> port_text;
  if (!split_authority(authority, name, port_text) || !loopback_name(name)) return false;
  return !port_text || port_number(*port_text) != 0;
}

bool json_content_type(std::string_view type) {
  return lower(trimmed(type.substr(0, type.find(';')))) == "application/json";
}

bool accepts_json(std::string_view accept) {
  if (trimmed(accept).empty()) return true;
  while (!accept.empty()) {
    std::size_t comma = accept.find(',');
    std::string_view range = accept.substr(0, comma);
    accept = comma == std::string_view::npos ? std::string_view() : accept.substr(comma + 1);
    std::size_t semi = range.find(';');
    std::string media = lower(trimmed(range.substr(0, semi)));
    if (media != "application/json" && media != "application/*" && media != "*/*") continue;
    bool refused = false;  // q=0 (0, 0.0, 0.000) says "not this one"
    for (std::string_view params = semi == std::string_view::npos ? "" : range.substr(semi + 1); !params.empty();) {
      std::size_t next = params.find(';');
      std::string param = lower(trimmed(params.substr(0, next)));
      params = next == std::string_view::npos ? std::string_view() : params.substr(next + 1);
      std::string_view q = std::string_view(param).substr(std::min<std::size_t>(2, param.size()));
      if (param.starts_with("q=") && (q == "0" || (q.starts_with("0.") && q.find_first_not_of('0', 2) == q.npos)))
        refused = true;
    }
    if (!refused) return true;
  }
  return false;
}

bool header_sent(std::string_view head, std::string_view name) {
  head = head.substr(0, head.find("\r\n\r\n"));
  std::string wanted = lower(name) + ":";
  for (std::size_t at = head.find('\n'); at != std::string_view::npos; at = head.find('\n', at + 1))
    if (lower(head.substr(at + 1, wanted.size())) == wanted) return true;
  return false;
}

}  // namespace okfbench::mcp
