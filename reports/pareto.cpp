#include "reports/pareto.hpp"

#include <algorithm>

namespace okfbench::reports {

namespace {

bool dominates(const CostQuality& a, const CostQuality& b) {
  bool no_worse = a.cost <= b.cost && a.quality >= b.quality;
  bool better = a.cost < b.cost || a.quality > b.quality;
  return no_worse && better;
}

}  // namespace

std::vector<std::size_t> pareto_front(const std::vector<CostQuality>& points) {
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < points.size(); ++i) {
    bool dominated = std::any_of(points.begin(), points.end(),
                                 [&](const CostQuality& other) { return dominates(other, points[i]); });
    if (!dominated) front.push_back(i);
  }
  std::stable_sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) {
    return points[a].cost < points[b].cost;
  });
  return front;
}

}  // namespace okfbench::reports
