// The sampling step: greedy, the returned log-probs (against the trainer's own computation),
// per-request seeds independent of the batch, the empirical distribution of many draws, and
// min_new_tokens.
#include "vime/engine/sampler.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "vime/engine/logits_filter.hpp"
#include "vime/error.hpp"
#include "vime/train/log_probs.hpp"

using namespace vime::engine;

namespace {

at::Tensor random_logits(int64_t rows, int64_t vocab, uint64_t seed, double scale = 3.0) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randn({rows, vocab}, gen, at::TensorOptions().dtype(at::kFloat)) * scale;
}

RowSampling sampling(double temperature, uint64_t seed = 0, int64_t top_k = 0, double top_p = 1.0) {
  RowSampling s;
  s.temperature = temperature;
  s.seed = seed;
  s.top_k = top_k;
  s.top_p = top_p;
  return s;
}

std::vector<SamplerRow> rows_of(const std::vector<RowSampling>& settings, int64_t step = 0) {
  std::vector<SamplerRow> rows;
  for (const RowSampling& s : settings) rows.push_back({&s, step});
  return rows;
}

// Pearson's chi-square of `counts` against probabilities `expected` (over the tokens with p > 0).
double chi_square(const std::vector<int64_t>& counts, const std::vector<double>& expected,
                  int64_t n) {
  double chi = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (expected[i] <= 0) continue;
    const double e = expected[i] * n;
    chi += (counts[i] - e) * (counts[i] - e) / e;
  }
  return chi;
}

std::vector<double> to_vector(const at::Tensor& t) {
  auto c = t.to(at::kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

}  // namespace

TEST_CASE("greedy rows take the argmax (the first of tied maxima)", "[sampler]") {
  auto logits = random_logits(6, 50, 1);
  logits[2][7] = 100.0f;
  logits[2][31] = 100.0f;  // a tie: argmax is the first
  const std::vector<RowSampling> settings(6, sampling(0.0, 0, /*top_k=*/3, /*top_p=*/0.1));
  const auto out = sample_tokens(logits, rows_of(settings));
  auto argmax = logits.argmax(1);
  for (int64_t r = 0; r < 6; ++r) CHECK(out.token_ids[r] == argmax[r].item<int64_t>());
  CHECK(out.token_ids[2] == 7);
  // Greedy log-probs are log_softmax(logits) at T = 1.
  auto lp = at::log_softmax(logits, 1).gather(1, argmax.unsqueeze(1)).squeeze(1);
  for (int64_t r = 0; r < 6; ++r) CHECK(out.log_probs[r] == lp[r].item<float>());
}

TEST_CASE("returned log-probs are the trainer's log_softmax(logits / T), bit for bit",
          "[sampler]") {
  for (auto dtype : {at::kFloat, at::kBFloat16}) {
    auto logits = random_logits(16, 1000, 2).to(dtype);
    std::vector<RowSampling> settings;
    for (int r = 0; r < 16; ++r)
      settings.push_back(
          sampling(0.3 + 0.1 * r, 100 + r, /*top_k=*/r % 4 ? 20 : 0, r % 3 ? 0.9 : 1.0));
    const auto out = sample_tokens(logits, rows_of(settings));
    for (int r = 0; r < 16; ++r) {
      auto row = at::tensor(std::vector<int64_t>{r}, at::kLong);
      auto target = at::tensor(std::vector<int64_t>{out.token_ids[r]}, at::kLong);
      const float trainer =
          vime::train::token_log_probs(logits, row, target, settings[r].temperature)
              .log_probs[0]
              .item<float>();
      INFO("row " << r << " dtype " << dtype);
      CHECK(out.log_probs[r] == trainer);
      const float direct =
          at::log_softmax(logits[r].to(at::kFloat) / settings[r].temperature, 0)[out.token_ids[r]]
              .item<float>();
      CHECK(out.log_probs[r] == direct);
    }
  }
}

TEST_CASE("processed log-probs are renormalised over the kept tokens (vLLM's processed_logprobs)",
          "[sampler]") {
  auto logits = random_logits(8, 200, 3);
  std::vector<RowSampling> settings;
  for (int r = 0; r < 8; ++r) settings.push_back(sampling(0.7, 50 + r, 10, 0.8));
  const auto temp = sample_tokens(logits, rows_of(settings), LogProbMode::kTemperature);
  const auto processed = sample_tokens(logits, rows_of(settings), LogProbMode::kProcessed);
  CHECK(temp.token_ids == processed.token_ids);  // the mode changes the log-prob only
  auto probs = at::softmax(logits / 0.7, 1);
  auto keep = keep_mask(probs, std::vector<RowFilter>(8, RowFilter{10, 0.8, 0.0}));
  for (int r = 0; r < 8; ++r) {
    auto z = (logits[r] / 0.7).masked_fill(keep[r].logical_not(), -INFINITY);
    const double want =
        at::log_softmax(z.to(at::kDouble), 0)[processed.token_ids[r]].item<double>();
    CHECK(processed.log_probs[r] == Approx(want).epsilon(1e-5).margin(1e-6));
    CHECK(processed.log_probs[r] > temp.log_probs[r]);  // mass was cut away
    CHECK(keep[r][processed.token_ids[r]].item<bool>());
  }
}

TEST_CASE("a seeded request samples the same tokens whatever else is in the batch", "[sampler]") {
  const int64_t vocab = 64, steps = 40;
  const RowSampling mine = sampling(1.0, 424242, 0, 0.95);
  std::vector<RowSampling> others{sampling(0.0), sampling(1.3, 1, 5), sampling(0.5, 2),
                                  sampling(1.0, 424243)};
  std::vector<int32_t> alone, crowded, reseeded;
  for (int64_t step = 0; step < steps; ++step) {
    auto mine_logits = random_logits(1, vocab, 1000 + step, 1.0);
    alone.push_back(sample_tokens(mine_logits, {{&mine, step}}).token_ids[0]);
    // The same request as row 2 of 5, beside rows with other settings and logits.
    auto batch = at::cat(
        {random_logits(2, vocab, 7 + step), mine_logits, random_logits(2, vocab, 9 + step)});
    std::vector<SamplerRow> rows{{&others[0], step},
                                 {&others[1], 3},
                                 {&mine, step},
                                 {&others[2], step + 5},
                                 {&others[3], step}};
    crowded.push_back(sample_tokens(batch, rows).token_ids[2]);
    const RowSampling other_seed = sampling(1.0, 424243, 0, 0.95);
    reseeded.push_back(sample_tokens(mine_logits, {{&other_seed, step}}).token_ids[0]);
  }
  CHECK(alone == crowded);
  CHECK(alone != reseeded);  // the seed matters: 40 draws from ~60 tokens never all agree by chance
}

TEST_CASE("20k draws follow the filtered softmax (chi-square)", "[sampler]") {
  // Ten tokens; T = 0.8, top_k = 6, top_p = 0.9 leave a known set.
  const std::vector<float> row{2.0f, 1.5f, 1.4f, 0.9f, 0.3f, 0.2f, -0.1f, -0.5f, -1.0f, 1.0f};
  const int64_t n = 20000, vocab = 10;
  auto logits = at::tensor(row, at::kFloat).unsqueeze(0).repeat({n, 1});
  auto probs = at::softmax(at::tensor(row, at::kFloat) / 0.8, 0);
  auto keep = keep_mask(probs.unsqueeze(0), {RowFilter{6, 0.9, 0.0}})[0];
  auto filtered = probs * keep;
  const std::vector<double> expected = to_vector(filtered / filtered.sum());
  REQUIRE(keep.sum().item<int64_t>() == 5);  // tokens 0, 1, 2, 3, 9: chi-square with 4 dof
  const double critical_4dof_p001 = 18.47;

  auto count = [&](const std::vector<int32_t>& tokens) {
    std::vector<int64_t> counts(vocab, 0);
    for (int32_t t : tokens) ++counts.at(t);
    return counts;
  };
  // Many requests (one seed each) at one step, and one request over many steps.
  std::vector<RowSampling> per_seed;
  for (int64_t i = 0; i < n; ++i) per_seed.push_back(sampling(0.8, 1000 + i, 6, 0.9));
  const auto by_seed = count(sample_tokens(logits, rows_of(per_seed)).token_ids);
  const RowSampling one = sampling(0.8, 77, 6, 0.9);
  std::vector<SamplerRow> steps;
  for (int64_t i = 0; i < n; ++i) steps.push_back({&one, i});
  const auto by_step = count(sample_tokens(logits, steps).token_ids);

  for (const auto& counts : {by_seed, by_step}) {
    for (int64_t t = 0; t < vocab; ++t)
      if (expected[t] == 0) CHECK(counts[t] == 0);  // filtered tokens never come out
    CHECK(chi_square(counts, expected, n) < critical_4dof_p001);
    // The test has power: the same draws reject the softmax at T = 1 on the same set, and the
    // set without top-p's cut.
    auto wrong_t = at::softmax(at::tensor(row, at::kFloat), 0) * keep;
    CHECK(chi_square(counts, to_vector(wrong_t / wrong_t.sum()), n) > 10 * critical_4dof_p001);
    auto top6 = probs * keep_mask(probs.unsqueeze(0), {RowFilter{6, 1.0, 0.0}})[0];
    CHECK(chi_square(counts, to_vector(top6 / top6.sum()), n) > 10 * critical_4dof_p001);
  }
}

TEST_CASE("min_new_tokens keeps EOS and stop ids out until enough tokens came", "[sampler]") {
  auto logits = at::zeros({1, 8}, at::kFloat);
  logits[0][2] = 12.0f;  // EOS, by far the most likely
  logits[0][5] = 11.0f;  // a stop id
  RowSampling s = sampling(1.0, 9);
  s.eos_token_ids = {2};
  s.stop_token_ids = {5};
  s.min_new_tokens = 3;
  RowSampling greedy = s;
  greedy.temperature = 0;
  for (int64_t seed = 0; seed < 200; ++seed) {
    s.seed = seed;
    for (int64_t step = 0; step < 3; ++step) {
      const int32_t t = sample_tokens(logits, {{&s, step}}).token_ids[0];
      REQUIRE(t != 2);
      REQUIRE(t != 5);
    }
  }
  CHECK(sample_tokens(logits, {{&greedy, 2}}).token_ids[0] == 0);  // first of the tied zeros
  CHECK(sample_tokens(logits, {{&greedy, 3}}).token_ids[0] == 2);
  // Once reached, EOS is back (it has ~73% of the mass at step 3).
  int eos = 0;
  for (int64_t seed = 0; seed < 200; ++seed) {
    s.seed = seed;
    eos += sample_tokens(logits, {{&s, 3}}).token_ids[0] == 2;
  }
  CHECK(eos > 100);
  // ignore_eos: EOS is an ordinary token, never masked; the stop id still is.
  RowSampling ignoring = greedy;
  ignoring.ignore_eos = true;
  CHECK(sample_tokens(logits, {{&ignoring, 0}}).token_ids[0] == 2);
  // The temperature log-prob stays the trainer's; the processed one is renormalised without them.
  const auto temp = sample_tokens(logits, {{&greedy, 0}}, LogProbMode::kTemperature);
  const auto processed = sample_tokens(logits, {{&greedy, 0}}, LogProbMode::kProcessed);
  CHECK(temp.log_probs[0] == at::log_softmax(logits, 1)[0][0].item<float>());
  CHECK(processed.log_probs[0] == Approx(std::log(1.0 / 6)).epsilon(1e-6));
}

TEST_CASE("rows with nothing to sample and malformed batches fail with a clear error",
          "[sampler]") {
  auto logits = random_logits(2, 10, 4);
  logits[1][3] = NAN;
  const std::vector<RowSampling> settings(2, sampling(1.0));
  CHECK_THROWS_WITH(sample_tokens(logits, rows_of(settings)), Catch::Contains("row 1"));
  CHECK_THROWS_AS(sample_tokens(random_logits(3, 10, 4), rows_of(settings)), vime::Error);
  CHECK(sample_tokens(at::zeros({0, 10}), {}).token_ids.empty());
}
