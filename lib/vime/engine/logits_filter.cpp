#include "vime/engine/logits_filter.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "vime/error.hpp"

namespace vime::engine {
namespace {

// Largest tokens among which top-p looks for its prefix before sorting a whole row.
constexpr int64_t kTopPCandidates = 1024;

at::Tensor column(const at::Tensor& t) { return t.unsqueeze(1); }

// The value at 1-based rank `k` of each row of `sorted_desc` (k clamped to the row length).
at::Tensor kth_value(const at::Tensor& sorted_desc, const at::Tensor& k) {
  auto index = (k.clamp(1, sorted_desc.size(1)) - 1).unsqueeze(1);
  return sorted_desc.gather(1, index).squeeze(1);
}

// The filters as per-row columns: top_k 0 where off (or >= vocab), top_p 1 where off, min_p 0
// where off; which filters any row uses and the largest k.
struct FilterColumns {
  std::vector<int64_t> top_k;
  std::vector<float> top_p, min_p;
  bool any_k = false, any_p = false, any_min_p = false;
  int64_t max_k = 0;
  bool any() const { return any_k || any_p || any_min_p; }
};

FilterColumns columns_of(const std::vector<RowFilter>& filters, int64_t vocab) {
  FilterColumns c;
  for (const RowFilter& f : filters) {
    const bool k_on = f.top_k > 0 && f.top_k < vocab;
    c.top_k.push_back(k_on ? f.top_k : 0);
    c.top_p.push_back(f.top_p < 1.0 ? static_cast<float>(f.top_p) : 1.0f);
    c.min_p.push_back(f.min_p > 0.0 ? static_cast<float>(f.min_p) : 0.0f);
    c.any_k |= k_on;
    c.any_p |= f.top_p < 1.0;
    c.any_min_p |= f.min_p > 0.0;
    if (k_on) c.max_k = std::max(c.max_k, f.top_k);
  }
  return c;
}

}  // namespace

at::Tensor keep_mask(const at::Tensor& probs, const std::vector<RowFilter>& filters) {
  if (probs.dim() != 2 || probs.size(0) != static_cast<int64_t>(filters.size()))
    throw Error("keep_mask: probs must be [batch, vocab] with one filter per row");
  const int64_t vocab = probs.size(1);
  const FilterColumns c = columns_of(filters, vocab);
  const auto device = probs.device();
  auto threshold = at::zeros({probs.size(0)}, probs.options());
  if (!c.any()) return probs >= column(threshold);

  if (c.any_min_p) {
    auto min_p_t = at::tensor(c.min_p, at::kFloat).to(device);
    threshold = at::maximum(threshold, min_p_t * std::get<0>(probs.max(1)));
  }
  auto k_t = at::tensor(c.top_k, at::kLong).to(device);
  if (c.any_k) {
    auto largest = std::get<0>(probs.topk(c.max_k, 1));  // sorted descending
    threshold = at::where(k_t > 0, at::maximum(threshold, kth_value(largest, k_t)), threshold);
  }
  if (c.any_p) {
    auto p_t = at::tensor(c.top_p, at::kFloat).to(device);
    auto survivors_all = probs * (probs >= column(threshold));
    auto mass = survivors_all.sum(1);
    // The top-p prefix is taken over the largest candidates (a topk, ~20x cheaper than sorting a
    // 150k vocabulary); only when some row's prefix reaches past them is the whole row sorted.
    const int64_t candidates = std::min(vocab, std::max<int64_t>(c.max_k, kTopPCandidates));
    auto top_p_prefix = [&](const at::Tensor& sorted) {
      auto survivors = sorted * (sorted >= column(threshold));
      auto mass_before = survivors.cumsum(1) - survivors;  // exclusive prefix sums
      auto in_prefix = mass_before < column(p_t * mass);
      return in_prefix.sum(1).clamp_min(1);
    };
    auto sorted = std::get<0>(probs.topk(candidates, 1));
    auto prefix_len = top_p_prefix(sorted);
    if (candidates < vocab) {
      auto survivors_count = (probs >= column(threshold)).sum(1);
      auto beyond = (prefix_len >= candidates) & (survivors_count > candidates) & (p_t < 1);
      if (beyond.any().item<bool>()) {
        sorted = std::get<0>(probs.sort(1, /*descending=*/true));
        prefix_len = top_p_prefix(sorted);
      }
    }
    threshold =
        at::where(p_t < 1, at::maximum(threshold, kth_value(sorted, prefix_len)), threshold);
  }
  return probs >= column(threshold);
}

at::Tensor keep_threshold(const at::Tensor& z, const std::vector<RowFilter>& filters) {
  if (z.dim() != 2 || z.size(0) != static_cast<int64_t>(filters.size()))
    throw Error("keep_threshold: z must be [batch, vocab] with one filter per row");
  const int64_t vocab = z.size(1);
  const FilterColumns c = columns_of(filters, vocab);
  std::vector<float> log_min_p;
  for (const RowFilter& f : filters)
    log_min_p.push_back(f.min_p > 0.0 ? static_cast<float>(std::log(f.min_p))
                                      : -std::numeric_limits<float>::infinity());
  const auto device = z.device();
  auto threshold = at::full({z.size(0)}, -std::numeric_limits<float>::infinity(), z.options());
  if (!c.any()) return threshold;

  const int64_t candidates = std::min(
      vocab, c.any_p ? std::max<int64_t>(c.max_k, kTopPCandidates) : std::max<int64_t>(c.max_k, 1));
  auto sorted = std::get<0>(z.topk(candidates, 1));  // descending
  if (c.any_min_p) {
    auto min_p_t = at::tensor(log_min_p, at::kFloat).to(device);
    threshold = at::maximum(threshold, sorted.select(1, 0) + min_p_t);
  }
  auto k_t = at::tensor(c.top_k, at::kLong).to(device);
  if (c.any_k)
    threshold = at::where(k_t > 0, at::maximum(threshold, kth_value(sorted, k_t)), threshold);
  if (c.any_p) {
    auto p_t = at::tensor(c.top_p, at::kFloat).to(device);
    auto lse = column(at::logsumexp(z, 1));
    // The survivors' mass over the whole row: 1 where no filter cut before top-p, else a pass over
    // the row (top-k's ties at its k-th value may reach past the candidates).
    bool cut_before = false;
    for (size_t r = 0; r < filters.size(); ++r)
      cut_before |= filters[r].top_p < 1.0 && (c.top_k[r] > 0 || filters[r].min_p > 0.0);
    const at::Tensor survivors_mass =
        cut_before ? at::where(z >= column(threshold), at::exp(z - lse), at::zeros_like(z)).sum(1)
                   : at::ones_like(threshold);
    auto top_p_prefix = [&](const at::Tensor& sorted_z) {
      auto survivors = at::exp(sorted_z - lse) * (sorted_z >= column(threshold));
      auto mass_before = survivors.cumsum(1) - survivors;  // exclusive prefix sums
      auto in_prefix = mass_before < column(p_t * survivors_mass);
      return in_prefix.sum(1).clamp_min(1);
    };
    auto prefix_len = top_p_prefix(sorted);
    // Only a prefix that fills the candidates while more survivors lie past them needs the whole
    // row sorted.
    if (candidates < vocab) {
      auto reach = (prefix_len >= candidates) & (p_t < 1);
      if (reach.any().item<bool>() &&
          (reach & ((z >= column(threshold)).sum(1) > candidates)).any().item<bool>()) {
        sorted = std::get<0>(z.sort(1, /*descending=*/true));
        prefix_len = top_p_prefix(sorted);
      }
    }
    threshold =
        at::where(p_t < 1, at::maximum(threshold, kth_value(sorted, prefix_len)), threshold);
  }
  return threshold;
}

}  // namespace vime::engine
