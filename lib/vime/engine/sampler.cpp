#include "vime/engine/sampler.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>  // NoGradGuard: LibTorch 2.11's ATen.h no longer brings it

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "vime/engine/logits_filter.hpp"
#include "vime/engine/philox.hpp"
#include "vime/error.hpp"

namespace vime::engine {
namespace {

// (row, token) pairs that min_new_tokens keeps from being sampled this step.
struct MaskedTokens {
  std::vector<int64_t> rows, tokens;
};

MaskedTokens min_new_tokens_mask(const std::vector<SamplerRow>& rows, int64_t vocab) {
  MaskedTokens masked;
  for (size_t r = 0; r < rows.size(); ++r) {
    const RowSampling& s = *rows[r].sampling;
    if (rows[r].num_generated >= s.min_new_tokens) continue;
    for (int32_t id : s.finishing_token_ids()) {
      if (id < 0 || id >= vocab) continue;  // an id the model cannot produce needs no mask
      masked.rows.push_back(static_cast<int64_t>(r));
      masked.tokens.push_back(id);
    }
  }
  return masked;
}

// Inverse-CDF draw of one token per row from the unnormalised weights `kept` ([batch, vocab]).
at::Tensor draw(const at::Tensor& kept, const std::vector<SamplerRow>& rows) {
  std::vector<double> uniforms;
  uniforms.reserve(rows.size());
  for (const SamplerRow& row : rows)
    uniforms.push_back(
        philox_uniform(row.sampling->seed, static_cast<uint64_t>(row.num_generated)));
  // fp64 so that u * total < total holds exactly and the first cdf entry above it is a kept token.
  auto cdf = kept.to(at::kDouble).cumsum(1);
  auto total = cdf.select(1, cdf.size(1) - 1);
  auto target = at::tensor(uniforms, at::kDouble).to(kept.device()) * total;
  return (cdf <= target.unsqueeze(1)).sum(1).clamp_max(kept.size(1) - 1);
}

}  // namespace

SampledTokens sample_tokens(const at::Tensor& logits, const std::vector<SamplerRow>& rows,
                            LogProbMode mode) {
  if (logits.dim() != 2 || logits.size(0) != static_cast<int64_t>(rows.size()))
    throw Error("sample_tokens: logits must be [batch, vocab] with one SamplerRow per row, got " +
                std::to_string(logits.dim()) + " dims for " + std::to_string(rows.size()) +
                " rows");
  SampledTokens out;
  if (rows.empty()) return out;
  const int64_t vocab = logits.size(1);
  const auto device = logits.device();

  std::vector<float> temperature;
  std::vector<uint8_t> greedy;
  std::vector<RowFilter> filters;
  bool all_greedy = true, any_filter = false;
  for (const SamplerRow& row : rows) {
    if (row.sampling == nullptr)
      throw Error("sample_tokens: a SamplerRow has no sampling settings");
    const RowSampling& s = *row.sampling;
    greedy.push_back(s.greedy());
    temperature.push_back(s.greedy() ? 1.0f : static_cast<float>(s.temperature));
    filters.push_back(s.greedy() ? RowFilter{} : RowFilter{s.top_k, s.top_p, s.min_p});
    all_greedy &= s.greedy();
    any_filter |= filters.back().active();
  }

  at::NoGradGuard no_grad;
  auto z = logits.to(at::kFloat) / at::tensor(temperature, at::kFloat).to(device).unsqueeze(1);
  auto log_p = at::log_softmax(z, 1);  // what the trainer computes

  // The processed distribution: min_new_tokens mask, then the filters.
  auto z_masked = z;
  auto log_p_masked = log_p;
  const MaskedTokens masked = min_new_tokens_mask(rows, vocab);
  if (!masked.rows.empty()) {
    z_masked = z.index_put({at::tensor(masked.rows, at::kLong).to(device),
                            at::tensor(masked.tokens, at::kLong).to(device)},
                           at::scalar_tensor(-std::numeric_limits<float>::infinity(), z.options()));
    log_p_masked = at::log_softmax(z_masked, 1);
  }
  auto greedy_t = at::tensor(greedy, at::kByte).to(device, at::kBool);
  at::Tensor tokens = z_masked.argmax(1);
  at::Tensor kept_mass, kept;
  if (!all_greedy || mode == LogProbMode::kProcessed) {
    auto probs = log_p_masked.exp();
    kept = any_filter ? probs * keep_mask(probs, filters) : probs;
    if (!all_greedy) tokens = at::where(greedy_t, tokens, draw(kept, rows));
    kept_mass = kept.sum(1);
  }
  auto token_index = tokens.unsqueeze(1);
  at::Tensor chosen_log_p, distribution;  // distribution: what the log-probs are taken from
  if (mode == LogProbMode::kTemperature) {
    distribution = log_p;
    chosen_log_p = log_p.gather(1, token_index).squeeze(1);
  } else {
    // Greedy rows: vLLM returns log_softmax of the masked logits; they have no filter, so their
    // kept mass is 1 up to rounding, and is left out.
    auto renorm = at::where(greedy_t, at::zeros_like(kept_mass), kept_mass.log());
    chosen_log_p = log_p_masked.gather(1, token_index).squeeze(1) - renorm;
    distribution = log_p_masked - renorm.unsqueeze(1);
    if (any_filter)  // filtered tokens cannot be sampled: -inf, as vLLM's processed log-probs
      distribution = distribution.masked_fill((kept == 0) & greedy_t.logical_not().unsqueeze(1),
                                              -std::numeric_limits<float>::infinity());
  }
  int64_t max_top = 0;
  for (const SamplerRow& row : rows) max_top = std::max(max_top, row.top_logprobs);
  max_top = std::min(max_top, vocab);
  out.top.resize(rows.size());
  if (max_top > 0) {
    auto [values, ids] = distribution.topk(max_top, 1);
    auto values_cpu = values.to(at::kCPU, at::kFloat).contiguous();
    auto ids_cpu = ids.to(at::kCPU, at::kLong).contiguous();
    const float* v = values_cpu.data_ptr<float>();
    const int64_t* id = ids_cpu.data_ptr<int64_t>();
    for (size_t r = 0; r < rows.size(); ++r) {
      const int64_t n = std::min(rows[r].top_logprobs, max_top);
      for (int64_t j = 0; j < n; ++j)
        out.top[r].push_back({static_cast<int32_t>(id[r * max_top + j]), v[r * max_top + j]});
    }
  }

  // One host sync per step: the ids come back through pinned memory without waiting, then the
  // log-probs' blocking copy on the same stream waits for both.
  auto tokens_cpu = at::empty({static_cast<int64_t>(rows.size())},
                              at::TensorOptions().dtype(at::kInt).pinned_memory(device.is_cuda()));
  tokens_cpu.copy_(tokens.to(at::kInt), /*non_blocking=*/true);
  auto log_p_cpu = chosen_log_p.to(at::kCPU, at::kFloat).contiguous();
  const int32_t* t = tokens_cpu.data_ptr<int32_t>();
  const float* lp = log_p_cpu.data_ptr<float>();
  out.token_ids.assign(t, t + rows.size());
  out.log_probs.assign(lp, lp + rows.size());
  for (size_t r = 0; r < rows.size(); ++r)
    if (!std::isfinite(out.log_probs[r]))
      throw Error("sample_tokens: row " + std::to_string(r) +
                  " has no token to sample (NaN or infinite logits, or every token masked)");
  return out;
}

}  // namespace vime::engine
