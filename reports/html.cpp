#include "reports/html.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "core/json_text.hpp"
#include "reports/config_names.hpp"
#include "reports/explorer.hpp"
#include "reports/forecast.hpp"
#include "reports/format.hpp"
#include "reports/headline_sentences.hpp"
#include "reports/spend.hpp"
#include "reports/verdict.hpp"
#include "reports/web_assets.hpp"
#include "reports/writers.hpp"

namespace okfbench::reports {

namespace {

using nlohmann::json;

using Names = std::map<std::string, std::string>;  // short configuration names by label

std::string short_name(const Names& names, const std::string& label) {
  auto it = names.find(label);
  return it == names.end() ? label : it->second;
}

std::string row_name(const SummaryRow& row, const Names& names) { return row.bundle + ": " + short_name(names, row.label); }

// Facet titles are configuration labels, which can be long: wrap them at the
// spaces between settings rather than cut them.
json facet_header() {
  return {{"labelLimit", 0}, {"labelAngle", 0}, {"labelAlign", "left"}, {"labelAnchor", "start"}, {"labelFontSize", 10},
          {"labelExpr", "split(datum.label, ' | ')"}};
}

// Breaks a label into lines of about `width` characters at spaces, joined by
// " | " (split back into lines by facet_header's labelExpr).
std::string wrapped(const std::string& label, std::size_t width) {
  std::string out;
  std::size_t line = 0;
  std::size_t start = 0;
  while (start < label.size()) {
    auto space = label.find(' ', start);
    std::string word = label.substr(start, space == std::string::npos ? std::string::npos : space - start);
    if (line > 0 && line + 1 + word.size() > width) {
      out += " | ";
      line = 0;
    } else if (line > 0) {
      out += ' ';
      ++line;
    }
    out += word;
    line += word.size();
    start = space == std::string::npos ? label.size() : space + 1;
  }
  return out;
}

json turns_chart(const Summary& s, const Names& names) {
  json values = json::array();
  for (const auto& row : s.rows) {
    if (!agentic(row.config.kind)) continue;
    for (const auto& t : row.per_turn) {
      values.push_back({{"config", wrapped(row_name(row, names), 60)}, {"turn", t.turn}, {"part", "cached"}, {"tokens", t.cached_tokens}, {"order", 0}});
      values.push_back({{"config", wrapped(row_name(row, names), 60)}, {"turn", t.turn}, {"part", "re-sent"}, {"tokens", t.resent_uncached_tokens}, {"order", 1}});
      values.push_back({{"config", wrapped(row_name(row, names), 60)}, {"turn", t.turn}, {"part", "new"}, {"tokens", t.new_tokens}, {"order", 2}});
    }
  }
  if (values.empty()) return nullptr;
  json parts = {"cached", "re-sent", "new"};
  json spec = {{"width", 380},
               {"height", 150},
               {"mark", "bar"},
               {"encoding",
                {{"x", {{"field", "turn"}, {"type", "ordinal"}, {"title", "turn"}}},
                 {"y", {{"field", "tokens"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", "input tokens (mean per trial)"}}},
                 {"color", {{"field", "part"}, {"type", "nominal"}, {"scale", {{"domain", parts}}}, {"title", "input"}}},
                 {"order", {{"field", "order"}}},
                 {"tooltip", json::array({{{"field", "turn"}}, {{"field", "part"}}, {{"field", "tokens"}, {"format", ",.0f"}}})}}}};
  return {{"data", {{"values", values}}},
          {"facet", {{"field", "config"}, {"type", "nominal"}, {"title", nullptr}, {"header", facet_header()}}},
          {"columns", 2},
          {"spec", spec}};
}

json size_chart(const Summary& s, const Names& names) {
  json values = json::array();
  for (const auto& row : s.rows) {
    if (row.concept_count <= 0 || !row.input_tokens.mean) continue;
    values.push_back({{"path", short_name(names, row.label)}, {"bundle", row.bundle}, {"concepts", row.concept_count}, {"input_tokens", *row.input_tokens.mean}});
  }
  if (values.empty()) return nullptr;
  return {{"data", {{"values", values}}},
          {"width", 520},
          {"height", 300},
          {"mark", {{"type", "line"}, {"point", true}}},
          {"encoding",
           {{"x", {{"field", "concepts"}, {"type", "quantitative"}, {"scale", {{"type", "log"}}}, {"title", "concepts in bundle (log scale)"}}},
            {"y", {{"field", "input_tokens"}, {"type", "quantitative"}, {"title", "input tokens per question (mean)"}}},
            {"color", {{"field", "path"}, {"type", "nominal"}, {"legend", {{"orient", "bottom"}, {"columns", 1}, {"labelLimit", 0}}}}},
            {"tooltip", json::array({{{"field", "bundle"}}, {{"field", "path"}}, {{"field", "input_tokens"}, {"format", ",.0f"}}})}}}};
}

// Cost against a quality metric per configuration, one panel per bundle and
// question set, the Pareto front marked and joined.
json front_chart(const Summary& s, const Names& names, std::string_view quality, const char* quality_title) {
  json values = json::array();
  std::vector<std::pair<std::string, std::string>> groups;
  for (const auto& row : s.rows) {
    std::pair<std::string, std::string> g{row.bundle, row.question_set};
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
  }
  for (const auto& [bundle, qs] : groups) {
    for (const auto& p : cost_quality_points(s, bundle, qs, quality)) {
      values.push_back({{"group", bundle + " (" + qs + ")"}, {"path", short_name(names, p.row->label)}, {"kind", to_string(p.row->config.kind)},
                        {"cost", p.cost}, {"quality", p.quality}, {"front", p.on_front ? "Pareto front" : "dominated"}});
    }
  }
  if (values.empty()) return nullptr;
  json x = {{"field", "cost"}, {"type", "quantitative"}, {"title", "cost per question (USD)"}};
  json y = {{"field", "quality"}, {"type", "quantitative"}, {"title", quality_title}, {"scale", {{"domain", {0, 1}}}}};
  json line = {{"transform", json::array({{{"filter", "datum.front === 'Pareto front'"}}})},
               {"mark", {{"type", "line"}, {"color", "#888"}, {"strokeDash", {4, 3}}}},
               {"encoding", {{"x", x}, {"y", y}, {"order", {{"field", "cost"}}}}}};
  // Each configuration its own colour and shape (one legend of short names); off the front, faded.
  json configuration_legend = {{"orient", "bottom"}, {"columns", 2}, {"labelLimit", 0}, {"title", "configuration"}};
  json points = {{"mark", {{"type", "point"}, {"filled", true}, {"size", 110}}},
                 {"encoding", {{"x", x}, {"y", y},
                               {"color", {{"field", "path"}, {"type", "nominal"}, {"legend", configuration_legend}}},
                               {"shape", {{"field", "path"}, {"type", "nominal"}, {"legend", configuration_legend}}},
                               {"opacity", {{"field", "front"}, {"type", "ordinal"}, {"sort", {"Pareto front", "dominated"}}, {"title", nullptr},
                                            {"scale", {{"domain", {"Pareto front", "dominated"}}, {"range", {1.0, 0.35}}}}}},
                               {"tooltip", json::array({{{"field", "path"}}, {{"field", "cost"}, {"format", "$.4g"}}, {{"field", "quality"}, {"title", quality_title}, {"format", ".3f"}}})}}}};
  return {{"data", {{"values", values}}},
          {"facet", {{"field", "group"}, {"type", "nominal"}, {"title", nullptr}, {"header", facet_header()}}},
          {"columns", 2},
          {"resolve", {{"scale", {{"x", "independent"}}}}},
          {"spec", {{"width", 300}, {"height", 220}, {"layer", json::array({line, points})}}}};
}

json tools_chart(const Summary& s, const Names& names) {
  json values = json::array();
  for (const auto& row : s.rows) {
    for (const auto& [tool, bytes] : row.tool_bytes_by_tool) values.push_back({{"config", row_name(row, names)}, {"tool", tool}, {"bytes", bytes}});
  }
  if (values.empty()) return nullptr;
  return {{"data", {{"values", values}}},
          {"width", 420},
          {"mark", "bar"},
          {"encoding",
           {{"y", {{"field", "config"}, {"type", "nominal"}, {"title", nullptr}, {"axis", {{"labelLimit", 0}}}}},
            {"x", {{"field", "bytes"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", "tool-result bytes per question (mean)"}}},
            {"color", {{"field", "tool"}, {"type", "nominal"}}},
            {"tooltip", json::array({{{"field", "tool"}}, {{"field", "bytes"}, {"format", ",.0f"}}})}}}};
}

json measures_chart(const Summary& s, const Names& names) {
  json values = json::array();
  for (const auto& row : s.rows) {
    for (const auto& [name, value] : row.measures) {
      if (value.mean) values.push_back({{"question_set", row.question_set}, {"path", row_name(row, names)}, {"measure", name}, {"value", *value.mean}});
    }
  }
  if (values.empty()) return nullptr;
  json spec = {{"width", 320},
               {"height", 200},
               {"mark", "bar"},
               {"encoding",
                {{"x", {{"field", "measure"}, {"type", "nominal"}, {"title", nullptr}}},
                 {"xOffset", {{"field", "path"}, {"type", "nominal"}}},
                 {"y", {{"field", "value"}, {"type", "quantitative"}, {"title", "mean over questions"}}},
                 {"color", {{"field", "path"}, {"type", "nominal"}, {"legend", {{"orient", "bottom"}, {"columns", 1}, {"labelLimit", 0}}}}},
                 {"tooltip", json::array({{{"field", "path"}}, {{"field", "measure"}}, {{"field", "value"}, {"format", ".4f"}}})}}}};
  return {{"data", {{"values", values}}},
          {"facet", {{"field", "question_set"}, {"type", "nominal"}, {"title", nullptr}, {"header", facet_header()}}},
          {"columns", 2},
          {"spec", spec}};
}

struct Chart {
  const char* id;
  const char* title;
  const char* empty_note;
  json spec;
};

std::vector<Chart> charts_of(const Summary& s, const Names& n) {
  return {{"turns", "Input tokens per turn (agent paths)", "No agent trials with per-turn usage.", turns_chart(s, n)},
          {"size", "Input tokens against bundle size", "No trials with a known input token count.", size_chart(s, n)},
          {"front", "Cost against evidence recall", "No configuration has both a known cost and evidence recall.", front_chart(s, n, "evidence_recall", "evidence recall")},
          {"answers", "Answer score against cost", "No configuration has both a known cost and a facts answer score.", front_chart(s, n, kAnswerGrader, "answer score (facts)")},
          {"tools", "Tool-result bytes by tool", "No tool calls in this run.", tools_chart(s, n)},
          {"measures", "Ranking measures per question set", "No ranking measures were stored with the trials.", measures_chart(s, n)}};
}

Names names_of(const Summary& s) {
  std::vector<PathConfig> configs;
  for (const auto& row : s.rows) configs.push_back(row.config);
  return short_config_names(configs);
}

// The headline with short configuration names (the full label on hover and in the legend below).
std::string headline_table(const Summary& s, const Names& names) {
  std::string out;
  if (const auto captions = baseline_captions(s); !captions.empty()) {
    out += "<p class=\"caption\" id=\"headline-baseline\">Baseline of the × baseline columns: " +
           markup_escape(fmt::format("{}", fmt::join(captions, "; "))) + ".</p>\n";
  }
  out += "<div class=\"wide\"><table id=\"headline\"><thead><tr>";
  for (const auto& c : headline_columns()) out += "<th>" + markup_escape(c) + "</th>";
  out += "</tr></thead><tbody>\n";
  const auto& columns = headline_columns();
  const auto path_column = static_cast<std::size_t>(std::find(columns.begin(), columns.end(), "path") - columns.begin());
  for (const auto& r : s.rows) {
    out += "<tr>";
    auto cells = headline_cells(r);
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i == path_column) {
        out += fmt::format("<td title=\"{}\">{}</td>", markup_escape(r.label), markup_escape(short_name(names, r.label)));
      } else {
        out += "<td>" + markup_escape(cells[i]) + "</td>";
      }
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  if (!s.priced_as_note.empty()) out += "<p>Cost: " + markup_escape(s.priced_as_note) + ".</p>\n";
  if (!s.judge_note.empty()) out += "<p>Judge: " + markup_escape(s.judge_note) + ".</p>\n";
  out += "<details id=\"legend\" open><summary>Configurations: short names and full settings</summary><table>"
         "<thead><tr><th>name</th><th>settings</th></tr></thead><tbody>\n";
  std::map<std::string, std::string> by_name;
  for (const auto& [label, name] : names) by_name.emplace(name, label);
  for (const auto& [name, label] : by_name) out += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", markup_escape(name), markup_escape(label));
  return out + "</tbody></table></details>\n";
}

// The first screen: one verdict line per agent configuration, grouped by bundle.
std::string verdict_section(const std::vector<PairedVerdict>& verdicts, const Summary& s, const Names& names) {
  std::string out = "<section id=\"verdict\">\n<h2>Verdict: each configuration against its baseline</h2>\n";
  if (s.rows.empty()) return out + "<p>No trials were stored in this run.</p>\n</section>\n";
  if (verdicts.empty()) out += "<p>No configuration has a baseline to compare with in this run.</p>\n";
  for (std::size_t i = 0; i < verdicts.size(); ++i) {
    const PairedVerdict& v = verdicts[i];
    if (i == 0 || verdicts[i - 1].bundle != v.bundle) {
      if (i > 0) out += "</ul>\n";
      out += fmt::format("<h3>{}</h3>\n<ul class=\"verdicts\">\n", markup_escape(v.bundle));
    }
    out += "<li>" + markup_escape(verdict_line(v, names)) + "</li>\n";
  }
  if (!verdicts.empty()) out += "</ul>\n";
  return out + "<p class=\"context\">" + markup_escape(std::string(kVerdictHowToRead)) + "</p>\n</section>\n";
}

std::string answer_section(const Summary& s, const Names& names) {
  if (s.rows.empty()) return "";
  std::string out = "<section id=\"answer\">\n<h2>In words</h2>\n";
  for (const auto& sentence : headline_sentences(s, names)) out += "<p>" + markup_escape(sentence) + "</p>\n";
  return out + "</section>\n";
}

// The colour class of an origin group: history:* and new:* share one each.
std::string origin_class(const std::string& group) {
  const std::string family = group.substr(0, group.find(':'));
  for (const char* known : {"system", "tools", "question", "pack", "history", "new", "framing", "output"}) {
    if (family == known) return std::string("origin-") + known;
  }
  return "origin-other";
}

// A configuration's shares as a bar (one part per group) followed by the same in words.
std::string spend_cell(const SummaryRow& row) {
  std::string bar = "<div class=\"spend-bar\">";
  std::vector<std::string> words;
  for (const auto& s : spend_shares(row.spend_by_origin)) {
    const std::string share = format_share(s.share);
    if (s.share && *s.share > 0) {
      bar += fmt::format("<span class=\"{}\" style=\"width:{:.2f}%\" title=\"{} {}\"></span>", origin_class(s.group), 100 * *s.share,
                         markup_escape(s.group), share);
    }
    words.push_back(s.group + " " + share);
  }
  return bar + "</div>" + markup_escape(fmt::format("{}", fmt::join(words, ", ")));
}

// Share of spend by origin per configuration (as report.md's table), with short names.
std::string spend_section(const Summary& s, const Names& names) {
  std::string rows;
  for (const auto& r : s.rows) {
    if (r.spend_attributed_trials == 0) continue;
    rows += fmt::format("<tr><td>{}</td><td title=\"{}\">{}</td><td>{}</td><td>{:+}</td><td class=\"spend\">{}</td></tr>\n",
                        markup_escape(r.bundle), markup_escape(r.label), markup_escape(short_name(names, r.label)),
                        r.spend_attributed_trials, r.attribution_difference, spend_cell(r));
  }
  if (rows.empty()) return "";
  return "<h2>Share of spend by origin</h2>\n<p class=\"context\">Each call's dollars split by where its tokens came from "
         "(tools = the tool schemas, pack = the packed blocks, history = earlier replies and tool results sent again, new = tool "
         "results sent the first time), summed over the configuration's finished trials; provider - okfbench is the provider's "
         "input tokens minus okfbench's count of the same requests (0 for sim).</p>\n<div class=\"wide\"><table id=\"spend\"><thead><tr>"
         "<th>bundle</th><th>configuration</th><th>trials</th><th>provider - okfbench</th><th>share of spend</th></tr></thead>"
         "<tbody>\n" + rows + "</tbody></table></div>\n";
}

// The forecast against actual (as report.md's table), with short names.
std::string forecast_section(const std::vector<ForecastCheck>& checks, const Names& names) {
  if (checks.empty()) return "";
  const auto& columns = forecast_columns();
  const auto config_column = static_cast<std::size_t>(std::find(columns.begin(), columns.end(), "configuration") - columns.begin());
  std::string out =
      "<h2>Forecast against actual</h2>\n<p class=\"context\">The forecast made when the run started (the plan run offline "
      "with sim: exact for sim, from a profile for other models) against what the stored trials spent; error = forecast / "
      "actual - 1, shown when every forecast trial is stored.</p>\n<div class=\"wide\"><table id=\"forecast\"><thead><tr>";
  for (const auto& c : columns) out += "<th>" + markup_escape(c) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& check : checks) {
    out += "<tr>";
    const auto cells = forecast_cells(check);
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i == config_column) {
        out += fmt::format("<td title=\"{}\">{}</td>", markup_escape(cells[i]), markup_escape(short_name(names, cells[i])));
      } else {
        out += "<td>" + markup_escape(cells[i]) + "</td>";
      }
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

// The trial table's controls and header; explorer.js fills the rows.
std::string trials_section() {
  std::string out =
      "<h2>Trials</h2>\n<div class=\"filters\">"
      "<input type=\"search\" id=\"trial-search\" placeholder=\"search questions, answers, errors\" aria-label=\"search\">"
      "<select id=\"filter-bundle\" aria-label=\"bundle\"><option value=\"\">every bundle</option></select>"
      "<select id=\"filter-path\" aria-label=\"path\"><option value=\"\">every path</option></select>"
      "<select id=\"filter-config\" aria-label=\"configuration\"><option value=\"\">every configuration</option></select>"
      "<select id=\"filter-grade\" aria-label=\"facts grade\"><option value=\"\">every facts grade</option></select>"
      "<select id=\"filter-error\" aria-label=\"error\"><option value=\"\">finished or failed</option></select>"
      "<span id=\"trial-count\"></span></div>\n<div class=\"wide\"><table id=\"trials\"><thead><tr>";
  const std::vector<std::pair<const char*, const char*>> columns = {
      {"bundle", "bundle"}, {"question", "question"}, {"config", "configuration"}, {"repeat", "repeat"},
      {"turns", "turns"}, {"input_tokens", "input tokens"}, {"output_tokens", "output tokens"}, {"cost", "cost"},
      {"facts", "facts"}, {"error", "error"}};
  for (const auto& [column, title] : columns) out += fmt::format("<th data-column=\"{}\" data-title=\"{}\">{}</th>", column, title, title);
  out += "</tr></thead><tbody></tbody></table></div>\n"
         "<p><button id=\"page-previous\">previous</button> <span id=\"trial-page\"></span> "
         "<button id=\"page-next\">next</button> &middot; click a trial to open its conversation</p>\n"
         "<div id=\"trial-view\" hidden></div>\n";
  return out;
}

std::string context_list(const RunManifest& m) {
  std::vector<std::string> models;
  for (const auto& e : m.models) models.push_back(e.endpoint.empty() ? e.model : e.model + " @ " + e.endpoint);
  return fmt::format(
      "<p class=\"context\">{} &middot; host {} &middot; git {} &middot; {} build &middot; spec {} (hash {}) &middot; "
      "models {} &middot; cache models {} &middot; seeds {} &middot; okfbench {} (record schema {})</p>\n",
      markup_escape(m.date), markup_escape(m.host), markup_escape(m.git_sha), markup_escape(m.build_type), markup_escape(m.spec_path),
      markup_escape(m.spec_hash), markup_escape(fmt::format("{}", fmt::join(models, ", "))),
      markup_escape(fmt::format("{}", fmt::join(m.cache_models, ", "))), markup_escape(fmt::format("{}", fmt::join(m.seeds, ", "))),
      markup_escape(m.okfbench_version), m.schema_version);
}

// Registered before the libraries load so that errors while loading them are caught too.
constexpr const char* kErrorCapture = R"((function () {
  const lists = {error: [], warning: []};
  function note(kind, message) {
    lists[kind].push(String(message));
    const el = document.getElementById(kind === 'error' ? 'okfbench-errors' : 'okfbench-warnings');
    if (el) el.textContent = lists[kind].join('\n');
  }
  window.okfbenchNote = note;
  window.addEventListener('error', function (e) { note('error', e.message); });
  window.addEventListener('unhandledrejection', function (e) { note('error', e.reason && e.reason.stack ? e.reason.stack : e.reason); });
  const consoleError = console.error, consoleWarn = console.warn;
  console.error = function () { note('error', Array.prototype.join.call(arguments, ' ')); consoleError.apply(console, arguments); };
  console.warn = function () { note('warning', Array.prototype.join.call(arguments, ' ')); consoleWarn.apply(console, arguments); };
})();)";

constexpr const char* kRender = R"((function () {
  const specs = JSON.parse(document.getElementById('okfbench-specs').textContent);
  const ids = Object.keys(specs);
  Promise.all(ids.map(function (id) {
    return vegaEmbed('#chart-' + id, specs[id], {actions: false, renderer: 'svg'});
  })).then(function () {
    document.body.setAttribute('data-charts-rendered', String(ids.length));
  }).catch(function (e) { window.okfbenchNote('error', e && e.stack ? e.stack : e); });
})();)";

}  // namespace

std::vector<std::string> html_chart_ids(const Summary& summary) {
  std::vector<std::string> ids;
  for (const auto& c : charts_of(summary, names_of(summary))) {
    if (!c.spec.is_null()) ids.push_back(c.id);
  }
  return ids;
}

std::string html_report(const RunManifest& manifest, const Summary& summary, const std::vector<TrialRecord>& records,
                        const TranscriptSet* transcripts, const PricingTable& pricing) {
  const Names names = names_of(summary);
  json specs = json::object();
  std::vector<Chart> all = charts_of(summary, names);
  // The first screen shows cost against answer score, or against evidence recall when no answer was graded.
  const bool answers_drawn = std::any_of(all.begin(), all.end(), [](const Chart& c) { return c.id == std::string_view("answers") && !c.spec.is_null(); });
  const std::string_view first_id = answers_drawn ? "answers" : "front";
  std::string first_chart, charts = "<h2>Charts</h2>\n";
  for (auto& c : all) {
    std::string& into = c.id == first_id ? first_chart : charts;
    into += fmt::format("<h3>{}</h3>\n", c.title);
    if (c.spec.is_null()) {
      into += fmt::format("<p class=\"note\">{}</p>\n", c.empty_note);
      continue;
    }
    into += fmt::format("<div class=\"chart\" id=\"chart-{}\"></div>\n", c.id);
    specs[c.id] = std::move(c.spec);
  }
  const ExplorerData explorer = explorer_data(records, transcripts, pricing, names);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>okfbench report</title>\n";
  out += "<!--\nCharts drawn with " + chart_library_versions() + ", inlined under their licences:\n\n" +
         chart_library_licenses() + "-->\n";
  out += fmt::format("<style>{}</style>\n<script>{}</script>\n", explorer_style(), kErrorCapture);
  out += "<script>\n" + chart_library_scripts() + "\n</script>\n</head>\n<body>\n";
  out += "<h1>okfbench report</h1>\n" + context_list(manifest);
  out += "<pre id=\"okfbench-errors\"></pre><pre id=\"okfbench-warnings\"></pre>\n";
  out += verdict_section(run_verdicts(records, summary, pricing), summary, names);
  out += "<section id=\"first-chart\">\n" + first_chart + "</section>\n";
  out += answer_section(summary, names);
  out += "<h2>Headline</h2>\n" + headline_table(summary, names);
  out += forecast_section(check_forecast(manifest, records, pricing), names);
  out += spend_section(summary, names);
  out += trials_section();
  out += charts;
  out += "<script type=\"application/json\" id=\"okfbench-trials\">" + json_for_html(explorer.table_json) + "</script>\n";
  // Base64 has no '<', so a chunk can never close its element.
  for (std::size_t i = 0; i < explorer.detail_chunks.size(); ++i) {
    out += fmt::format("<script type=\"application/octet-stream\" id=\"okfbench-chunk-{}\">{}</script>\n", i, explorer.detail_chunks[i]);
  }
  out += fmt::format("<script type=\"application/octet-stream\" id=\"okfbench-prompts\">{}</script>\n", explorer.prompts);
  out += "<script type=\"application/json\" id=\"okfbench-specs\">" + json_for_html(json_text(specs)) + "</script>\n";
  out += fmt::format("<script>{}</script>\n<script>{}</script>\n</body>\n</html>\n", kRender, explorer_script());
  return out;
}

}  // namespace okfbench::reports
