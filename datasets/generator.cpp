#include "datasets/generator.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <numbers>
#include <random>
#include <set>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "core/error.hpp"

namespace okfbench::datasets {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- vocabulary
// term: the catalog word used in titles; plain: the paraphrase people use.
struct Word {
  std::string_view term;
  std::string_view plain;
};

constexpr std::array kEntities = std::to_array<Word>({
    {"order", "purchase"}, {"customer", "client"}, {"invoice", "bill"},
    {"shipment", "delivery"}, {"refund", "reimbursement"}, {"subscription", "recurring plan"},
    {"payment", "charge"}, {"product", "catalog item"}, {"warehouse", "storage site"},
    {"supplier", "vendor"}, {"employee", "staff member"}, {"ticket", "support request"},
    {"session", "site visit"}, {"account", "login profile"}, {"campaign", "promotion"},
    {"cart", "shopping basket"}, {"return", "sent-back parcel"}, {"coupon", "voucher code"},
    {"review", "star rating"}, {"store", "shop"}, {"driver", "courier"},
    {"route", "delivery path"}, {"device", "handset"}, {"release", "deployment"},
    {"incident", "outage"}, {"query", "database request"}, {"pipeline", "data flow"},
    {"dashboard", "report page"}, {"contract", "signed agreement"}, {"lead", "sales prospect"},
    {"partner", "affiliate"}, {"transaction", "money transfer"}, {"ledger", "book of accounts"},
    {"budget", "spending plan"}, {"inventory", "stock on hand"}, {"price", "list amount"},
    {"tax", "levy"}, {"claim", "insurance request"}, {"appointment", "booking"},
    {"notification", "push message"}, {"signup", "registration"}, {"trial", "evaluation period"},
    {"license", "entitlement"}, {"server", "host machine"}, {"cluster", "node group"},
    {"backup", "snapshot copy"}, {"alert", "pager event"}, {"job", "scheduled task"},
    {"model", "predictor"}, {"experiment", "split test"}, {"flag", "feature toggle"},
    {"member", "enrolled user"}, {"shift", "work rota"}, {"payout", "seller disbursement"},
    {"chargeback", "disputed charge"}, {"quote", "price estimate"}, {"listing", "marketplace post"},
    {"carrier", "freight company"}, {"parcel", "package"}, {"wallet", "stored balance"},
});

struct Attribute {
  std::string_view term;
  std::string_view plain;
  std::string_view unit;  // how the threshold fact is written
  int low;
  int high;
};

constexpr std::array kAttributes = std::to_array<Attribute>({
    {"latency", "response time", "ms", 40, 900}, {"volume", "daily count", "per day", 100, 90000},
    {"backlog", "pending queue", "items", 50, 5000}, {"churn", "cancellation share", "%", 1, 15},
    {"retention", "share kept after ninety days", "%", 40, 95},
    {"conversion", "completion share", "%", 2, 60}, {"margin", "profit share", "%", 5, 70},
    {"revenue", "income earned", "k USD", 10, 900}, {"cost", "money spent", "k USD", 5, 400},
    {"error rate", "failure share", "%", 1, 9}, {"freshness", "data age", "minutes", 5, 240},
    {"throughput", "processing speed", "per minute", 100, 20000},
    {"accuracy", "correctness", "%", 80, 99}, {"coverage", "share covered", "%", 50, 99},
    {"duration", "time taken", "minutes", 2, 180}, {"growth", "month-over-month increase", "%", 1, 30},
    {"utilization", "usage level", "%", 30, 95}, {"lifetime value", "long-run worth", "USD", 20, 4000},
    {"availability", "uptime", "%", 95, 99}, {"defect rate", "fault share", "%", 1, 8},
    {"satisfaction", "happiness score", "points", 50, 95}, {"capacity", "headroom", "units", 10, 900},
    {"frequency", "how often it happens", "per week", 1, 60}, {"age", "waiting time", "hours", 1, 96},
    {"variance", "spread from plan", "%", 2, 25}, {"quota", "allowance", "per month", 10, 5000},
    {"fraud rate", "abuse share", "%", 1, 6}, {"cycle time", "turnaround", "hours", 2, 120},
    {"forecast error", "projection miss", "%", 2, 30}, {"discount depth", "markdown size", "%", 5, 60},
    {"dwell time", "seconds spent lingering on site", "seconds", 10, 900},
    {"abandonment", "drop-off share", "%", 5, 80},
});

constexpr std::array kAreas = std::to_array<std::string_view>({
    "billing", "sales", "logistics", "support", "marketing", "finance", "platform", "security",
    "growth", "fulfillment", "payroll", "analytics", "identity", "search", "mobile", "partnerships",
    "compliance", "procurement", "catalog", "pricing", "risk", "infrastructure", "reliability",
    "checkout",
});

// Entity groups give the third directory level of very large areas.
constexpr std::array kEntityGroups = std::to_array<std::string_view>(
    {"commerce", "operations", "people", "systems"});

// One top-level layer: its directory, concept type, how a question names a
// concept of this kind, and the heading that opens its body.
struct Layer {
  std::string_view dir;
  std::string_view type;
  std::string_view description;
  std::string_view first_heading;
};

constexpr std::array kLayers = std::to_array<Layer>({
    {"metrics", "Metric", "Business definitions of the numbers teams report.", "Definition"},
    {"tables", "BigQuery Table", "Warehouse tables the metrics are computed from.", "Schema"},
    {"playbooks", "Playbook", "Step-by-step responses to alerts and incidents.", "Trigger"},
    {"policies", "Policy", "Rules that govern how data and operations are handled.", "Rule"},
    {"decisions", "Decision", "Recorded decisions with their context and consequences.", "Context"},
    {"glossary", "Glossary Term", "Shared vocabulary and what each term means here.", "Meaning"},
    {"references", "Reference", "Lookup lists, code tables and external material.", "Contents"},
    {"services", "Service", "Systems that produce and serve the data.", "Overview"},
});

constexpr std::array kTeamNouns = std::to_array<std::string_view>(
    {"operations", "data", "platform", "insights", "engineering", "enablement"});

constexpr std::array kFillerVerbs = std::to_array<std::string_view>(
    {"reviews", "tracks", "reconciles", "audits", "reports", "monitors", "compares", "aggregates"});

constexpr std::array kFillerAdverbs = std::to_array<std::string_view>(
    {"weekly", "daily", "at month end", "every quarter", "before each release", "after each load"});

constexpr std::array kDescriptionTails = std::to_array<std::string_view>({
    "",
    ", refreshed from upstream sources",
    ", reviewed by the owning team every quarter",
    ", with its alert thresholds",
    ", split by region and channel",
});

// ---------------------------------------------------------------- randomness
// Distributions are written out here rather than taken from <random>, whose
// distribution algorithms differ between standard libraries: the same seed
// must give the same bundle everywhere.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(engine_() % n); }
  double unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  bool chance(double p) { return unit() < p; }
  int between(int low, int high) { return low + static_cast<int>(below(static_cast<std::size_t>(high - low + 1))); }
  // Log-normal with the given median and shape (Box-Muller for the normal).
  double log_normal(double median, double sigma) {
    const double u1 = std::max(unit(), 1e-12);
    const double u2 = unit();
    const double normal = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    return median * std::exp(sigma * normal);
  }
  // Lomax (Pareto II) draw, floored: a heavy-tailed count whose quartiles with
  // alpha 1.6 and scale 2 (0, 1, 2, p90 6) match the real bundles' out-degrees.
  std::size_t heavy_tail(double alpha, double scale, std::size_t cap) {
    const double x = scale * (std::pow(1.0 - unit(), -1.0 / alpha) - 1.0);
    return std::min(cap, static_cast<std::size_t>(x));
  }
  template <class T, std::size_t N>
  const T& pick(const std::array<T, N>& items) { return items[below(N)]; }

 private:
  std::mt19937_64 engine_;
};

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  // splitmix64 finaliser over the pair: independent streams per concept.
  std::uint64_t z = a * 0x9E3779B97F4A7C15ULL + b + 0x632BE59BD9B4E5BULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// ---------------------------------------------------------------- text helpers
std::string capitalize(std::string_view text) {
  std::string out(text);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 'a' + 'A');
  return out;
}

std::string title_case(std::string_view text) {
  std::string out(text);
  bool start = true;
  for (char& c : out) {
    if (start && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    start = (c == ' ' || c == '-');
  }
  return out;
}

std::string slug(std::string_view text) {
  std::string out;
  for (char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      out += c;
    } else if (c >= 'A' && c <= 'Z') {
      out += static_cast<char>(c - 'A' + 'a');
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

std::string plural(std::string_view noun) {
  std::string out(noun);
  if (out.ends_with("y") && !out.ends_with("ay") && !out.ends_with("ey")) {
    out.pop_back();
    return out + "ies";
  }
  if (out.ends_with("s") || out.ends_with("x") || out.ends_with("ch") || out.ends_with("sh")) return out + "es";
  return out + "s";
}

// Multi-word paraphrases pluralise their head noun: "site visit" -> "site visits",
// "book of accounts" stays as it is.
std::string plural_phrase(std::string_view phrase) {
  if (phrase.find(" of ") != std::string_view::npos || phrase.find(" on ") != std::string_view::npos) {
    return std::string(phrase);
  }
  return plural(phrase);
}

std::string yaml_quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string date_string(int day_of_year) {
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int month = 0;
  while (month < 11 && day_of_year >= kDays[static_cast<std::size_t>(month)]) {
    day_of_year -= kDays[static_cast<std::size_t>(month)];
    ++month;
  }
  return fmt::format("2026-{:02}-{:02}", month + 1, day_of_year + 1);
}

// ---------------------------------------------------------------- the plan
enum class Relation { depends_on, joins_with, runbooks, governed_by, background, terms, see_also };

constexpr std::string_view heading_of(Relation r) {
  switch (r) {
    case Relation::depends_on: return "Depends on";
    case Relation::joins_with: return "Joins with";
    case Relation::runbooks: return "Runbooks";
    case Relation::governed_by: return "Governed by";
    case Relation::background: return "Background";
    case Relation::terms: return "Terms";
    case Relation::see_also: return "See also";
  }
  return "See also";
}

enum class LinkStyle { root_relative, file_relative, inline_prose };

struct PlannedLink {
  std::size_t target = 0;  // index into the plan; ignored when broken
  Relation relation = Relation::see_also;
  LinkStyle style = LinkStyle::root_relative;
  bool broken = false;
};

enum class Trust { unverified, machine, human };
enum class Lifecycle { stable, draft, deprecated };

struct PlannedConcept {
  std::size_t layer = 0;
  std::size_t area = 0;
  std::size_t entity = 0;
  std::size_t attribute = 0;
  int duplicate = 0;  // > 0 when the topic repeats inside one directory
  std::string dir;    // "metrics/billing" (no trailing slash)
  std::string id;     // "metrics/billing/billing-invoice-latency"
  std::string title;
  std::string description;
  Lifecycle lifecycle = Lifecycle::stable;
  Trust trust = Trust::unverified;
  int day = 0;  // day of 2026 the concept was last generated
  std::vector<PlannedLink> links;
};

struct Plan {
  std::vector<PlannedConcept> concepts;
  std::vector<std::size_t> layers_used;  // indexes into kLayers
  std::size_t links = 0;
  std::size_t broken = 0;
};

std::size_t default_layers(std::size_t concepts) {
  if (concepts < 12) return std::max<std::size_t>(1, std::min<std::size_t>(3, concepts));
  if (concepts < 60) return 4;
  return 6;
}

std::string concept_title(const PlannedConcept& c) {
  const std::string area = capitalize(kAreas[c.area]);
  const std::string entity(kEntities[c.entity].term);
  const std::string attribute(kAttributes[c.attribute].term);
  std::string title;
  switch (c.layer) {
    case 0: title = fmt::format("{} {} {}", area, title_case(entity), title_case(attribute)); break;
    case 1: title = fmt::format("{} {} {} daily", area, entity, attribute); break;
    case 2: title = fmt::format("Triaging {} {} {} alerts", kAreas[c.area], entity, attribute); break;
    case 3: title = fmt::format("{} {} {} standard", area, entity, attribute); break;
    case 4: title = fmt::format("Adopt a {} budget for {} {}", attribute, kAreas[c.area], plural(entity)); break;
    case 5: title = fmt::format("{} {} ({})", title_case(entity), attribute, kAreas[c.area]); break;
    case 6: title = fmt::format("{} {} {} codes", area, entity, attribute); break;
    default: title = fmt::format("{} {} {} service", area, title_case(entity), attribute); break;
  }
  if (c.duplicate > 0) title += fmt::format(" ({})", c.duplicate + 1);
  return title;
}

std::string topic_phrase(const PlannedConcept& c) {
  return fmt::format("{} of {} {}", kAttributes[c.attribute].plain, kAreas[c.area],
                     plural_phrase(kEntities[c.entity].plain));
}

std::string concept_description(const PlannedConcept& c, Rng& rng) {
  std::string_view lead;
  switch (c.layer) {
    case 0: lead = "How we measure the"; break;
    case 1: lead = "Daily records of the"; break;
    case 2: lead = "What on-call does about the"; break;
    case 3: lead = "The rule that limits the"; break;
    case 4: lead = "Why we cap the"; break;
    case 5: lead = "What we mean by the"; break;
    case 6: lead = "Code values that classify the"; break;
    default: lead = "The system that computes the"; break;
  }
  std::string text = fmt::format("{} {}{}.", lead, topic_phrase(c), rng.pick(kDescriptionTails));
  if (c.lifecycle == Lifecycle::deprecated) text = "Deprecated. " + text;
  return text;
}

// Directories: layer, then area when the layer holds more than a dozen
// concepts, then entity group when an area would hold more than 400.
std::string concept_dir(const PlannedConcept& c, std::size_t per_layer, std::size_t per_area) {
  std::string dir(kLayers[c.layer].dir);
  if (per_layer > 12) dir += fmt::format("/{}", kAreas[c.area]);
  if (per_area > 400) dir += fmt::format("/{}", kEntityGroups[c.entity % kEntityGroups.size()]);
  return dir;
}

Relation relation_for(std::size_t source_layer, std::size_t target_layer) {
  switch (target_layer) {
    case 0: return Relation::depends_on;
    case 1: return source_layer == 1 ? Relation::joins_with : Relation::depends_on;
    case 2: return Relation::runbooks;
    case 3: return Relation::governed_by;
    case 4: return Relation::background;
    case 5: return Relation::terms;
    default: return Relation::see_also;
  }
}

void assign_topics(Plan& plan, const GeneratorOptions& options, Rng& rng) {
  const std::size_t n = options.concepts;
  const std::size_t layer_count = plan.layers_used.size();
  const std::size_t per_layer = (n + layer_count - 1) / layer_count;
  const std::size_t areas_used = std::min<std::size_t>(kAreas.size(), std::max<std::size_t>(1, per_layer / 6));
  const std::size_t per_area = (per_layer + areas_used - 1) / areas_used;
  std::map<std::string, int> seen;  // dir + topic -> count, to number repeats
  plan.concepts.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    PlannedConcept& c = plan.concepts[i];
    c.layer = plan.layers_used[i % layer_count];
    c.area = rng.below(areas_used);
    c.entity = rng.below(kEntities.size());
    c.attribute = rng.below(kAttributes.size());
    c.dir = concept_dir(c, per_layer, per_area);
    c.duplicate = seen[fmt::format("{}|{}|{}|{}", c.dir, c.area, c.entity, c.attribute)]++;
    const double status_draw = rng.unit();
    c.lifecycle = status_draw < 0.05 ? Lifecycle::deprecated : status_draw < 0.15 ? Lifecycle::draft : Lifecycle::stable;
    const double trust_draw = rng.unit();
    c.trust = trust_draw < 0.4 ? Trust::unverified : trust_draw < 0.75 ? Trust::machine : Trust::human;
    c.day = static_cast<int>(rng.below(330));
    c.title = concept_title(c);
    c.description = concept_description(c, rng);
    c.id = c.dir + "/" + slug(c.title);
  }
}

// Out-degrees are heavy-tailed; targets are chosen half by topic (the same
// topic in another layer: a playbook links to the metric it watches) and half
// by preferential attachment, which gives a power-law in-degree (Barabasi &
// Albert, "Emergence of scaling in random networks", Science 1999).
void plan_links(Plan& plan, Rng& rng) {
  const std::size_t n = plan.concepts.size();
  std::unordered_map<std::string, std::vector<std::size_t>> by_topic;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& c = plan.concepts[i];
    by_topic[fmt::format("{}|{}|{}", c.area, c.entity, c.attribute)].push_back(i);
  }
  std::vector<std::size_t> endpoints;  // each concept once, plus once per in-link
  endpoints.reserve(n * 4);
  for (std::size_t i = 0; i < n; ++i) {
    PlannedConcept& c = plan.concepts[i];
    const std::size_t degree = n > 1 ? rng.heavy_tail(1.6, 2.0, std::min<std::size_t>(40, n - 1)) : 0;
    const auto& siblings = by_topic[fmt::format("{}|{}|{}", c.area, c.entity, c.attribute)];
    std::set<std::size_t> chosen;
    for (std::size_t k = 0; k < degree; ++k) {
      PlannedLink link;
      if (rng.chance(0.02)) {
        link.broken = true;
      } else if (siblings.size() > 1 && rng.chance(0.5)) {
        link.target = siblings[rng.below(siblings.size())];
      } else if (!endpoints.empty()) {
        link.target = endpoints[rng.below(endpoints.size())];
      } else {
        link.target = rng.below(n);
      }
      if (!link.broken && (link.target == i || !chosen.insert(link.target).second)) continue;
      const double style = rng.unit();
      link.style = style < 0.7 ? LinkStyle::root_relative : style < 0.9 ? LinkStyle::file_relative : LinkStyle::inline_prose;
      link.relation = link.broken ? Relation::see_also : relation_for(c.layer, plan.concepts[link.target].layer);
      if (!link.broken) endpoints.push_back(link.target);
      plan.broken += link.broken ? 1 : 0;
      c.links.push_back(link);
    }
    plan.links += c.links.size();
    endpoints.push_back(i);
  }
}

Plan make_plan(const GeneratorOptions& options) {
  Rng rng(mix(options.seed, 0xB0D1E5ULL));
  Plan plan;
  const std::size_t layers = options.layers == 0 ? default_layers(options.concepts) : options.layers;
  for (std::size_t i = 0; i < layers; ++i) plan.layers_used.push_back(i);
  assign_topics(plan, options, rng);
  plan_links(plan, rng);
  return plan;
}

// ---------------------------------------------------------------- rendering
struct Facts {
  std::string owner;
  std::string threshold;
  std::string refresh;
};

Facts facts_of(const PlannedConcept& c, std::uint64_t seed) {
  Rng rng(mix(seed, 0xFAC7ULL + c.entity * 1000 + c.attribute + c.area * 100000 + c.layer * 7));
  const Attribute& a = kAttributes[c.attribute];
  Facts f;
  f.owner = fmt::format("{} {} team", capitalize(kAreas[c.area]), rng.pick(kTeamNouns));
  const int value = rng.between(a.low, a.high);
  f.threshold = a.unit == "%" ? fmt::format("{}%", value) : fmt::format("{} {}", value, a.unit);
  const int hours = rng.between(1, 24);
  f.refresh = hours == 1 ? std::string("every hour") : fmt::format("every {} hours", hours);
  return f;
}

std::string link_href(const Plan& plan, const PlannedConcept& from, const PlannedLink& link) {
  if (link.broken) {
    return fmt::format("/{}/{}-draft.md", from.dir, slug(kEntities[from.entity].term));
  }
  const PlannedConcept& to = plan.concepts[link.target];
  if (link.style == LinkStyle::file_relative) {
    const fs::path rel = fs::path(to.id + ".md").lexically_relative(fs::path(from.dir));
    const std::string text = rel.generic_string();
    return text.starts_with("..") ? text : "./" + text;
  }
  return "/" + to.id + ".md";
}

std::string link_text(const Plan& plan, const PlannedConcept& from, const PlannedLink& link) {
  if (link.broken) return fmt::format("{} notes (not yet written)", capitalize(kEntities[from.entity].term));
  return plan.concepts[link.target].title;
}

std::string filler_sentence(const PlannedConcept& c, Rng& rng) {
  const Word& other = rng.pick(kEntities);
  const Attribute& attribute = rng.pick(kAttributes);
  switch (rng.below(5)) {
    case 0:
      return fmt::format("The {} group {} the {} of {} {} against the {} of {}.", kAreas[c.area],
                         rng.pick(kFillerVerbs), kAttributes[c.attribute].plain,
                         plural_phrase(kEntities[c.entity].plain), rng.pick(kFillerAdverbs), attribute.plain,
                         plural_phrase(other.plain));
    case 1:
      return fmt::format("Changes in {} {} usually show up here first, because {} {} feed the same {}.",
                         other.term, attribute.term, plural(kEntities[c.entity].term),
                         rng.pick(kFillerAdverbs), kAttributes[c.attribute].term);
    case 2:
      return fmt::format("When the numbers disagree with the {} report, check the {} {} before escalating.",
                         rng.pick(kAreas), other.term, attribute.term);
    case 3:
      return fmt::format("Analysts in {} use it to explain swings in {} and to plan {} capacity.",
                         rng.pick(kAreas), attribute.plain, other.plain);
    default:
      return fmt::format("Figures are split by region and channel, and totals are restated {} when late {} arrive.",
                         rng.pick(kFillerAdverbs), plural_phrase(other.plain));
  }
}

// Two to five tags, four in the median, as in the real bundles.
std::string render_tags(const PlannedConcept& c, Rng& rng) {
  static constexpr std::array kExtraTags = std::to_array<std::string_view>({"kpi", "finance", "oncall", "pii", "weekly-review"});
  std::vector<std::string> tags;
  if (!rng.chance(0.15)) tags.emplace_back(kAreas[c.area]);
  tags.push_back(slug(kEntities[c.entity].term));
  tags.push_back(slug(kAttributes[c.attribute].term));
  if (rng.chance(0.65)) tags.push_back(slug(kLayers[c.layer].type));
  if (rng.chance(0.3)) tags.emplace_back(rng.pick(kExtraTags));
  return fmt::format("tags: [{}]\n", fmt::join(tags, ", "));
}

std::string render_frontmatter(const PlannedConcept& c, bool has_source, Rng& rng) {
  const std::string date = date_string(c.day);
  std::string fm = "---\n";
  fm += fmt::format("type: {}\n", kLayers[c.layer].type);
  fm += fmt::format("title: {}\n", yaml_quote(c.title));
  fm += fmt::format("description: {}\n", yaml_quote(c.description));
  fm += render_tags(c, rng);
  if (c.layer == 1) {
    fm += fmt::format("resource: bq://acme-warehouse/{}/{}_{}\n", kAreas[c.area], slug(kEntities[c.entity].term),
                      slug(kAttributes[c.attribute].term));
  }
  fm += fmt::format("generated: {{ by: catalog_agent/sim-1, at: {}T08:00:00Z }}\n", date);
  if (c.trust == Trust::machine) {
    fm += fmt::format("verified:\n  - {{ by: process:{}-nightly, at: {}T02:00:00Z }}\n", kAreas[c.area], date);
  } else if (c.trust == Trust::human) {
    fm += fmt::format("verified:\n  - {{ by: human:{}-lead, at: {}T09:00:00Z }}\n", kAreas[c.area], date);
  }
  if (c.lifecycle != Lifecycle::stable) {
    fm += fmt::format("status: {}\n", c.lifecycle == Lifecycle::draft ? "draft" : "deprecated");
  }
  if (c.trust != Trust::unverified) fm += "stale_after: 2027-06-30T00:00:00Z\n";
  if (has_source) {
    fm += fmt::format("sources:\n  - id: {}-handbook\n    resource: https://handbook.example/{}/{}\n"
                      "    title: {} handbook\n",
                      kAreas[c.area], kAreas[c.area], slug(kEntities[c.entity].term), capitalize(kAreas[c.area]));
  }
  return fm + "---\n";
}

std::string render_facts(const PlannedConcept& c, const Facts& f, bool has_source) {
  std::string out = "# Details\n\n";
  out += fmt::format("- **Owner:** {}\n", f.owner);
  out += fmt::format("- **Alert threshold:** {}\n", f.threshold);
  out += fmt::format("- **Refresh:** {}\n", f.refresh);
  if (has_source) out += fmt::format("- **Source:** the {} handbook[^{}-handbook]\n", kAreas[c.area], kAreas[c.area]);
  return out + "\n";
}

std::string render_opening(const Plan& plan, const PlannedConcept& c, Rng& rng) {
  std::string out = fmt::format("# {}\n\n", kLayers[c.layer].first_heading);
  out += fmt::format("This {} covers the {}. ", kLayers[c.layer].type == "Metric" ? "metric" : "page", topic_phrase(c));
  out += filler_sentence(c, rng) + " ";
  for (const PlannedLink& link : c.links) {
    if (link.style != LinkStyle::inline_prose) continue;
    out += fmt::format("It is read together with [{}]({}). ", link_text(plan, c, link), link_href(plan, c, link));
  }
  out += "\n\n";
  if (c.layer == 1) {
    const std::string e = slug(kEntities[c.entity].term);
    const std::string a = slug(kAttributes[c.attribute].term);
    out += "| Column | Type | Description |\n|---|---|---|\n";
    out += fmt::format("| `{}_id` | STRING | One row per {}. |\n", e, kEntities[c.entity].plain);
    out += fmt::format("| `{}_value` | NUMERIC | The {}. |\n", a, kAttributes[c.attribute].plain);
    out += "| `region` | STRING | Sales region code. |\n| `updated_at` | TIMESTAMP | Load time. |\n\n";
  }
  return out;
}

std::string render_example(const PlannedConcept& c) {
  const std::string e = slug(kEntities[c.entity].term);
  const std::string a = slug(kAttributes[c.attribute].term);
  // A link inside a code block is not an edge; real bundles have them.
  return fmt::format("# Examples\n\n```sql\n-- see [the table](/tables/{0}.md)\nSELECT region, AVG({1}_value)\n"
                     "FROM `acme-warehouse.{2}.{0}_{1}`\nGROUP BY region;\n```\n\n",
                     e, a, kAreas[c.area]);
}

std::string render_links(const Plan& plan, const PlannedConcept& c) {
  std::string out;
  for (Relation r : {Relation::depends_on, Relation::joins_with, Relation::runbooks, Relation::governed_by,
                     Relation::background, Relation::terms, Relation::see_also}) {
    std::string items;
    for (const PlannedLink& link : c.links) {
      if (link.relation != r || link.style == LinkStyle::inline_prose) continue;
      items += fmt::format("* [{}]({})\n", link_text(plan, c, link), link_href(plan, c, link));
    }
    if (!items.empty()) out += fmt::format("# {}\n\n{}\n", heading_of(r), items);
  }
  return out;
}

// Body length follows the real bundles: log-normal around their median of
// 1,867 bytes (p25 1,064, p90 3,718), clamped to what they span.
std::string render_concept(const Plan& plan, std::size_t index, std::uint64_t seed) {
  const PlannedConcept& c = plan.concepts[index];
  Rng rng(mix(seed, index + 1));
  const bool has_source = rng.chance(0.3);
  const std::size_t target = static_cast<std::size_t>(std::clamp(rng.log_normal(1700.0, 0.6), 420.0, 9500.0));
  const Facts facts = facts_of(c, seed);
  std::string head = render_frontmatter(c, has_source, rng);
  std::string body = render_opening(plan, c, rng);
  body += render_facts(c, facts, has_source);
  std::string tail = render_links(plan, c);
  if (rng.chance(0.25)) tail = render_example(c) + tail;
  if (has_source) tail += fmt::format("[^{0}-handbook]: {1} handbook\n", kAreas[c.area], capitalize(kAreas[c.area]));
  while (body.size() + tail.size() < target) {
    std::string paragraph;
    for (int s = rng.between(2, 4); s > 0; --s) paragraph += filler_sentence(c, rng) + " ";
    paragraph.back() = '\n';
    body += paragraph + "\n";
  }
  return head + "\n" + body + tail;
}

// ---------------------------------------------------------------- index and log
struct Directory {
  std::set<std::string> subdirs;
  std::vector<std::size_t> concepts;
};

std::map<std::string, Directory> directories_of(const Plan& plan) {
  std::map<std::string, Directory> dirs;
  dirs[""];
  for (std::size_t i = 0; i < plan.concepts.size(); ++i) {
    const std::string& dir = plan.concepts[i].dir;
    dirs[dir].concepts.push_back(i);
    std::string child = dir;
    while (!child.empty()) {
      const auto slash = child.rfind('/');
      const std::string parent = slash == std::string::npos ? "" : child.substr(0, slash);
      dirs[parent].subdirs.insert(child.substr(slash == std::string::npos ? 0 : slash + 1));
      child = parent;
    }
  }
  return dirs;
}

std::string subdir_description(const std::string& dir, const std::string& name) {
  if (dir.empty()) {
    for (const Layer& layer : kLayers) {
      if (layer.dir == name) return std::string(layer.description);
    }
  }
  return fmt::format("Concepts of the {} group.", name);
}

std::string render_index(const Plan& plan, const std::string& dir, const Directory& d) {
  std::string out;
  if (dir.empty()) out += "---\nokf_version: \"0.2\"\n---\n\n";
  if (!d.subdirs.empty()) {
    out += "# Subdirectories\n\n";
    for (const std::string& sub : d.subdirs) {
      out += fmt::format("* [{}]({}/index.md) - {}\n", sub, sub, subdir_description(dir, sub));
    }
    out += "\n";
  }
  std::map<std::string_view, std::string> by_type;
  for (std::size_t i : d.concepts) {
    const PlannedConcept& c = plan.concepts[i];
    const std::string file = c.id.substr(c.id.rfind('/') + 1) + ".md";
    by_type[kLayers[c.layer].type] += fmt::format("* [{}]({}) - {}\n", c.title, file, c.description);
  }
  for (const auto& [type, items] : by_type) out += fmt::format("# {}\n\n{}\n", type, items);
  return out;
}

std::string_view log_kind(const PlannedConcept& c) {
  if (c.lifecycle == Lifecycle::deprecated) return "Deprecated";
  if (c.trust == Trust::human) return "Verified";
  return c.day % 3 == 0 ? "Update" : "Added";
}

// Newest first, grouped by date, at most `cap` entries (real logs are short).
std::string render_log(const Plan& plan, const std::vector<std::size_t>& members, std::string_view title,
                       std::size_t cap) {
  std::vector<std::size_t> chosen(members.begin(), members.begin() + static_cast<std::ptrdiff_t>(std::min(cap, members.size())));
  std::stable_sort(chosen.begin(), chosen.end(), [&](std::size_t a, std::size_t b) {
    return plan.concepts[a].day > plan.concepts[b].day;
  });
  std::string out = fmt::format("# {}\n", title);
  int current = -1;
  for (std::size_t i : chosen) {
    const PlannedConcept& c = plan.concepts[i];
    if (c.day != current) {
      current = c.day;
      out += fmt::format("\n## {}\n\n", date_string(c.day));
    }
    out += fmt::format("* **{}**: [{}](/{}.md) - {}\n", log_kind(c), c.title, c.id, c.description);
  }
  return out;
}

// ---------------------------------------------------------------- questions
std::string_view question_noun(std::size_t layer) {
  switch (layer) {
    case 0: return "measure";
    case 1: return "dataset";
    case 2: return "runbook";
    case 3: return "rule";
    case 4: return "decision";
    case 5: return "term";
    case 6: return "lookup list";
    default: return "system";
  }
}

std::string question_text(const PlannedConcept& c, bool multi_hop, Rng& rng) {
  const std::string topic = topic_phrase(c);
  std::string text;
  switch (c.layer) {
    case 0: text = fmt::format("How do we measure the {}, and what level should raise an alert?", topic); break;
    case 1: text = fmt::format("Which dataset holds the {}, and how often is it reloaded?", topic); break;
    case 2: text = fmt::format("What should on-call do when the {} looks wrong?", topic); break;
    case 3: text = fmt::format("What rule limits the {}, and who owns it?", topic); break;
    case 4: text = fmt::format("Why was a cap put on the {}?", topic); break;
    case 5: text = fmt::format("What do we mean by the {} here?", topic); break;
    case 6: text = fmt::format("Where are the codes that classify the {} listed?", topic); break;
    default: text = fmt::format("Which system computes the {}, and who runs it?", topic); break;
  }
  if (multi_hop) {
    text.pop_back();
    text += rng.chance(0.5) ? fmt::format(", and what does that {} depend on?", question_noun(c.layer))
                            : ", and which upstream numbers feed it?";
  }
  return text;
}

// What a correct answer to question_text() must state, from the concept's
// "# Details" list: the level for a metric or a cap, the reload schedule for a
// dataset, the owner for a system, both level and owner otherwise.
std::vector<std::string> answer_facts(std::size_t layer, const Facts& f) {
  switch (layer) {
    case 0: return {f.threshold};
    case 1: return {f.refresh};
    case 4: return {f.threshold};
    case 7: return {f.owner};
    default: return {f.threshold, f.owner};
  }
}

std::vector<GeneratedQuestion> make_questions(const Plan& plan, const GeneratorOptions& options) {
  const std::size_t wanted = options.questions == 0 ? std::min<std::size_t>(options.concepts, 20) : options.questions;
  Rng rng(mix(options.seed, 0x0E5710ULL));
  std::vector<std::size_t> order(plan.concepts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  // A question must have one answer: skip concepts whose topic and kind repeat.
  std::map<std::string, int> topic_count;
  for (const auto& c : plan.concepts) ++topic_count[fmt::format("{}|{}|{}|{}", c.layer, c.area, c.entity, c.attribute)];
  std::vector<GeneratedQuestion> out;
  for (std::size_t i : order) {
    if (out.size() >= wanted) break;
    const PlannedConcept& c = plan.concepts[i];
    if (c.lifecycle == Lifecycle::deprecated) continue;
    if (topic_count[fmt::format("{}|{}|{}|{}", c.layer, c.area, c.entity, c.attribute)] > 1) continue;
    std::vector<std::string> depends;
    for (const PlannedLink& link : c.links) {
      if (!link.broken && link.relation == Relation::depends_on && link.style != LinkStyle::inline_prose) {
        depends.push_back(plan.concepts[link.target].id);
      }
    }
    const bool multi_hop = !depends.empty() && depends.size() <= 3 && rng.chance(0.5);
    GeneratedQuestion q;
    q.id = fmt::format("q{:03}", out.size() + 1);
    q.text = question_text(c, multi_hop, rng);
    q.relevant.emplace_back(c.id, 2);
    if (multi_hop) {
      for (const std::string& d : depends) q.relevant.emplace_back(d, 1);
    }
    q.answer_facts = answer_facts(c.layer, facts_of(c, options.seed));
    out.push_back(std::move(q));
  }
  return out;
}

// ---------------------------------------------------------------- writing
void write_text(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  file.close();
  if (!file) throw InputError(fmt::format("cannot write {}: check that the disk has space and the folder is writable", path.string()));
}

// Runs body(i) for i in [0, n) on `threads` workers; the first exception is rethrown.
template <class Body>
void parallel_for(std::size_t n, unsigned threads, Body body) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        body(i);
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = n;
      }
    }
  };
  std::vector<std::jthread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  pool.clear();
  if (failure) std::rethrow_exception(failure);
}

void check_output_dir(const fs::path& out) {
  std::error_code ec;
  if (fs::exists(out, ec)) {
    if (!fs::is_directory(out, ec)) throw InputError(fmt::format("{} exists and is not a directory: pass a new folder to --out", out.string()));
    if (!fs::is_empty(out, ec)) throw InputError(fmt::format("{} is not empty: pass a new or empty folder to --out so generated files do not mix with others", out.string()));
  }
  fs::create_directories(out, ec);
  if (ec) throw InputError(fmt::format("cannot create {}: {}", out.string(), ec.message()));
}

}  // namespace

GenerationSummary generate_bundle(const GeneratorOptions& options, const fs::path& out) {
  if (options.concepts < 1 || options.concepts > 10'000'000) {
    throw UsageError(fmt::format("--concepts must be between 1 and 10000000 (got {})", options.concepts));
  }
  if (options.layers > kLayers.size()) {
    throw UsageError(fmt::format("--layers must be between 1 and {} (got {})", kLayers.size(), options.layers));
  }
  check_output_dir(out);
  const Plan plan = make_plan(options);
  const auto dirs = directories_of(plan);
  for (const auto& [dir, d] : dirs) {
    std::error_code ec;
    fs::create_directories(out / dir, ec);
    if (ec) throw InputError(fmt::format("cannot create {}: {}", (out / dir).string(), ec.message()));
  }
  const unsigned threads = options.threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : options.threads;
  std::atomic<std::uintmax_t> bytes{0};
  parallel_for(plan.concepts.size(), threads, [&](std::size_t i) {
    const std::string text = render_concept(plan, i, options.seed);
    write_text(out / (plan.concepts[i].id + ".md"), text);
    bytes += text.size();
  });
  GenerationSummary summary;
  for (const auto& [dir, d] : dirs) {
    const std::string text = render_index(plan, dir, d);
    write_text(out / dir / "index.md", text);
    bytes += text.size();
  }
  std::vector<std::size_t> all(plan.concepts.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::string log = render_log(plan, all, "Bundle history", 300);
  write_text(out / "log.md", log);
  bytes += log.size();
  std::size_t logs = 1;
  for (std::size_t layer : plan.layers_used) {
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < plan.concepts.size(); ++i) {
      if (plan.concepts[i].layer == layer) members.push_back(i);
    }
    if (members.empty()) continue;
    log = render_log(plan, members, fmt::format("{} history", capitalize(kLayers[layer].dir)), 60);
    write_text(out / std::string(kLayers[layer].dir) / "log.md", log);
    bytes += log.size();
    ++logs;
  }
  summary.concepts = plan.concepts.size();
  summary.links = plan.links;
  summary.broken_links = plan.broken;
  summary.directories = dirs.size();
  summary.files = plan.concepts.size() + dirs.size() + logs;
  summary.bytes = bytes;
  summary.questions = make_questions(plan, options);
  return summary;
}

std::string questions_to_yaml(const std::vector<GeneratedQuestion>& questions, const GeneratorOptions& options) {
  std::string out = fmt::format(
      "# okfbench question set for a generated bundle (okfbench gen --concepts {} --seed {}{}).\n"
      "# relevant: grade 2 answers the question; grade 1 is what the answer depends on.\n"
      "questions:\n",
      options.concepts, options.seed, options.layers ? fmt::format(" --layers {}", options.layers) : "");
  for (const GeneratedQuestion& q : questions) {
    out += fmt::format("  - id: {}\n    text: {}\n    relevant: {{", q.id, yaml_quote(q.text));
    for (std::size_t i = 0; i < q.relevant.size(); ++i) {
      out += fmt::format("{}{}: {}", i ? ", " : "", yaml_quote(q.relevant[i].first), q.relevant[i].second);
    }
    out += "}\n    answer_facts: [";
    for (std::size_t i = 0; i < q.answer_facts.size(); ++i) out += (i ? ", " : "") + yaml_quote(q.answer_facts[i]);
    out += "]\n";
  }
  return out;
}

}  // namespace okfbench::datasets
