// okfbench calibrate: fit a sim behaviour profile to a real model's recordings.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>

#include "agents/sim_profile_file.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_text.hpp"
#include "engine/bundle_source.hpp"
#include "engine/selection_flags.hpp"
#include "engine/calibrate.hpp"
#include "engine/limits.hpp"
#include "engine/number_option.hpp"
#include "engine/spec.hpp"
#include "retrieval/tokens.hpp"

namespace okfbench::cli {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

struct CalibrateArgs {
  std::vector<std::string> recordings;
  std::string out;
  std::string model;
  std::vector<std::string> bundles;
  std::string profile = "okf";
  std::string check_with;
  double holdout = 0.2;
  std::uint64_t seed = 1;
  bool json = false;
};

// Every conversation whose place in a stable order by question lands on a
// multiple of 1/share is held out; share 0 holds none out.
// The same rule splits context answers, so a question is held out on both paths.
template <typename Recorded>
void split(const std::vector<Recorded>& all, double share, std::vector<Recorded>& fit, std::vector<Recorded>& check) {
  std::vector<const Recorded*> order;
  for (const auto& r : all) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return stable_hash(a->question) < stable_hash(b->question);
  });
  for (std::size_t i = 0; i < order.size(); ++i) {
    const bool held = std::floor(static_cast<double>(i + 1) * share) > std::floor(static_cast<double>(i) * share);
    (held ? check : fit).push_back(*order[i]);
  }
}

std::string number(double v) { return std::isnan(v) ? "-" : fmt::format("{:.2f}", v); }
std::string percent(std::int64_t sim, std::int64_t real) {
  return real == 0 ? "-" : fmt::format("{:+.1f}%", 100.0 * static_cast<double>(sim - real) / static_cast<double>(real));
}

void print_overheads(const char* name, const engine::OverheadFit& fit, const char* calls) {
  const auto& o = fit.overheads;
  std::printf("\n%s from %zu call(s)%s, provider-reported input against okfbench's o200k_base count:\n"
              "  per_message %d, per_tool_call %d, reply_priming %d, per_tool %d, tools_end %d, content_ratio %.4f\n"
              "  mean |error| per call: %.1f%% with the default overheads, %.1f%% with the fitted ones\n",
              name, fit.samples, calls, o.per_message, o.per_tool_call, o.reply_priming, o.per_tool, o.tools_end,
              o.content_ratio, 100 * fit.mean_abs_error_default, 100 * fit.mean_abs_error_fitted);
}

void print_text(const engine::Fit& fit, const std::vector<engine::CheckRow>& rows, const engine::Recordings& rec,
                std::size_t fit_size, bool in_sample, const std::string& out, const std::string& check_with) {
  std::printf("fitted on %zu conversation(s) (%zu model calls in all) from %zu cassette(s); wrote %s\n\n", fit_size,
              rec.samples.size(), rec.files, out.c_str());
  const char* check = in_sample ? "fit set" : "held out";
  std::printf("%-32s  %9s  %9s  %12s  %12s\n", "parameter", "observed", "fitted", fmt::format("real, {}", check).c_str(),
              fmt::format("sim, {}", check).c_str());
  for (const auto& p : fit.parameters) {
    std::printf("%-32s  %9s  %9s  %12s  %12s\n", p.name.c_str(), number(p.observed).c_str(), number(p.fitted).c_str(),
                p.check_real ? number(*p.check_real).c_str() : "-", p.check_sim ? number(*p.check_sim).c_str() : "-");
  }
  print_overheads("token overheads", fit.overheads,
                  fit.context_overheads ? " with tools" : "");
  if (fit.context_overheads) print_overheads("context_overheads", *fit.context_overheads, " without tools (context path)");
  if (rows.empty()) {
    std::printf("\nno check: pass --bundle PATH (the bundle the recordings were made on) to replay questions with the fitted sim\n");
    return;
  }
  std::printf("\ncheck (%s): %zu question(s) replayed with %s\n", check, rows.size(),
              check_with.empty() ? "the fitted sim" : ("the sim of " + check_with).c_str());
  std::printf("%-44s  %21s  %11s  %17s\n", "question", "input real/sim", "calls", "output real/sim");
  std::int64_t ri = 0, si = 0, rc = 0, sc = 0, ro = 0, so = 0;
  for (const auto& r : rows) {
    const std::string q = r.question.size() > 44 ? r.question.substr(0, 41) + "..." : r.question;
    std::printf("%-44s  %8lld/%-8lld %+6.0f%%  %4lld/%-4lld  %7lld/%-7lld\n", q.c_str(), (long long)r.real_input,
                (long long)r.sim_input,
                r.real_input ? 100.0 * double(r.sim_input - r.real_input) / double(r.real_input) : 0.0,
                (long long)r.real_calls, (long long)r.sim_calls, (long long)r.real_output, (long long)r.sim_output);
    ri += r.real_input, si += r.sim_input, rc += r.real_calls, sc += r.sim_calls, ro += r.real_output, so += r.sim_output;
  }
  std::printf("total: input %lld real, %lld sim (%s); calls %lld, %lld (%s); output %lld, %lld (%s)\n", (long long)ri,
              (long long)si, percent(si, ri).c_str(), (long long)rc, (long long)sc, percent(sc, rc).c_str(), (long long)ro,
              (long long)so, percent(so, ro).c_str());
}

json overheads_json(const engine::OverheadFit& fit) {
  const auto& o = fit.overheads;
  return {{"per_message", o.per_message}, {"per_tool_call", o.per_tool_call}, {"reply_priming", o.reply_priming},
          {"per_tool", o.per_tool},       {"tools_end", o.tools_end},         {"content_ratio", o.content_ratio},
          {"samples", fit.samples},       {"mean_abs_error_default", fit.mean_abs_error_default},
          {"mean_abs_error_fitted", fit.mean_abs_error_fitted}};
}

json to_json(const engine::Fit& fit, const std::vector<engine::CheckRow>& rows, bool in_sample, const std::string& out,
             const std::string& check_with) {
  json params = json::array();
  auto num = [](double v) { return std::isnan(v) ? json(nullptr) : json(v); };
  for (const auto& p : fit.parameters) {
    params.push_back({{"name", p.name}, {"observed", num(p.observed)}, {"fitted", num(p.fitted)},
                      {"check_real", p.check_real ? json(*p.check_real) : json(nullptr)},
                      {"check_sim", p.check_sim ? json(*p.check_sim) : json(nullptr)}});
  }
  json check = json::array();
  json total = {{"real_input", 0}, {"sim_input", 0}, {"real_calls", 0}, {"sim_calls", 0}, {"real_output", 0}, {"sim_output", 0}};
  for (const auto& r : rows) {
    check.push_back({{"question", r.question}, {"bundle", r.bundle}, {"real_input", r.real_input}, {"sim_input", r.sim_input},
                     {"real_calls", r.real_calls}, {"sim_calls", r.sim_calls}, {"real_output", r.real_output},
                     {"sim_output", r.sim_output}});
    for (const char* k : {"real_input", "sim_input", "real_calls", "sim_calls", "real_output", "sim_output"})
      total[k] = total[k].get<std::int64_t>() + check.back()[k].get<std::int64_t>();
  }
  return {{"profile", out},
          {"parameters", params},
          {"overheads", overheads_json(fit.overheads)},
          {"context_overheads", fit.context_overheads ? overheads_json(*fit.context_overheads) : json(nullptr)},
          {"check", {{"set", in_sample ? "fit" : "held_out"},
                     {"profile", check_with.empty() ? json(out) : json(check_with)},
                     {"questions", check},
                     {"total", total}}}};
}

int calibrate(const CalibrateArgs& a) {
  std::vector<fs::path> paths(a.recordings.begin(), a.recordings.end());
  const engine::Recordings rec = engine::read_recordings(paths, a.model);
  if (rec.conversations.empty()) {
    throw InputError(fmt::format("no agent conversation in the recordings{}: record an agent path with okfbench run --record DIR",
                                 a.model.empty() ? "" : " of model " + a.model));
  }
  std::vector<engine::Recording> fit_set, check_set;
  split(rec.conversations, a.holdout, fit_set, check_set);
  const bool in_sample = check_set.empty() || fit_set.empty();
  if (fit_set.empty()) fit_set = check_set;
  if (check_set.empty()) check_set = fit_set;
  auto counter = retrieval::make_counter("o200k_base");
  std::vector<engine::ContextAnswer> context_fit, context_check;
  split(rec.context_answers, a.holdout, context_fit, context_check);
  if (context_fit.empty()) context_fit = context_check;
  if (context_check.empty()) context_check = context_fit;
  engine::Fit fit = engine::fit_profile(fit_set, rec.samples, *counter, context_fit);
  std::vector<retrieval::Bundle> loaded;
  loaded.reserve(a.bundles.size());
  std::vector<retrieval::Bundle*> bundles;
  std::vector<std::string> names;
  for (const auto& b : a.bundles) {
    retrieval::LoadOptions load;
    load.profile = profile_option(a.profile);
    loaded.push_back(retrieval::Bundle::load(b, load));
    engine::require_concepts(loaded.back(), b);
    names.push_back(fs::path(b).filename().string());
  }
  for (auto& b : loaded) bundles.push_back(&b);
  // The check replays the fitted profile, or another one to compare with it (the default profile, a truth).
  const agents::SimOptions replayed = a.check_with.empty() ? fit.options : agents::load_sim_profile(a.check_with);
  const std::vector<engine::CheckRow> rows = engine::check_profile(replayed, check_set, bundles, names, *counter, a.seed);
  engine::add_check_columns(fit, rows);
  engine::add_context_check(fit, replayed, context_check, *counter, a.seed);
  const std::string comment = fmt::format(
      "okfbench sim profile, fitted by okfbench calibrate on {} conversation(s) from {} cassette(s){}",
      fit_set.size(), rec.files, a.model.empty() ? "" : ", model " + a.model);
  // Checked and atomic: a full disk used to leave an empty profile that sim: read as the default.
  write_atomically(a.out, agents::sim_profile_yaml(fit.options, comment));
  if (a.json) {
    std::printf("%s\n", json_text(to_json(fit, rows, in_sample, a.out, a.check_with)).c_str());
  } else {
    print_text(fit, rows, rec, fit_set.size(), in_sample, a.out, a.check_with);
  }
  return 0;
}

}  // namespace

void add_calibrate_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand("calibrate", "Fit a sim behaviour profile to a model's recorded runs (cassettes)");
  cmd->add_option("recordings", args->recordings, "Cassettes or folders of them (run --record DIR, agent --record FILE)")
      ->required();
  cmd->add_option("--out", args->out, "The profile to write (YAML; use it as --model sim:FILE)")->required();
  cmd->add_option("--model", args->model, "Only exchanges this model answered (openai:MODEL or MODEL)");
  cmd->add_option("--bundle", args->bundles, "A bundle the recordings were made on, for the check (repeat for several)");
  cmd->add_option("--profile", args->profile, "The --bundle folders' profile: okf, repo, lessons or expertise")
      ->check(CLI::IsMember({"okf", "repo", "lessons", "expertise"}))
      ->capture_default_str();
  cmd->add_option("--holdout", args->holdout, "Share of the questions held out of the fit and replayed to check it (0 = check on the fit set)")
      ->check(number_in(engine::limits::calibrate_holdout))
      ->capture_default_str();
  cmd->add_option("--check-with", args->check_with,
                  "Replay the check with this profile instead of the fitted one (an empty file is the default profile)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--seed", args->seed, "Seed of the replaying sim")->check(number_in(engine::limits::seed))->capture_default_str();
  cmd->add_flag("--json", args->json, "Print the fit and the check as JSON");
  cmd->callback([args, &action] { action = [args] { return calibrate(*args); }; });
}

}  // namespace okfbench::cli
