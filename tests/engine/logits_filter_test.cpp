// top-k, top-p and min-p keep exactly the documented sets: hand-made cases (ties, "off" values,
// renormalised top-p after top-k), and random rows against a plain per-row reference in double.
#include "vime/engine/logits_filter.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <numeric>

using vime::engine::keep_mask;
using vime::engine::RowFilter;

namespace {

// The kept token ids of a one-row filter over `probs`.
std::vector<int64_t> kept(const std::vector<float>& probs, RowFilter filter) {
  auto mask = keep_mask(at::tensor(probs, at::kFloat).unsqueeze(0), {filter})[0];
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < mask.size(0); ++i)
    if (mask[i].item<bool>()) ids.push_back(i);
  return ids;
}

RowFilter top_k(int64_t k) { return RowFilter{k, 1.0, 0.0}; }
RowFilter top_p(double p) { return RowFilter{0, p, 0.0}; }
RowFilter min_p(double m) { return RowFilter{0, 1.0, m}; }

using Ids = std::vector<int64_t>;

// The definitions of logits_filter.hpp, written out per row in double: min_p, then top_k over the
// survivors, then top_p renormalised over those, each keeping ties of its threshold.
std::vector<bool> reference(const std::vector<double>& p, RowFilter f) {
  const size_t n = p.size();
  std::vector<bool> keep(n, true);
  const double max_p = *std::max_element(p.begin(), p.end());
  if (f.min_p > 0)
    for (size_t i = 0; i < n; ++i) keep[i] = keep[i] && p[i] >= f.min_p * max_p;
  std::vector<double> desc(p);
  std::sort(desc.rbegin(), desc.rend());
  if (f.top_k > 0 && f.top_k < static_cast<int64_t>(n))
    for (size_t i = 0; i < n; ++i) keep[i] = keep[i] && p[i] >= desc[f.top_k - 1];
  if (f.top_p < 1) {
    std::vector<double> survivors;
    for (size_t i = 0; i < n; ++i)
      if (keep[i]) survivors.push_back(p[i]);
    std::sort(survivors.rbegin(), survivors.rend());
    const double mass = std::accumulate(survivors.begin(), survivors.end(), 0.0);
    double before = 0, threshold = survivors[0];
    for (double s : survivors) {
      if (before >= f.top_p * mass) break;
      threshold = s;
      before += s;
    }
    for (size_t i = 0; i < n; ++i) keep[i] = keep[i] && p[i] >= threshold;
  }
  return keep;
}

}  // namespace

TEST_CASE("top-k keeps the k most likely tokens and every tie of the k-th", "[sampler]") {
  const std::vector<float> p{0.1f, 0.4f, 0.2f, 0.3f};
  CHECK(kept(p, top_k(1)) == Ids{1});
  CHECK(kept(p, top_k(2)) == Ids{1, 3});
  CHECK(kept(p, top_k(3)) == Ids{1, 2, 3});
  for (int64_t off : {0, -1, 4, 100}) CHECK(kept(p, top_k(off)) == Ids{0, 1, 2, 3});
  const std::vector<float> ties{0.2f, 0.3f, 0.3f, 0.2f};
  CHECK(kept(ties, top_k(1)) == Ids{1, 2});
  CHECK(kept(ties, top_k(2)) == Ids{1, 2});
  CHECK(kept(ties, top_k(3)) == Ids{0, 1, 2, 3});
}

TEST_CASE("top-p keeps the smallest most-likely prefix reaching p, widened to its ties",
          "[sampler]") {
  const std::vector<float> p{0.1f, 0.4f, 0.2f, 0.3f};  // descending: 1, 3, 2, 0
  CHECK(kept(p, top_p(0.35)) == Ids{1});
  CHECK(kept(p, top_p(0.5)) == Ids{1, 3});
  CHECK(kept(p, top_p(0.75)) == Ids{1, 2, 3});
  CHECK(kept(p, top_p(0.95)) == Ids{0, 1, 2, 3});
  CHECK(kept(p, top_p(1.0)) == Ids{0, 1, 2, 3});  // 1 is off
  CHECK(kept(p, top_p(1e-6)) == Ids{1});          // never empty
  const std::vector<float> ties{0.2f, 0.3f, 0.3f, 0.2f};
  CHECK(kept(ties, top_p(0.2)) == Ids{1, 2});         // the prefix is one 0.3: its tie joins
  CHECK(kept(ties, top_p(0.65)) == Ids{0, 1, 2, 3});  // the prefix ends in a 0.2: both are kept
}

TEST_CASE("min-p keeps tokens within a factor of the most likely one", "[sampler]") {
  const std::vector<float> p{0.1f, 0.4f, 0.2f, 0.3f};
  CHECK(kept(p, min_p(0.5)) == Ids{1, 2, 3});
  CHECK(kept(p, min_p(0.76)) == Ids{1});
  CHECK(kept(p, min_p(0.0)) == Ids{0, 1, 2, 3});
  CHECK(kept(p, min_p(1.0)) == Ids{1});
}

TEST_CASE("top-p after top-k is renormalised over the top-k survivors, as in vLLM", "[sampler]") {
  const std::vector<float> p{0.1f, 0.4f, 0.2f, 0.3f};
  // top-k 3 leaves mass 0.9; 0.75 of it is 0.675 < 0.7, so the prefix stops at two tokens (against
  // the whole vocabulary's mass it would need three).
  CHECK(kept(p, RowFilter{3, 0.75, 0.0}) == Ids{1, 3});
  CHECK(kept(p, RowFilter{3, 0.8, 0.0}) == Ids{1, 2, 3});
  CHECK(kept(p, RowFilter{2, 0.99, 0.0}) == Ids{1, 3});
  // top-k's ties reach past k: their mass counts for top-p (0.45 of 1.0 needs 0.4 and a 0.2).
  CHECK(kept({0.4f, 0.2f, 0.2f, 0.2f}, RowFilter{2, 0.45, 0.0}) == Ids{0, 1, 2, 3});
  // min_p 0.5 drops 0.1 first (mass 0.9), and then the same holds.
  CHECK(kept(p, RowFilter{0, 0.75, 0.5}) == Ids{1, 3});
}

TEST_CASE("each row of a batch gets its own filter", "[sampler]") {
  auto probs = at::tensor(std::vector<float>{0.1f, 0.4f, 0.2f, 0.3f}, at::kFloat).repeat({4, 1});
  auto mask = keep_mask(probs, {top_k(1), top_p(0.5), RowFilter{}, min_p(0.5)});
  auto expected =
      at::tensor(std::vector<uint8_t>{0, 1, 0, 0, 0, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1}, at::kByte)
          .view({4, 4})
          .to(at::kBool);
  CHECK(mask.equal(expected));
}

TEST_CASE("random rows keep what the per-row reference keeps, in any token order", "[sampler]") {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  const int64_t rows = 300, vocab = 40;
  auto probs =
      at::softmax(at::randn({rows, vocab}, gen, at::TensorOptions().dtype(at::kFloat)) * 2, 1);
  std::vector<RowFilter> filters;
  for (int64_t r = 0; r < rows; ++r) {
    const double u = at::rand({3}, gen).max().item<double>();
    filters.push_back(RowFilter{r % 3 == 0 ? 0 : 1 + r % 17, r % 2 ? 0.2 + 0.75 * u : 1.0,
                                r % 5 == 0 ? 0.3 * u : 0.0});
  }
  auto check_against_reference = [&](const std::vector<RowFilter>& row_filters) {
    auto mask = keep_mask(probs, row_filters);
    int64_t narrowed = 0;
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<double> p(vocab);
      for (int64_t i = 0; i < vocab; ++i) p[i] = probs[r][i].item<float>();
      const std::vector<bool> want = reference(p, row_filters[r]);
      for (int64_t i = 0; i < vocab; ++i) REQUIRE(mask[r][i].item<bool>() == want[i]);
      narrowed += mask[r].sum().item<int64_t>() < vocab;
    }
    CHECK(narrowed > rows / 2);  // the filters did bite
  };
  check_against_reference(filters);  // some top-p rows without top-k: the full-sort path
  std::vector<RowFilter> all_with_k(filters);
  for (RowFilter& f : all_with_k) f.top_k = f.top_k > 0 ? f.top_k : 25;
  check_against_reference(all_with_k);  // every top-p row has a top-k: the topk path
  auto mask = keep_mask(probs, filters);
  auto perm = at::randperm(vocab, gen);
  CHECK(keep_mask(probs.index_select(1, perm), filters).equal(mask.index_select(1, perm)));
}

TEST_CASE("top-p over a large vocabulary: among the 1024 largest, or a full sort when flat",
          "[sampler]") {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(9);
  const int64_t vocab = 5000;
  // Row 0 is peaked (its top-p prefix is a few tokens, found among the candidates); row 1 is
  // nearly flat (its prefix holds thousands of tokens: the sort path); both against the reference.
  auto logits = at::randn({2, vocab}, gen, at::TensorOptions().dtype(at::kFloat));
  logits[0].mul_(6.0);
  logits[1].mul_(0.05);
  auto probs = at::softmax(logits, 1);
  const std::vector<RowFilter> filters{top_p(0.9), top_p(0.7)};
  auto mask = keep_mask(probs, filters);
  for (int64_t r = 0; r < 2; ++r) {
    std::vector<double> p(vocab);
    auto row = probs[r].contiguous();
    for (int64_t i = 0; i < vocab; ++i) p[i] = row.data_ptr<float>()[i];
    const std::vector<bool> want = reference(p, filters[r]);
    int64_t kept_count = 0, mismatches = 0;
    auto m = mask[r].contiguous();
    for (int64_t i = 0; i < vocab; ++i) {
      kept_count += m.data_ptr<bool>()[i];
      mismatches += m.data_ptr<bool>()[i] != want[i];
    }
    CAPTURE(r, kept_count);
    CHECK(mismatches == 0);
    CHECK(kept_count < vocab);
    if (r == 0) CHECK(kept_count < 1024);
    if (r == 1) CHECK(kept_count > 1024);
  }
}

TEST_CASE("the cut on the logits keeps what keep_mask keeps on their softmax", "[sampler]") {
  // keep_threshold (the CUDA sampler's filters): random rows of a vocabulary past the 1024
  // candidates, every filter combination, a masked token (-inf) per row, peaked and flat rows (the
  // flat top-p rows reach past the candidates: the sort path).
  auto gen = at::make_generator<at::CPUGeneratorImpl>(21);
  const int64_t rows = 60, vocab = 3000;
  // Rounded to bf16 (as the engine's logits are): many ties, some at a top-k boundary past the
  // candidates (top_k 1500).
  auto z = (at::randn({rows, vocab}, gen, at::TensorOptions().dtype(at::kFloat)) * 3)
               .to(at::kBFloat16)
               .to(at::kFloat);
  for (int64_t r = 0; r < rows; ++r) {
    if (r % 4 == 3) z[r].mul_(0.02);
    z[r][r * 7] = -std::numeric_limits<float>::infinity();
  }
  std::vector<RowFilter> filters;
  for (int64_t r = 0; r < rows; ++r) {
    const double u = at::rand({1}, gen).item<double>();
    const int64_t k = r % 6 == 2 ? 1500 : r % 3 == 0 ? 0 : 1 + (r * 37) % 200;
    filters.push_back(
        RowFilter{k, r % 2 || r % 6 == 2 ? 0.3 + 0.69 * u : 1.0, r % 5 == 0 ? 0.05 * u : 0.0});
  }
  filters[1] = RowFilter{};  // a row without filters: -inf, everything kept
  const auto threshold = vime::engine::keep_threshold(z, filters);
  CHECK(std::isinf(threshold[1].item<float>()));
  const auto by_cut = z >= threshold.unsqueeze(1);
  const auto by_probs = keep_mask(at::softmax(z, 1), filters);
  int64_t narrowed = 0;
  for (int64_t r = 0; r < rows; ++r) {
    CAPTURE(r, filters[r].top_k, filters[r].top_p, filters[r].min_p);
    // The masked token has probability 0: keep_mask keeps it only where nothing filters.
    auto cut = by_cut[r].clone(), probs = by_probs[r].clone();
    cut[r * 7] = false;
    probs[r * 7] = false;
    CHECK(cut.equal(probs));
    narrowed += probs.sum().item<int64_t>() < vocab - 1;
  }
  CHECK(narrowed > rows / 2);
}
