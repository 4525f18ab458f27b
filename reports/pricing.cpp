#include "reports/pricing.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/yaml_keys.hpp"

namespace okfbench::reports {

namespace {

std::string where(const std::filesystem::path& path, const YAML::Node& node) {
  return fmt::format("{}:{}", path.string(), node.Mark().line + 1);
}

template <typename T>
T field(const std::filesystem::path& path, const YAML::Node& row, const char* key) {
  YAML::Node value = row[key];
  if (!value) throw InputError(fmt::format("{}: pricing row lacks '{}'; every row needs model, input, "
                                           "cached_input, cache_write, output, source and as_of",
                                           where(path, row), key));
  try {
    return value.as<T>();
  } catch (const YAML::Exception&) {
    throw InputError(fmt::format("{}: field '{}' has the wrong type", where(path, value), key));
  }
}

// Dollars per million tokens: finite (yaml-cpp reads .nan and .inf, which
// would make every cost NaN or infinite) and not negative.
double price(const std::filesystem::path& path, const YAML::Node& row, const char* key) {
  constexpr RealRange dollars{0, 1'000'000};
  const std::string text = field<std::string>(path, row, key);
  const Parsed<double> parsed = parse_real(text, dollars);
  if (!parsed.value) {
    throw InputError(fmt::format("{}: price '{}' of '{}': {}", where(path, row[key]), key, row["model"].Scalar(), parsed.problem));
  }
  return *parsed.value;
}

ModelPrice read_row(const std::filesystem::path& path, const YAML::Node& row) {
  ModelPrice p;
  p.model = field<std::string>(path, row, "model");
  p.input = price(path, row, "input");
  p.cached_input = price(path, row, "cached_input");
  p.cache_write = price(path, row, "cache_write");
  p.output = price(path, row, "output");
  p.source = field<std::string>(path, row, "source");
  p.as_of = field<std::string>(path, row, "as_of");
  return p;
}

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

// "-YYYY-MM-DD" or "-YYYYMMDD": a provider's dated snapshot of a model.
bool is_date_suffix(std::string_view suffix) {
  if (suffix.size() == 9) return suffix[0] == '-' && all_digits(suffix.substr(1));
  return suffix.size() == 11 && suffix[0] == '-' && all_digits(suffix.substr(1, 4)) && suffix[5] == '-' &&
         all_digits(suffix.substr(6, 2)) && suffix[8] == '-' && all_digits(suffix.substr(9, 2));
}

// One model call (or a sum of calls, since prices are linear) in dollars.
double call_dollars(const ModelPrice& price, double input, double cached, double written, double output) {
  double uncached = input - cached - written;
  if (uncached < 0) uncached = 0;  // a provider that double-reports; never price negative input
  return (uncached * price.input + cached * price.cached_input + written * price.cache_write + output * price.output) / 1e6;
}

}  // namespace

PricingTable PricingTable::load(const std::filesystem::path& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path.string());
  } catch (const YAML::BadFile&) {
    throw InputError(fmt::format("{}: cannot read the pricing table", path.string()));
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}: invalid YAML: {}", path.string(), e.mark.line + 1, e.msg));
  }
  if (const auto repeated = find_duplicate_keys(root); !repeated.empty()) {
    throw InputError(describe_duplicate_keys(repeated, path.string()));  // a row's price would be ambiguous
  }
  if (!root["models"] || !root["models"].IsSequence()) {
    throw InputError(fmt::format("{}: expected a 'models' list of price rows", path.string()));
  }
  PricingTable table;
  for (const auto& row : root["models"]) table.rows_.push_back(read_row(path, row));
  if (root["aliases"]) {
    for (const auto& entry : root["aliases"]) {
      PricingAlias alias{entry.first.as<std::string>(), entry.second.as<std::string>()};
      if (!table.find_row(alias.priced_as)) {
        throw InputError(fmt::format("{}: alias '{}' names '{}', which has no price row", where(path, entry.second),
                                     alias.model, alias.priced_as));
      }
      table.aliases_.push_back(alias);
    }
  }
  return table;
}

void PricingTable::set_price(const std::string& model, const ModelPrice& price) {
  for (auto& entry : exact_) {
    if (entry.model == model) {
      entry.price = price;
      return;
    }
  }
  exact_.push_back({model, price});
}

const ModelPrice* PricingTable::find_row(std::string_view model) const {
  for (const auto& row : rows_) {
    if (row.model == model) return &row;
  }
  for (const auto& row : rows_) {
    if (model.starts_with(row.model) && is_date_suffix(model.substr(row.model.size()))) return &row;
  }
  return nullptr;
}

const ModelPrice* PricingTable::find(std::string_view model) const {
  for (const auto& entry : exact_) {
    if (entry.model == model) return &entry.price;
  }
  const std::string_view name = provider_model_id(model);
  for (const auto& alias : aliases_) {
    if (alias.model == name) return find_row(alias.priced_as);
  }
  return find_row(name);
}

std::string_view provider_model_id(std::string_view model) {
  for (std::string_view provider : {"openai:", "anthropic:"}) {
    if (model.starts_with(provider)) model.remove_prefix(provider.size());
  }
  if (const auto slash = model.rfind('/'); slash != std::string_view::npos) model.remove_prefix(slash + 1);
  return model;
}

PricingTable with_recorded_prices(PricingTable table, const std::vector<PricedModel>& recorded) {
  for (const auto& entry : recorded) table.set_price(entry.model, entry.price);
  return table;
}

std::vector<std::string> repriced_models(const PricingTable& table, const std::vector<PricedModel>& recorded) {
  std::vector<std::string> out;
  for (const auto& entry : recorded) {
    const ModelPrice* now = table.find(entry.model);
    const bool same = now && now->input == entry.price.input && now->cached_input == entry.price.cached_input &&
                      now->cache_write == entry.price.cache_write && now->output == entry.price.output;
    if (!same) out.push_back(entry.model);
  }
  return out;
}

TrialCost trial_cost(const TrialRecord& record, const PricingTable& pricing) {
  TrialCost cost;
  const ModelPrice* price = pricing.find(record.config.model);
  if (!price) return cost;
  if (record.turns.empty() && !record.error.empty()) {
    cost.dollars = 0.0;  // no call completed: providers do not bill a request that failed
    return cost;
  }
  if (record.turns.empty()) {
    // A context trial that sent its pack to no model: priced as the one call
    // that would send it, so one-shot and agent paths stay comparable.
    if (record.context_tokens) cost.dollars = static_cast<double>(*record.context_tokens) * price->input / 1e6;
    return cost;
  }
  // OpenAI never reports cache writes and does not charge for them, so an
  // unknown write count only matters when writes cost extra.
  bool writes_cost_extra = price->cache_write != price->input;
  double total = 0.0;
  for (const auto& turn : record.turns) {
    if (!turn.input_tokens || !turn.output_tokens) return TrialCost{};
    if (!turn.cached_tokens || (writes_cost_extra && !turn.cache_write_tokens)) ++cost.turns_cache_unknown;
    total += call_dollars(*price, static_cast<double>(*turn.input_tokens),
                          static_cast<double>(turn.cached_tokens.value_or(0)),
                          static_cast<double>(turn.cache_write_tokens.value_or(0)),
                          static_cast<double>(*turn.output_tokens));
  }
  cost.dollars = total;
  return cost;
}

std::optional<double> judge_cost(const JudgeUsage& usage, const PricingTable& pricing) {
  const ModelPrice* price = pricing.find(usage.model);
  if (!price || !usage.input_tokens || !usage.output_tokens) return std::nullopt;
  return call_dollars(*price, static_cast<double>(*usage.input_tokens),
                      static_cast<double>(usage.cached_tokens.value_or(0)),
                      static_cast<double>(usage.cache_write_tokens.value_or(0)),
                      static_cast<double>(*usage.output_tokens));
}

}  // namespace okfbench::reports
