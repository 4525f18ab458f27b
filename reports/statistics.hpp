#pragma once
// Significance tests and confidence intervals over per-question scores of two
// systems (base and candidate, paired by question), as used in IR evaluation
// (Smucker, Allan & Carterette, "A Comparison of Statistical Significance
// Tests for Information Retrieval Evaluation", CIKM 2007).
//
// Every difference is candidate - base. All tests are two-sided.
//
// Reproducibility: the random procedures draw from std::mt19937_64 (its output
// sequence is fixed by the C++ standard) seeded with `seed`, using raw 64-bit
// outputs only (no std::*_distribution, whose results differ between standard
// libraries), so a seed gives the same result on every platform:
// - randomization: each permutation takes the next output and uses its bit i
//   as the sign of difference i (a fresh output every 64 questions);
// - bootstrap: each draw is an index in [0, n) by rejection sampling
//   (outputs >= the largest multiple of n below 2^64 are drawn again, then
//   output % n).
//
// Callers' errors (different lengths, too few questions) throw InputError.
#include <cstddef>
#include <cstdint>
#include <span>

namespace okfbench::reports {

struct TTest {
  double mean_difference = 0.0;
  double t = 0.0;                   // mean / (sd / sqrt(n)), sd with n - 1
  double degrees_of_freedom = 0.0;  // n - 1
  double p_value = 1.0;             // two-sided, Student's t distribution
};

// Paired t-test; needs n >= 2. When every difference is equal the standard
// deviation is 0: t is 0 and p is 1 if the differences are all 0, otherwise
// t is +-infinity and p is 0.
TTest paired_t_test(std::span<const double> base, std::span<const double> candidate);

enum class Enumeration { sampled, exact };

struct RandomizationOptions {
  std::size_t permutations = 10'000;
  std::uint64_t seed = 42;
};

struct Randomization {
  double mean_difference = 0.0;
  double p_value = 1.0;
  std::size_t permutations = 0;  // sign assignments evaluated
  Enumeration enumeration = Enumeration::sampled;
};

// Paired randomization (sign-flip permutation) test of the mean difference
// (Fisher 1935; Smucker et al. 2007). Under the null hypothesis each
// question's difference is equally likely to have either sign. When
// 2^n <= permutations all 2^n sign assignments are enumerated and
// p = count / 2^n exactly; otherwise `permutations` random assignments are
// drawn and p = (count + 1) / (permutations + 1) (Phipson & Smyth, "Permutation
// P-values Should Never Be Zero", 2010). `count` is the number of assignments
// whose |sum| is at least the observed |sum| less 1e-12 times the sum of
// |differences|, so sums that tie up to rounding count. Needs n >= 1.
Randomization paired_randomization_test(std::span<const double> base, std::span<const double> candidate,
                                        const RandomizationOptions& options = {});

struct BootstrapOptions {
  std::size_t resamples = 10'000;
  double confidence = 0.95;
  std::uint64_t seed = 42;
};

struct Interval {
  double estimate = 0.0;  // the mean of the sample itself
  double low = 0.0;
  double high = 0.0;
};

// Percentile bootstrap interval of the mean (Efron & Tibshirani, "An
// Introduction to the Bootstrap", 1993, ch. 13): `resamples` resamples of the
// n values with replacement; the bounds are the (1-c)/2 and (1+c)/2 quantiles
// of the resample means, linear interpolation between order statistics
// (Hyndman & Fan type 7, the default of R and numpy). Needs n >= 1.
Interval bootstrap_mean_interval(std::span<const double> values, const BootstrapOptions& options = {});

// The same interval for the paired mean difference (candidate - base),
// resampling questions.
Interval paired_bootstrap_interval(std::span<const double> base, std::span<const double> candidate,
                                   const BootstrapOptions& options = {});

// Exact McNemar test of paired binary outcomes (McNemar 1947, in its exact
// binomial form; Fagerland, Lydersen & Laake, "The McNemar test for binary
// matched-pairs data: mid-p and asymptotic are better than exact conditional",
// BMC Med Res Methodol 2013): only the discordant pairs count, b where only
// the base is correct and c where only the candidate is. Under the null each
// is equally likely to go either way, so with n = b + c,
//   p = min(1, 2 * sum_{i=0}^{min(b,c)} C(n, i) / 2^n),  1 when n = 0.
struct McNemar {
  int base_only = 0;
  int candidate_only = 0;
  double p_value = 1.0;
};
McNemar mcnemar_exact(int base_only, int candidate_only);

// One question's values summed over its paired trials (its repeats), for a
// bootstrap that resamples questions rather than trials: repeats of one
// question are not independent draws.
struct QuestionSums {
  double base = 0.0;
  double candidate = 0.0;
  double pairs = 0.0;  // paired trials of the question, at least 1
};

enum class PairedStatistic {
  ratio_of_sums,       // sum(candidate) / sum(base); the base sum must be > 0
  difference_of_means  // (sum(candidate) - sum(base)) / sum(pairs)
};

// Percentile bootstrap interval of `statistic` over questions: `resamples`
// resamples of the questions with replacement, the statistic of each, and
// the (1-c)/2 and (1+c)/2 quantiles (type 7), as bootstrap_mean_interval. The
// estimate is the statistic of the questions themselves. A resample whose
// base sum is 0 has the ratio +infinity (it sorts last). Needs n >= 1 and,
// for a ratio, every base value >= 0 and their sum > 0.
Interval paired_question_bootstrap(std::span<const QuestionSums> questions, PairedStatistic statistic,
                                   const BootstrapOptions& options = {});

}  // namespace okfbench::reports
