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

#if defined(VIME_HAS_CUDA_KERNELS)
#include <c10/cuda/CUDAStream.h>

#include "vime/engine/sampling_kernel.hpp"
#endif

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

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// The rows' settings as the sampler uses them.
struct RowSettings {
  std::vector<float> temperature;  // 1 for greedy rows
  std::vector<uint8_t> greedy;
  std::vector<RowFilter> filters;  // none for greedy rows
  bool all_greedy = true, any_filter = false;
  int64_t max_top = 0;  // the most top_logprobs a row wants, at most the vocabulary
};

RowSettings settings_of(const at::Tensor& logits, const std::vector<SamplerRow>& rows) {
  if (logits.dim() != 2 || logits.size(0) != static_cast<int64_t>(rows.size()))
    throw Error("sample_tokens: logits must be [batch, vocab] with one SamplerRow per row, got " +
                std::to_string(logits.dim()) + " dims for " + std::to_string(rows.size()) +
                " rows");
  RowSettings out;
  for (const SamplerRow& row : rows) {
    if (row.sampling == nullptr)
      throw Error("sample_tokens: a SamplerRow has no sampling settings");
    const RowSampling& s = *row.sampling;
    out.greedy.push_back(s.greedy());
    out.temperature.push_back(s.greedy() ? 1.0f : static_cast<float>(s.temperature));
    out.filters.push_back(s.greedy() ? RowFilter{} : RowFilter{s.top_k, s.top_p, s.min_p});
    out.all_greedy &= s.greedy();
    out.any_filter |= out.filters.back().active();
    out.max_top = std::max(out.max_top, row.top_logprobs);
  }
  out.max_top = std::min(out.max_top, logits.size(1));
  return out;
}

// logits / temperature in fp32, and the same with the min_new_tokens mask at -inf.
struct ScaledLogits {
  at::Tensor z, z_masked;
};

ScaledLogits scale(const at::Tensor& logits, const RowSettings& settings,
                   const MaskedTokens& masked) {
  const auto device = logits.device();
  ScaledLogits out;
  out.z =
      logits.to(at::kFloat) / at::tensor(settings.temperature, at::kFloat).to(device).unsqueeze(1);
  out.z_masked = out.z;
  if (!masked.rows.empty())
    out.z_masked = out.z.index_put({at::tensor(masked.rows, at::kLong).to(device),
                                    at::tensor(masked.tokens, at::kLong).to(device)},
                                   at::scalar_tensor(kMinusInf, out.z.options()));
  return out;
}

// Each row's top_logprobs most likely tokens under `distribution` ([batch, vocab] log-probs).
std::vector<std::vector<TokenLogProb>> top_alternatives(const at::Tensor& distribution,
                                                        const std::vector<SamplerRow>& rows,
                                                        int64_t max_top) {
  std::vector<std::vector<TokenLogProb>> top(rows.size());
  if (max_top <= 0) return top;
  auto [values, ids] = distribution.topk(max_top, 1);
  auto values_cpu = values.to(at::kCPU, at::kFloat).contiguous();
  auto ids_cpu = ids.to(at::kCPU, at::kLong).contiguous();
  const float* v = values_cpu.data_ptr<float>();
  const int64_t* id = ids_cpu.data_ptr<int64_t>();
  for (size_t r = 0; r < rows.size(); ++r) {
    const int64_t n = std::min(rows[r].top_logprobs, max_top);
    for (int64_t j = 0; j < n; ++j)
      top[r].push_back({static_cast<int32_t>(id[r * max_top + j]), v[r * max_top + j]});
  }
  return top;
}

// The ids and their log-probs into `out`. One host sync per step: the ids come back through
// pinned memory without waiting, then the log-probs' blocking copy on the same stream waits for
// both.
void read_back(const at::Tensor& tokens, const at::Tensor& chosen_log_p, SampledTokens& out) {
  const int64_t batch = tokens.size(0);
  auto tokens_cpu = at::empty(
      {batch}, at::TensorOptions().dtype(at::kInt).pinned_memory(tokens.device().is_cuda()));
  tokens_cpu.copy_(tokens.to(at::kInt), /*non_blocking=*/true);
  auto log_p_cpu = chosen_log_p.to(at::kCPU, at::kFloat).contiguous();
  const int32_t* t = tokens_cpu.data_ptr<int32_t>();
  const float* lp = log_p_cpu.data_ptr<float>();
  out.token_ids.assign(t, t + batch);
  out.log_probs.assign(lp, lp + batch);
  for (int64_t r = 0; r < batch; ++r)
    if (!std::isfinite(out.log_probs[r]))
      throw Error("sample_tokens: row " + std::to_string(r) +
                  " has no token to sample (NaN or infinite logits, or every token masked)");
}

SampledTokens sample_reference(const at::Tensor& logits, const std::vector<SamplerRow>& rows,
                               LogProbMode mode, const RowSettings& settings) {
  SampledTokens out;
  const auto device = logits.device();
  const MaskedTokens masked = min_new_tokens_mask(rows, logits.size(1));
  const auto [z, z_masked] = scale(logits, settings, masked);
  auto log_p = at::log_softmax(z, 1);  // what the trainer computes
  // The processed distribution: min_new_tokens mask, then the filters.
  auto log_p_masked = masked.rows.empty() ? log_p : at::log_softmax(z_masked, 1);
  auto greedy_t = at::tensor(settings.greedy, at::kByte).to(device, at::kBool);
  at::Tensor tokens = z_masked.argmax(1);
  at::Tensor kept_mass, kept;
  if (!settings.all_greedy || mode == LogProbMode::kProcessed) {
    auto probs = log_p_masked.exp();
    kept = settings.any_filter ? probs * keep_mask(probs, settings.filters) : probs;
    if (!settings.all_greedy) tokens = at::where(greedy_t, tokens, draw(kept, rows));
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
    if (settings
            .any_filter)  // filtered tokens cannot be sampled: -inf, as vLLM's processed log-probs
      distribution =
          distribution.masked_fill((kept == 0) & greedy_t.logical_not().unsqueeze(1), kMinusInf);
  }
  out.top = top_alternatives(distribution, rows, settings.max_top);
  read_back(tokens, chosen_log_p, out);
  return out;
}

#if defined(VIME_HAS_CUDA_KERNELS)
bool kernel_available(const at::Tensor& logits) {
  const auto type = logits.scalar_type();
  return logits.is_cuda() && (type == at::kFloat || type == at::kHalf || type == at::kBFloat16) &&
         logits.size(1) > 0 && logits.size(1) < std::numeric_limits<int32_t>::max();
}

cuda_kernels::ElementType element_type(at::ScalarType type) {
  if (type == at::kHalf) return cuda_kernels::ElementType::kHalf;
  if (type == at::kBFloat16) return cuda_kernels::ElementType::kBFloat16;
  return cuda_kernels::ElementType::kFloat;
}

SampledTokens sample_kernel(const at::Tensor& logits_in, const std::vector<SamplerRow>& rows,
                            LogProbMode mode, const RowSettings& settings) {
  SampledTokens out;
  const auto logits = logits_in.stride(1) == 1 ? logits_in : logits_in.contiguous();
  const int64_t batch = logits.size(0), vocab = logits.size(1);
  const auto device = logits.device();
  const MaskedTokens masked = min_new_tokens_mask(rows, vocab);

  // The kernel's parameters in one fp64 buffer (sampling_kernel.hpp's layout), one copy.
  auto host = at::empty({4 * batch + 1 + static_cast<int64_t>(masked.tokens.size())},
                        at::TensorOptions().dtype(at::kDouble).pinned_memory(true));
  double* p = host.data_ptr<double>();
  for (int64_t r = 0; r < batch; ++r) {
    const RowSampling& s = *rows[r].sampling;
    p[r] = settings.greedy[r]
               ? 0.0
               : philox_uniform(s.seed, static_cast<uint64_t>(rows[r].num_generated));
    p[batch + r] = settings.temperature[r];
    p[2 * batch + r] = settings.greedy[r];
  }
  double* offsets = p + 3 * batch;
  std::fill(offsets, offsets + batch + 1, 0.0);
  for (int64_t row : masked.rows) offsets[row + 1] += 1;  // masked.rows ascend
  for (int64_t r = 0; r < batch; ++r) offsets[r + 1] += offsets[r];
  for (size_t i = 0; i < masked.tokens.size(); ++i)
    offsets[batch + 1 + i] = static_cast<double>(masked.tokens[i]);
  auto params = host.to(device, /*non_blocking=*/true);

  ScaledLogits scaled;
  if (settings.any_filter || settings.max_top > 0) scaled = scale(logits, settings, masked);
  at::Tensor threshold;
  if (settings.any_filter)
    threshold = keep_threshold(scaled.z_masked, settings.filters).contiguous();

  auto tokens = at::empty({batch}, logits.options().dtype(at::kInt));
  auto log_probs = at::empty({batch}, logits.options().dtype(at::kFloat));
  cuda_kernels::SamplingLaunch launch;
  launch.logits = logits.data_ptr();
  launch.row_stride = logits.stride(0);
  launch.batch = static_cast<int>(batch);
  launch.vocab = static_cast<int>(vocab);
  launch.type = element_type(logits.scalar_type());
  launch.params = params.data_ptr<double>();
  launch.thresholds = threshold.defined() ? threshold.data_ptr<float>() : nullptr;
  launch.processed = mode == LogProbMode::kProcessed;
  launch.tokens = tokens.data_ptr<int32_t>();
  launch.log_probs = log_probs.data_ptr<float>();
  cuda_kernels::sample_rows(launch, c10::cuda::getCurrentCUDAStream(device.index()).stream());

  if (settings.max_top > 0) {
    at::Tensor distribution;
    if (mode == LogProbMode::kTemperature) {
      distribution = at::log_softmax(scaled.z, 1);
    } else {
      auto kept = threshold.defined()
                      ? at::where(scaled.z_masked >= threshold.unsqueeze(1), scaled.z_masked,
                                  at::scalar_tensor(kMinusInf, scaled.z.options()))
                      : scaled.z_masked;
      distribution = kept - at::logsumexp(kept, 1, /*keepdim=*/true);
    }
    out.top = top_alternatives(distribution, rows, settings.max_top);
  } else {
    out.top.resize(rows.size());
  }
  read_back(tokens, log_probs, out);
  return out;
}
#endif

}  // namespace

SampledTokens sample_tokens(const at::Tensor& logits, const std::vector<SamplerRow>& rows,
                            LogProbMode mode, SamplerPath path) {
  const RowSettings settings = settings_of(logits, rows);
  if (rows.empty()) return {};
  at::NoGradGuard no_grad;
#if defined(VIME_HAS_CUDA_KERNELS)
  if (path == SamplerPath::kAuto && kernel_available(logits))
    return sample_kernel(logits, rows, mode, settings);
#else
  (void)path;
#endif
  return sample_reference(logits, rows, mode, settings);
}

}  // namespace vime::engine
