#pragma once
// The Pareto front of configurations on cost (lower is better) against
// quality (higher is better): a point is on the front when no other point is
// at least as good on both and strictly better on one.
#include <cstddef>
#include <vector>

namespace okfbench::reports {

struct CostQuality {
  double cost = 0.0;
  double quality = 0.0;
};

// Indices of the points on the front, ordered by increasing cost. Equal
// points are all on the front.
std::vector<std::size_t> pareto_front(const std::vector<CostQuality>& points);

}  // namespace okfbench::reports
