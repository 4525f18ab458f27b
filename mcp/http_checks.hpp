#pragma once
// The header rules of the HTTP transport (mcp/http_server.hpp), as pure
// functions. They keep pages of other sites out: a browser lets any page
// send a "simple" POST (Content-Type text/plain or none) to 127.0.0.1, and a
// DNS-rebinding page sends it with its own Host. Each rule parses the header
// strictly and refuses what it cannot parse.
#include <string_view>

namespace okfbench::mcp {

// A Host header naming this server: a loopback name (localhost, 127.0.0.1,
// [::1]; case-insensitive) with no port or exactly `port`. Refused: any
// other name ("evil.example", "localhost.", "127.0.0.1.nip.io"), userinfo,
// another port, an empty port, an empty value.
bool loopback_host(std::string_view host, int port);

// An Origin header naming a page of this machine: "http://" or "https://",
// a loopback name as for Host, an optional decimal port 1-65535, nothing
// after. Refused: "" and "null", userinfo ("http://localhost:80@evil.example"),
// a path, query or fragment, any other scheme or host.
bool loopback_origin(std::string_view origin);

// Content-Type's media type is application/json (case-insensitive, spaces
// around it allowed); parameters may follow ';' ("application/json;
// charset=utf-8"). "text/plain; x=application/json" and "" are refused.
bool json_content_type(std::string_view type);

// An Accept header admits JSON: one of its comma-separated media ranges is
// application/json, application/* or */* and does not carry q=0. An absent
// header ("") admits everything.
bool accepts_json(std::string_view accept);

// Whether the request head as sent (request line, headers, "\r\n\r\n")
// has a header line called `name` (case-insensitive), whatever its value.
bool header_sent(std::string_view head, std::string_view name);

}  // namespace okfbench::mcp
