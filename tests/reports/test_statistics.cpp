// Paired statistics on tiny samples whose values can be worked out by hand.
#include "reports/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "core/error.hpp"

namespace okfbench::reports {
namespace {

const std::vector<double> kZeros3 = {0.0, 0.0, 0.0};
const std::vector<double> kOneTwoThree = {1.0, 2.0, 3.0};

TEST(PairedTTest, ThreeDifferences) {
  // d = 1,2,3: mean 2, sd 1, t = 2 / (1/sqrt 3) = 2 sqrt 3, df 2.
  // For df = 2 the two-sided tail is 1 - t / sqrt(t^2 + 2) = 1 - sqrt(12/14).
  const TTest r = paired_t_test(kZeros3, kOneTwoThree);
  EXPECT_DOUBLE_EQ(r.mean_difference, 2.0);
  EXPECT_DOUBLE_EQ(r.t, 2.0 * std::sqrt(3.0));
  EXPECT_DOUBLE_EQ(r.degrees_of_freedom, 2.0);
  EXPECT_NEAR(r.p_value, 1.0 - std::sqrt(12.0 / 14.0), 1e-12);
}

TEST(PairedTTest, OneDegreeOfFreedomIsCauchy) {
  // d = 1,3: mean 2, sd sqrt 2, t = 2; df 1 tail: 1 - (2/pi) atan(2).
  const std::vector<double> base = {0.0, 0.0};
  const std::vector<double> cand = {1.0, 3.0};
  const TTest r = paired_t_test(base, cand);
  EXPECT_DOUBLE_EQ(r.t, 2.0);
  EXPECT_NEAR(r.p_value, 1.0 - 2.0 / std::numbers::pi * std::atan(2.0), 1e-12);
}

TEST(PairedTTest, NegativeDifferenceGivesNegativeT) {
  const TTest r = paired_t_test(kOneTwoThree, kZeros3);
  EXPECT_DOUBLE_EQ(r.t, -2.0 * std::sqrt(3.0));
  EXPECT_NEAR(r.p_value, 1.0 - std::sqrt(12.0 / 14.0), 1e-12);
}

TEST(PairedTTest, ConstantDifferences) {
  EXPECT_DOUBLE_EQ(paired_t_test(kOneTwoThree, kOneTwoThree).p_value, 1.0);
  const std::vector<double> shifted = {2.0, 3.0, 4.0};
  const TTest r = paired_t_test(kOneTwoThree, shifted);
  EXPECT_TRUE(std::isinf(r.t));
  EXPECT_DOUBLE_EQ(r.p_value, 0.0);
}

TEST(PairedTTest, BadInputIsAnError) {
  const std::vector<double> one = {1.0};
  EXPECT_THROW(paired_t_test(one, one), InputError);
  EXPECT_THROW(paired_t_test(kOneTwoThree, one), InputError);
}

TEST(RandomizationTest, ExactEnumerationForSmallSamples) {
  // d = 1,2,3: of the 8 sign assignments only +++ and --- reach |sum| 6.
  const Randomization r = paired_randomization_test(kZeros3, kOneTwoThree);
  EXPECT_EQ(r.enumeration, Enumeration::exact);
  EXPECT_EQ(r.permutations, 8u);
  EXPECT_DOUBLE_EQ(r.p_value, 0.25);
  EXPECT_DOUBLE_EQ(r.mean_difference, 2.0);
  // d = 1,2,3,4: 2 of 16 reach |sum| 10.
  const std::vector<double> base = {0, 0, 0, 0};
  const std::vector<double> cand = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(paired_randomization_test(base, cand).p_value, 0.125);
}

TEST(RandomizationTest, TiesUpToRoundingCount) {
  // d = 0.1, 0.2, -0.3: observed sum is 0 up to rounding; every assignment
  // whose |sum| is >= that counts, so p = 1.
  const std::vector<double> base = {0.0, 0.0, 0.3};
  const std::vector<double> cand = {0.1, 0.2, 0.0};
  EXPECT_DOUBLE_EQ(paired_randomization_test(base, cand).p_value, 1.0);
}

// 20 questions: too many to enumerate with 10,000 permutations, so sampled.
std::vector<double> twenty(double shift) {
  std::vector<double> v;
  for (int i = 0; i < 20; ++i) v.push_back(0.1 * (i % 7) + (i % 3 == 0 ? shift : 0.0) - 0.02 * (i % 4));
  return v;
}

TEST(RandomizationTest, SampledIsReproducibleAndCloseToExact) {
  const auto base = twenty(0.0);
  const auto cand = twenty(0.15);
  const Randomization a = paired_randomization_test(base, cand, {.permutations = 10'000, .seed = 7});
  const Randomization b = paired_randomization_test(base, cand, {.permutations = 10'000, .seed = 7});
  EXPECT_EQ(a.enumeration, Enumeration::sampled);
  EXPECT_EQ(a.permutations, 10'000u);
  EXPECT_EQ(a.p_value, b.p_value);
  // The exact p from all 2^20 assignments; 10,000 samples land within ~3 standard errors.
  const Randomization exact = paired_randomization_test(base, cand, {.permutations = 1u << 20, .seed = 7});
  ASSERT_EQ(exact.enumeration, Enumeration::exact);
  const double se = std::sqrt(exact.p_value * (1 - exact.p_value) / 10'000);
  EXPECT_NEAR(a.p_value, exact.p_value, 4 * se + 1e-4);
  EXPECT_GT(exact.p_value, 0.0);
  EXPECT_LT(exact.p_value, 0.1);
}

TEST(RandomizationTest, SampledPNeverZero) {
  std::vector<double> base(70, 0.0), cand(70, 1.0);
  const Randomization r = paired_randomization_test(base, cand, {.permutations = 999, .seed = 1});
  EXPECT_DOUBLE_EQ(r.p_value, 1.0 / 1000.0);  // only the observed assignment is as extreme
}

TEST(BootstrapInterval, ConstantValuesGiveAPoint) {
  const std::vector<double> v = {5.0, 5.0, 5.0};
  const Interval i = bootstrap_mean_interval(v);
  EXPECT_DOUBLE_EQ(i.estimate, 5.0);
  EXPECT_DOUBLE_EQ(i.low, 5.0);
  EXPECT_DOUBLE_EQ(i.high, 5.0);
}

TEST(BootstrapInterval, TwoValuesSpanTheRange) {
  // Resample means of {0, 1} are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4:
  // the 2.5% and 97.5% quantiles of 10,000 of them are 0 and 1.
  const std::vector<double> v = {0.0, 1.0};
  const Interval i = bootstrap_mean_interval(v);
  EXPECT_DOUBLE_EQ(i.estimate, 0.5);
  EXPECT_DOUBLE_EQ(i.low, 0.0);
  EXPECT_DOUBLE_EQ(i.high, 1.0);
}

TEST(BootstrapInterval, PairedIsReproducibleAndBracketsTheMean) {
  const auto base = twenty(0.0);
  const auto cand = twenty(0.15);
  const Interval a = paired_bootstrap_interval(base, cand, {.resamples = 2000, .confidence = 0.9, .seed = 3});
  const Interval b = paired_bootstrap_interval(base, cand, {.resamples = 2000, .confidence = 0.9, .seed = 3});
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_NEAR(a.estimate, 0.15 * 7 / 20, 1e-12);  // i = 0,3,...,18 are shifted
  EXPECT_LT(a.low, a.estimate);
  EXPECT_GT(a.high, a.estimate);
  EXPECT_GE(a.low, 0.0);  // every difference is 0 or 0.15
  EXPECT_LE(a.high, 0.15 + 1e-12);
}

TEST(BootstrapInterval, BadOptionsAreErrors) {
  const std::vector<double> v = {1.0};
  EXPECT_THROW(bootstrap_mean_interval({}), InputError);
  EXPECT_THROW(bootstrap_mean_interval(v, {.confidence = 1.0}), InputError);
  EXPECT_THROW(bootstrap_mean_interval(v, {.resamples = 0}), InputError);
}

}  // namespace
}  // namespace okfbench::reports
