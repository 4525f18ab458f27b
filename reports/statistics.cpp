#include "reports/statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/error.hpp"

namespace okfbench::reports {
namespace {

std::vector<double> differences(std::span<const double> base, std::span<const double> candidate, std::string_view test,
                                std::size_t minimum) {
  if (base.size() != candidate.size()) {
    throw InputError(fmt::format("{}: the two systems have scores for {} and {} questions; pair them by question first",
                                 test, base.size(), candidate.size()));
  }
  if (base.size() < minimum) {
    throw InputError(fmt::format("{}: needs at least {} paired questions, got {}", test, minimum, base.size()));
  }
  std::vector<double> d(base.size());
  for (std::size_t i = 0; i < base.size(); ++i) d[i] = candidate[i] - base[i];
  return d;
}

double mean_of(std::span<const double> values) {
  double sum = 0.0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

// Continued fraction for the regularized incomplete beta function, evaluated
// with the modified Lentz method (Abramowitz & Stegun 26.5.8; Press et al.,
// "Numerical Recipes", 3rd ed., section 6.4).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEpsilon = 1e-15;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double result = d;
  for (int m = 1; m <= 1000; ++m) {
    const double m2 = 2.0 * m;
    for (const double numerator : {m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
                                   -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0))}) {
      d = 1.0 + numerator * d;
      if (std::fabs(d) < kTiny) d = kTiny;
      c = 1.0 + numerator / c;
      if (std::fabs(c) < kTiny) c = kTiny;
      d = 1.0 / d;
      result *= d * c;
    }
    if (std::fabs(d * c - 1.0) < kEpsilon) break;
  }
  return result;
}

// I_x(a, b), the regularized incomplete beta function.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  // The continued fraction converges fast for x < (a+1)/(a+b+2); use the symmetry otherwise.
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_continued_fraction(a, b, x) / a;
  return 1.0 - front * beta_continued_fraction(b, a, 1.0 - x) / b;
}

// Two-sided tail of Student's t: P(|T| >= |t|) = I_{df/(df+t^2)}(df/2, 1/2)
// (Abramowitz & Stegun 26.7.1).
double student_two_sided_p(double t, double df) {
  if (std::isinf(t)) return 0.0;
  return incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
}

// The distribution of the generator is fixed by the standard; see the header.
std::uint64_t uniform_index(std::mt19937_64& generator, std::uint64_t n) {
  const std::uint64_t remainder = (std::uint64_t{0} - n) % n;  // 2^64 mod n
  while (true) {
    const std::uint64_t x = generator();
    if (remainder == 0 || x < std::uint64_t{0} - remainder) return x % n;
  }
}

double quantile_type7(const std::vector<double>& sorted, double q) {
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const auto low = static_cast<std::size_t>(std::floor(h));
  if (low + 1 >= sorted.size()) return sorted.back();
  return sorted[low] + (h - static_cast<double>(low)) * (sorted[low + 1] - sorted[low]);
}

double quantile_with_infinity(const std::vector<double>& sorted, double q) {
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const auto low = static_cast<std::size_t>(std::floor(h));
  // Interpolating towards +infinity would give infinity or NaN; take the order statistic itself.
  if (low + 1 < sorted.size() && std::isinf(sorted[low + 1])) return h > static_cast<double>(low) ? sorted[low + 1] : sorted[low];
  return quantile_type7(sorted, q);
}

double paired_statistic(double base, double candidate, double pairs, PairedStatistic statistic) {
  if (statistic == PairedStatistic::difference_of_means) return (candidate - base) / pairs;
  return base > 0.0 ? candidate / base : std::numeric_limits<double>::infinity();
}

void check_bootstrap_options(const BootstrapOptions& options, std::string_view test) {
  if (options.resamples == 0) throw InputError(fmt::format("{}: resamples must be at least 1", test));
  if (!(options.confidence > 0.0 && options.confidence < 1.0)) {
    throw InputError(fmt::format("{}: confidence {} must be between 0 and 1 (e.g. 0.95)", test, options.confidence));
  }
}

}  // namespace

McNemar mcnemar_exact(int base_only, int candidate_only) {
  if (base_only < 0 || candidate_only < 0) {
    throw InputError(fmt::format("McNemar test: discordant counts must be at least 0, got {} and {}", base_only,
                                 candidate_only));
  }
  McNemar result{base_only, candidate_only, 1.0};
  const int n = base_only + candidate_only;
  if (n == 0) return result;
  // Binomial(n, 1/2) lower tail up to min(b, c), summed in logs so that large n does not overflow.
  double tail = 0.0;
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  for (int i = 0; i <= std::min(base_only, candidate_only); ++i) {
    tail += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) + log_half_n);
  }
  result.p_value = std::min(1.0, 2.0 * tail);
  return result;
}

Interval paired_question_bootstrap(std::span<const QuestionSums> questions, PairedStatistic statistic,
                                   const BootstrapOptions& options) {
  constexpr std::string_view test = "question bootstrap";
  if (questions.empty()) throw InputError(fmt::format("{}: needs at least 1 question, got 0", test));
  check_bootstrap_options(options, test);
  double base = 0.0, candidate = 0.0, pairs = 0.0;
  for (const auto& q : questions) {
    if (!(q.pairs >= 1.0) || !std::isfinite(q.base) || !std::isfinite(q.candidate)) {
      throw InputError(fmt::format("{}: every question needs at least 1 pair and finite sums", test));
    }
    if (statistic == PairedStatistic::ratio_of_sums && (q.base < 0.0 || q.candidate < 0.0)) {
      throw InputError(fmt::format("{}: a ratio of sums needs values >= 0", test));
    }
    base += q.base;
    candidate += q.candidate;
    pairs += q.pairs;
  }
  if (statistic == PairedStatistic::ratio_of_sums && !(base > 0.0)) {
    throw InputError(fmt::format("{}: the base sums to 0, so the ratio is undefined", test));
  }
  std::mt19937_64 generator(options.seed);
  const auto n = static_cast<std::uint64_t>(questions.size());
  std::vector<double> values(options.resamples);
  for (double& v : values) {
    double b = 0.0, c = 0.0, p = 0.0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const QuestionSums& q = questions[uniform_index(generator, n)];
      b += q.base;
      c += q.candidate;
      p += q.pairs;
    }
    v = paired_statistic(b, c, p, statistic);
  }
  std::sort(values.begin(), values.end());
  Interval interval;
  interval.estimate = paired_statistic(base, candidate, pairs, statistic);
  interval.low = quantile_with_infinity(values, (1.0 - options.confidence) / 2.0);
  interval.high = quantile_with_infinity(values, (1.0 + options.confidence) / 2.0);
  return interval;
}

TTest paired_t_test(std::span<const double> base, std::span<const double> candidate) {
  const auto d = differences(base, candidate, "paired t-test", 2);
  const double n = static_cast<double>(d.size());
  TTest result;
  result.mean_difference = mean_of(d);
  result.degrees_of_freedom = n - 1.0;
  double squares = 0.0;
  for (double v : d) squares += (v - result.mean_difference) * (v - result.mean_difference);
  const double standard_error = std::sqrt(squares / (n - 1.0)) / std::sqrt(n);
  if (standard_error == 0.0) {
    const bool all_zero = result.mean_difference == 0.0;
    result.t = all_zero ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), result.mean_difference);
    result.p_value = all_zero ? 1.0 : 0.0;
    return result;
  }
  result.t = result.mean_difference / standard_error;
  result.p_value = student_two_sided_p(result.t, result.degrees_of_freedom);
  return result;
}

Randomization paired_randomization_test(std::span<const double> base, std::span<const double> candidate,
                                        const RandomizationOptions& options) {
  const auto d = differences(base, candidate, "randomization test", 1);
  if (options.permutations == 0) throw InputError("randomization test: permutations must be at least 1");
  double observed = 0.0, scale = 0.0;
  for (double v : d) {
    observed += v;
    scale += std::fabs(v);
  }
  observed = std::fabs(observed);
  const double threshold = observed - 1e-12 * scale;  // sums equal up to rounding count as ties
  auto signed_sum = [&](auto sign_bit) {
    double sum = 0.0;
    for (std::size_t i = 0; i < d.size(); ++i) sum += sign_bit(i) ? -d[i] : d[i];
    return std::fabs(sum);
  };

  Randomization result;
  result.mean_difference = mean_of(d);
  std::size_t at_least = 0;
  const bool exact = d.size() < 63 && (std::uint64_t{1} << d.size()) <= options.permutations;
  if (exact) {
    const std::uint64_t assignments = std::uint64_t{1} << d.size();
    for (std::uint64_t mask = 0; mask < assignments; ++mask) {
      if (signed_sum([&](std::size_t i) { return (mask >> i) & 1u; }) >= threshold) ++at_least;
    }
    result.enumeration = Enumeration::exact;
    result.permutations = static_cast<std::size_t>(assignments);
    result.p_value = static_cast<double>(at_least) / static_cast<double>(assignments);
    return result;
  }
  std::mt19937_64 generator(options.seed);
  std::vector<std::uint64_t> bits((d.size() + 63) / 64);
  for (std::size_t p = 0; p < options.permutations; ++p) {
    for (auto& word : bits) word = generator();
    if (signed_sum([&](std::size_t i) { return (bits[i / 64] >> (i % 64)) & 1u; }) >= threshold) ++at_least;
  }
  result.enumeration = Enumeration::sampled;
  result.permutations = options.permutations;
  result.p_value = static_cast<double>(at_least + 1) / static_cast<double>(options.permutations + 1);
  return result;
}

Interval bootstrap_mean_interval(std::span<const double> values, const BootstrapOptions& options) {
  if (values.empty()) throw InputError("bootstrap interval: needs at least 1 question, got 0");
  check_bootstrap_options(options, "bootstrap interval");
  std::mt19937_64 generator(options.seed);
  const auto n = static_cast<std::uint64_t>(values.size());
  std::vector<double> means(options.resamples);
  for (double& m : means) {
    double sum = 0.0;
    for (std::uint64_t i = 0; i < n; ++i) sum += values[uniform_index(generator, n)];
    m = sum / static_cast<double>(n);
  }
  std::sort(means.begin(), means.end());
  Interval interval;
  interval.estimate = mean_of(values);
  interval.low = quantile_type7(means, (1.0 - options.confidence) / 2.0);
  interval.high = quantile_type7(means, (1.0 + options.confidence) / 2.0);
  return interval;
}

Interval paired_bootstrap_interval(std::span<const double> base, std::span<const double> candidate,
                                   const BootstrapOptions& options) {
  const auto d = differences(base, candidate, "bootstrap interval", 1);
  return bootstrap_mean_interval(d, options);
}

}  // namespace okfbench::reports
