#pragma once
// The chart libraries inlined into the HTML report: Vega, Vega-Lite and
// vega-embed, minified, from the npm packages pinned by
// reports/web/package-lock.json, and the explorer's own script and style
// (reports/web/explorer.js, explorer.css). The definitions are generated at build time
// (reports/web/embed.js), so the report needs no network to be viewed.
#include <string>

namespace okfbench::reports {

// The three scripts, concatenated in load order (vega, vega-lite, vega-embed).
std::string chart_library_scripts();
// Their licence texts, for the report's attribution comment.
std::string chart_library_licenses();
// e.g. "vega 5.33.0, vega-lite 5.23.0, vega-embed 6.29.0".
std::string chart_library_versions();
// The explorer's script and style sheet (reports/web/explorer.js, explorer.css).
std::string explorer_script();
std::string explorer_style();

}  // namespace okfbench::reports
