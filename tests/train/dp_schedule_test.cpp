// slime's DP schedule under --balance-data: Karmarkar-Karp over micro-batch FLOPs.
#include "vime/train/dp_schedule.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <random>

#include "vime/train/karmarkar_karp.hpp"

using namespace vime::train;

namespace {

double spread(const std::vector<std::vector<int64_t>>& parts, const std::vector<double>& w) {
  std::vector<double> sums;
  for (const auto& p : parts) {
    double s = 0;
    for (auto i : p) s += w[i];
    sums.push_back(s);
  }
  return *std::max_element(sums.begin(), sums.end()) - *std::min_element(sums.begin(), sums.end());
}

// The best equal-size 2-way split by brute force.
double best_two_way_spread(const std::vector<double>& w) {
  const int n = static_cast<int>(w.size());
  double best = 1e300;
  for (int mask = 0; mask < (1 << n); ++mask) {
    if (__builtin_popcount(mask) != n / 2) continue;
    double a = 0, b = 0;
    for (int i = 0; i < n; ++i) (mask >> i & 1 ? a : b) += w[i];
    best = std::min(best, std::abs(a - b));
  }
  return best;
}

}  // namespace

TEST_CASE("karmarkar_karp partitions into equal-size parts with a small spread",
          "[train][dp_schedule]") {
  const std::vector<double> w{1, 2, 3, 4, 5, 6, 7, 8};
  auto parts = karmarkar_karp(w, 2, true);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].size() == 4);
  CHECK(parts[1].size() == 4);
  CHECK(spread(parts, w) == 0);  // 18 / 18
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(1, 1000);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> x(10);
    for (auto& v : x) v = u(rng);
    auto p = karmarkar_karp(x, 2, true);
    std::vector<int64_t> all;
    for (const auto& part : p) {
      CHECK(part.size() == 5);
      all.insert(all.end(), part.begin(), part.end());
    }
    std::sort(all.begin(), all.end());
    std::vector<int64_t> expected(10);
    std::iota(expected.begin(), expected.end(), 0);
    CHECK(all == expected);
    // The differencing method pairs sorted neighbours and merges states largest-against-
    // smallest, so the final spread never exceeds the largest neighbour difference (a merge in
    // the same direction would add spreads up); it is a heuristic, not the optimum.
    auto sorted = x;
    std::sort(sorted.begin(), sorted.end());
    double worst_pair = 0;
    for (size_t i = 0; i < sorted.size(); i += 2)
      worst_pair = std::max(worst_pair, sorted[i + 1] - sorted[i]);
    CHECK(spread(p, x) <= worst_pair + 1e-9);
    CHECK(spread(p, x) >= best_two_way_spread(x) - 1e-9);
  }
  // Free sizes: 3 parts of {10, 10, 10, 5, 5, 5, 5, 5, 5}.
  const std::vector<double> y{10, 10, 10, 5, 5, 5, 5, 5, 5};
  CHECK(spread(karmarkar_karp(y, 3, false), y) == 0);
  CHECK_THROWS(karmarkar_karp(y, 2, true));
}

TEST_CASE("--balance-data spreads long micro-batches over ranks", "[train][dp_schedule]") {
  const std::vector<int64_t> lengths{100, 1, 100, 1, 1, 1, 1, 1};
  DpScheduleConfig cfg;
  cfg.global_batch_size = 8;
  cfg.dp_size = 2;
  cfg.micro_batch_size = 1;
  auto flops_of = [&](const std::vector<MicroBatch>& mbs) {
    double f = 0;
    for (const auto& mb : mbs)
      for (auto s : mb) f += 10.0 * lengths[s] + double(lengths[s]) * lengths[s];
    return f;
  };
  auto round_robin = plan_steps(lengths, {}, cfg);
  // Round-robin gives both long samples to rank 0.
  CHECK(flops_of(round_robin[0].per_rank[0]) > 10 * flops_of(round_robin[0].per_rank[1]));
  cfg.balance_data = true;
  cfg.flops_linear_coeff = 10;
  auto balanced = plan_steps(lengths, {}, cfg);
  REQUIRE(balanced[0].per_rank.size() == 2);
  CHECK(balanced[0].per_rank[0].size() == 4);
  CHECK(balanced[0].per_rank[1].size() == 4);
  CHECK(flops_of(balanced[0].per_rank[0]) == flops_of(balanced[0].per_rank[1]));
  const auto owner = sample_owners(balanced, lengths.size());
  CHECK(owner[0] != owner[2]);
}
