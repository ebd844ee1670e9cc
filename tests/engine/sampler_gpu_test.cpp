// On the GPU machine (skipped without CUDA): vime's sampling kernel (SamplerPath::kAuto on CUDA
// logits) against the ATen reference path on the same logits. Greedy ids are equal. Sampled ids
// are equal except where the uniform falls within the rounding of a token boundary: the kernel
// weighs tokens by exp(z - max z), the reference by exp(log_softmax(z)), whose fp32 rounding
// differs by ~1e-6 relative per token; over a flat 151,936-token row that moves a few percent of
// the draws to a neighbouring token, on a peaked row almost none. So the ids are compared by
// agreement, and the distribution by chi-square, as the CPU sampler's tests do.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "support/skip.hpp"
#include "vime/engine/logits_filter.hpp"
#include "vime/engine/sampler.hpp"

using namespace vime::engine;

namespace {

at::Tensor cuda_logits(int64_t rows, int64_t vocab, uint64_t seed, double scale,
                       at::ScalarType dtype) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return (at::randn({rows, vocab}, gen, at::TensorOptions().dtype(at::kFloat)) * scale)
      .to(dtype)
      .to(at::kCUDA);
}

RowSampling setting(double temperature, uint64_t seed, int64_t top_k = 0, double top_p = 1.0,
                    double min_p = 0.0) {
  RowSampling s;
  s.temperature = temperature;
  s.seed = seed;
  s.top_k = top_k;
  s.top_p = top_p;
  s.min_p = min_p;
  return s;
}

std::vector<SamplerRow> rows_of(const std::vector<RowSampling>& settings, int64_t step) {
  std::vector<SamplerRow> rows;
  for (const RowSampling& s : settings) rows.push_back({&s, step});
  return rows;
}

struct Comparison {
  int64_t draws = 0, same = 0, greedy_draws = 0, greedy_same = 0;
  double max_log_prob_diff = 0;  // over the equal ids
};

// Both paths over `steps` steps of the same logits.
Comparison compare(const at::Tensor& logits, const std::vector<RowSampling>& settings,
                   LogProbMode mode, int64_t steps) {
  Comparison c;
  for (int64_t step = 0; step < steps; ++step) {
    const auto rows = rows_of(settings, step);
    const auto kernel = sample_tokens(logits, rows, mode, SamplerPath::kAuto);
    const auto reference = sample_tokens(logits, rows, mode, SamplerPath::kReference);
    for (size_t r = 0; r < rows.size(); ++r) {
      const bool same = kernel.token_ids[r] == reference.token_ids[r];
      if (settings[r].greedy()) {
        ++c.greedy_draws;
        c.greedy_same += same;
      } else {
        ++c.draws;
        c.same += same;
      }
      if (same)
        c.max_log_prob_diff = std::max<double>(
            c.max_log_prob_diff, std::abs(kernel.log_probs[r] - reference.log_probs[r]));
    }
  }
  return c;
}

}  // namespace

TEST_CASE("the CUDA sampling kernel draws the reference path's tokens", "[gpu][engine_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  const int64_t vocab = 151936, batch = 48;
  struct Case {
    const char* name;
    double temperature;
    int64_t top_k;
    double top_p, min_p;
  };
  const Case cases[] = {
      {"plain T=1", 1.0, 0, 1.0, 0.0},           {"T=0.7 top_k=50", 0.7, 50, 1.0, 0.0},
      {"top_p=0.9", 1.0, 0, 0.9, 0.0},           {"top_k=20 top_p=0.8", 0.8, 20, 0.8, 0.0},
      {"min_p=0.05", 1.0, 0, 1.0, 0.05},         {"min_p+top_p", 1.0, 0, 0.95, 0.02},
      {"top_k=2000 top_p", 1.2, 2000, 0.97, 0.0}};
  for (auto dtype : {at::kBFloat16, at::kFloat}) {
    for (double scale : {3.0, 12.0}) {  // flat-ish and peaked rows
      auto logits = cuda_logits(batch, vocab, 7 + static_cast<uint64_t>(scale), scale, dtype);
      for (const Case& k : cases) {
        for (auto mode : {LogProbMode::kTemperature, LogProbMode::kProcessed}) {
          std::vector<RowSampling> settings;
          for (int64_t r = 0; r < batch; ++r)
            settings.push_back(r % 8 == 5
                                   ? setting(0.0, r)
                                   : setting(k.temperature, 1000 + r, k.top_k, k.top_p, k.min_p));
          const Comparison c = compare(logits, settings, mode, 4);
          const double agreement = double(c.same) / double(c.draws);
          INFO(k.name << ", " << c10::toString(dtype) << ", scale " << scale << ", "
                      << (mode == LogProbMode::kProcessed ? "processed" : "temperature")
                      << ": ids equal in " << c.same << " of " << c.draws
                      << " draws, log-prob diff " << c.max_log_prob_diff);
          CHECK(c.greedy_same == c.greedy_draws);
          CHECK(agreement >= (scale > 5 ? 0.98 : 0.85));
          CHECK(c.max_log_prob_diff < 2e-4);
          if (k.temperature == 1.0 && k.top_k == 0 && k.min_p == 0.0 && k.top_p == 1.0)
            WARN(k.name << ", " << c10::toString(dtype) << ", scale " << scale
                        << ": kernel and reference ids equal in " << c.same << " of " << c.draws
                        << " draws, log-prob diff " << c.max_log_prob_diff);
        }
      }
    }
  }
}

TEST_CASE("the CUDA sampling kernel's log-probs are log_softmax(logits / T)", "[gpu][engine_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  auto logits = cuda_logits(32, 151936, 3, 4.0, at::kBFloat16);
  std::vector<RowSampling> settings;
  for (int r = 0; r < 32; ++r)
    settings.push_back(setting(r % 4 == 0 ? 0.0 : 0.4 + 0.1 * r, 200 + r, r % 3 ? 40 : 0, 0.9));
  const auto out = sample_tokens(logits, rows_of(settings, 5));
  for (int r = 0; r < 32; ++r) {
    const double t = settings[r].greedy() ? 1.0 : settings[r].temperature;
    const double want =
        at::log_softmax(logits[r].to(at::kDouble) / t, 0)[out.token_ids[r]].item<double>();
    INFO("row " << r);
    CHECK(out.log_probs[r] == Approx(want).margin(1e-4));
  }
}

TEST_CASE("the CUDA sampling kernel's draws do not depend on the batch", "[gpu][engine_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  const int64_t vocab = 151936;
  auto mine = cuda_logits(1, vocab, 5, 3.0, at::kBFloat16);
  const RowSampling me = setting(0.9, 4242, 0, 0.95);
  std::vector<int32_t> alone, crowded;
  for (int64_t step = 0; step < 30; ++step) {
    alone.push_back(sample_tokens(mine, {{&me, step}}).token_ids[0]);
    auto batch = at::cat({cuda_logits(3, vocab, 100 + step, 3.0, at::kBFloat16), mine,
                          cuda_logits(5, vocab, 200 + step, 3.0, at::kBFloat16)});
    std::vector<RowSampling> others;
    for (int i = 0; i < 8; ++i) others.push_back(setting(0.5 + 0.2 * i, step * 10 + i, i * 7));
    std::vector<SamplerRow> rows;
    for (int i = 0; i < 3; ++i) rows.push_back({&others[i], step + i});
    rows.push_back({&me, step});
    for (int i = 3; i < 8; ++i) rows.push_back({&others[i], 3 * step});
    crowded.push_back(sample_tokens(batch, rows).token_ids[3]);
  }
  CHECK(alone == crowded);
}

TEST_CASE("the CUDA sampling kernel's draws follow the filtered softmax (chi-square)",
          "[gpu][engine_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  // The CPU test's ten tokens (T = 0.8, top_k = 6, top_p = 0.9), here 20k rows on the kernel, and
  // a min_new_tokens mask on token 1 (the kernel skips it; the rest renormalises).
  const std::vector<float> row{2.0f, 1.5f, 1.4f, 0.9f, 0.3f, 0.2f, -0.1f, -0.5f, -1.0f, 1.0f};
  const int64_t n = 20000, vocab = 10;
  auto logits = at::tensor(row, at::kFloat).unsqueeze(0).repeat({n, 1}).to(at::kCUDA);
  auto probs = at::softmax(at::tensor(row, at::kFloat) / 0.8, 0);
  for (bool masked : {false, true}) {
    auto p = probs.clone();
    if (masked) p[1] = 0.0f;
    p = p / p.sum();
    auto keep = keep_mask(p.unsqueeze(0), {RowFilter{6, 0.9, 0.0}})[0];
    auto filtered = p * keep;
    filtered = (filtered / filtered.sum()).to(at::kDouble).contiguous();
    const std::vector<double> expected(filtered.data_ptr<double>(),
                                       filtered.data_ptr<double>() + vocab);
    std::vector<RowSampling> settings;
    for (int64_t i = 0; i < n; ++i) {
      settings.push_back(setting(0.8, 5000 + i, 6, 0.9));
      if (masked) {
        settings.back().stop_token_ids = {1};
        settings.back().min_new_tokens = 10;
      }
    }
    const auto out = sample_tokens(logits, rows_of(settings, 0));
    std::vector<int64_t> counts(vocab, 0);
    for (int32_t t : out.token_ids) ++counts.at(t);
    double chi = 0;
    int64_t dof = -1;
    for (int64_t t = 0; t < vocab; ++t) {
      if (expected[t] == 0) {
        CHECK(counts[t] == 0);  // filtered (or masked) tokens never come out
        continue;
      }
      const double e = expected[t] * n;
      chi += (counts[t] - e) * (counts[t] - e) / e;
      ++dof;
    }
    INFO("masked " << masked << ": chi-square " << chi << " with " << dof << " dof");
    REQUIRE(dof >= 3);
    CHECK(chi < 25.0);  // above the 0.001 critical value for up to 6 dof (22.46)
  }
}

TEST_CASE("the CUDA sampling kernel's top alternatives are the reference's", "[gpu][engine_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  auto logits = cuda_logits(6, 151936, 13, 6.0, at::kBFloat16);
  std::vector<RowSampling> settings;
  for (int r = 0; r < 6; ++r)
    settings.push_back(setting(r == 0 ? 0.0 : 0.8, 9 + r, r % 2 ? 30 : 0, 0.9));
  for (auto mode : {LogProbMode::kTemperature, LogProbMode::kProcessed}) {
    std::vector<SamplerRow> rows = rows_of(settings, 1);
    for (auto& row : rows) row.top_logprobs = 5;
    const auto kernel = sample_tokens(logits, rows, mode, SamplerPath::kAuto);
    const auto reference = sample_tokens(logits, rows, mode, SamplerPath::kReference);
    for (int r = 0; r < 6; ++r) {
      REQUIRE(kernel.top[r].size() == 5);
      REQUIRE(reference.top[r].size() == 5);
      for (int j = 0; j < 5; ++j) {
        // The same token, or one whose bf16 logit ties it (topk orders ties as it likes).
        const int32_t a = kernel.top[r][j].token_id, b = reference.top[r][j].token_id;
        CHECK((a == b || logits[r][a].item<float>() == logits[r][b].item<float>()));
        CHECK(kernel.top[r][j].log_prob == Approx(reference.top[r][j].log_prob).margin(1e-4));
      }
    }
  }
}

TEST_CASE("the CUDA sampling kernel reports rows with nothing to sample", "[gpu][engine_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  auto logits = cuda_logits(3, 1000, 2, 3.0, at::kFloat);
  logits[1][17] = NAN;
  const std::vector<RowSampling> settings(3, setting(1.0, 1));
  CHECK_THROWS_WITH(sample_tokens(logits, rows_of(settings, 0)), Catch::Contains("row 1"));
  // Odd sizes and a row stride past the vocabulary (a narrowed view) take the unaligned loads.
  auto wide = cuda_logits(4, 1003, 3, 3.0, at::kBFloat16);
  auto view = wide.narrow(1, 1, 1001);
  const std::vector<RowSampling> greedy(4, setting(0.0, 0));
  const auto out = sample_tokens(view, rows_of(greedy, 0));
  auto argmax = view.to(at::kFloat).argmax(1).cpu();
  for (int r = 0; r < 4; ++r) CHECK(out.token_ids[r] == argmax[r].item<int64_t>());
}
