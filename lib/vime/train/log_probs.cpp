#include "vime/train/log_probs.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <limits>

#include "vime/dist/process_group.hpp"
#include "vime/error.hpp"

namespace vime::train {
namespace {

struct ChunkStats {
  at::Tensor log_probs, entropy, probs, log_p;  // probs/log_p only when asked
};

ChunkStats chunk_stats(const at::Tensor& logits_chunk, const at::Tensor& targets_chunk,
                       double temperature, bool keep_probs) {
  auto z = logits_chunk.to(at::kFloat) / temperature;  // [n, V]
  auto log_p = at::log_softmax(z, -1);
  auto probs = log_p.exp();
  ChunkStats s;
  s.log_probs = log_p.gather(1, targets_chunk.unsqueeze(1)).squeeze(1);
  s.entropy = -(probs * log_p).sum(-1);
  if (keep_probs) {
    s.probs = probs;
    s.log_p = log_p;
  }
  return s;
}

struct ChunkedLogProbs : public torch::autograd::Function<ChunkedLogProbs> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                at::Tensor logits, at::Tensor rows,
                                                at::Tensor targets, double temperature,
                                                int64_t chunk_rows) {
    const int64_t n = rows.numel();
    auto lp = at::empty({n}, logits.options().dtype(at::kFloat));
    auto ent = at::empty({n}, logits.options().dtype(at::kFloat));
    for (int64_t begin = 0; begin < n; begin += chunk_rows) {
      const int64_t len = std::min(chunk_rows, n - begin);
      auto r = rows.narrow(0, begin, len);
      auto s =
          chunk_stats(logits.index_select(0, r), targets.narrow(0, begin, len), temperature, false);
      lp.narrow(0, begin, len).copy_(s.log_probs);
      ent.narrow(0, begin, len).copy_(s.entropy);
    }
    ctx->set_materialize_grads(false);  // an unused entropy costs nothing in backward
    ctx->save_for_backward({logits, rows, targets});
    ctx->saved_data["temperature"] = temperature;
    ctx->saved_data["chunk_rows"] = chunk_rows;
    return {lp, ent};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const auto& logits = saved[0];
    const auto& rows = saved[1];
    const auto& targets = saved[2];
    const double temperature = ctx->saved_data["temperature"].toDouble();
    const int64_t chunk_rows = ctx->saved_data["chunk_rows"].toInt();
    auto grad_logits = at::zeros_like(logits);
    const int64_t n = rows.numel();
    for (int64_t begin = 0; begin < n; begin += chunk_rows) {
      const int64_t len = std::min(chunk_rows, n - begin);
      auto r = rows.narrow(0, begin, len);
      auto t = targets.narrow(0, begin, len);
      auto s = chunk_stats(logits.index_select(0, r), t, temperature, true);
      auto g = at::zeros_like(s.probs);  // d/dz, [len, V] fp32
      if (grads[0].defined()) {
        auto g_lp = grads[0].narrow(0, begin, len).to(at::kFloat).unsqueeze(1);
        g -= s.probs * g_lp;
        g.scatter_add_(1, t.unsqueeze(1), g_lp);
      }
      if (grads[1].defined()) {  // dH/dz_j = -p_j (log p_j + H)
        auto g_h = grads[1].narrow(0, begin, len).to(at::kFloat).unsqueeze(1);
        g -= g_h * s.probs * (s.log_p + s.entropy.unsqueeze(1));
      }
      grad_logits.index_add_(0, r, (g / temperature).to(logits.scalar_type()));
    }
    return {grad_logits, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// One chunk of vocab-parallel rows: z (fp32, scaled, padding at -inf), the global log-normaliser
// log Σ exp z, and this rank's view of the target logit (0 where another rank holds it).
struct VocabChunk {
  at::Tensor z, log_norm, entropy, log_probs;
};

VocabChunk vocab_chunk(const at::Tensor& local_chunk, const at::Tensor& targets_chunk,
                       double temperature, int64_t vocab_size, const TensorParallel& tp,
                       bool with_stats) {
  VocabChunk c;
  const int64_t width = local_chunk.size(1), start = width * tp.rank;
  auto z = local_chunk.to(at::kFloat) / temperature;  // [n, width]
  if (start + width > vocab_size) {
    const int64_t keep = std::max<int64_t>(vocab_size - start, 0);
    z.narrow(1, keep, width - keep).fill_(-std::numeric_limits<float>::infinity());
  }
  c.z = z;
  if (!with_stats) return c;
  auto row_max = std::get<0>(z.max(1));  // -inf on a rank of padding alone
  std::vector<at::Tensor> m{row_max.clone()};
  tp.group->all_reduce(m, dist::ReduceOp::kMax);
  auto shifted = z - m[0].unsqueeze(1);
  auto e = shifted.exp();  // 0 at padding
  auto local = targets_chunk - start;
  auto is_mine = (local >= 0).logical_and(local < width);
  auto target_z =
      shifted.gather(1, local.clamp(0, width - 1).unsqueeze(1)).squeeze(1).masked_fill(~is_mine, 0);
  auto ez = at::where(e > 0, e * shifted, at::zeros_like(e)).sum(1);
  std::vector<at::Tensor> sums{at::stack({e.sum(1), ez, target_z})};  // [3, n]
  tp.group->all_reduce(sums, dist::ReduceOp::kSum);
  auto sum_e = sums[0][0], sum_ez = sums[0][1];
  auto log_sum = sum_e.log();
  c.log_norm = m[0] + log_sum;  // log Σ exp z
  c.log_probs = sums[0][2] - log_sum;
  c.entropy = log_sum - sum_ez / sum_e;  // H = log Σ e - Σ e (z - m) / Σ e
  return c;
}

struct VocabParallelLogProbs : public torch::autograd::Function<VocabParallelLogProbs> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                at::Tensor logits, at::Tensor rows,
                                                at::Tensor targets, double temperature,
                                                int64_t vocab_size, const TensorParallel* tp,
                                                int64_t chunk_rows) {
    const int64_t n = rows.numel();
    auto lp = at::empty({n}, logits.options().dtype(at::kFloat));
    auto ent = at::empty({n}, logits.options().dtype(at::kFloat));
    auto log_norm = at::empty({n}, logits.options().dtype(at::kFloat));
    for (int64_t begin = 0; begin < n; begin += chunk_rows) {
      const int64_t len = std::min(chunk_rows, n - begin);
      auto c = vocab_chunk(logits.index_select(0, rows.narrow(0, begin, len)),
                           targets.narrow(0, begin, len), temperature, vocab_size, *tp, true);
      lp.narrow(0, begin, len).copy_(c.log_probs);
      ent.narrow(0, begin, len).copy_(c.entropy);
      log_norm.narrow(0, begin, len).copy_(c.log_norm);
    }
    ctx->save_for_backward({logits, rows, targets, log_norm, ent});
    ctx->saved_data["temperature"] = temperature;
    ctx->saved_data["vocab_size"] = vocab_size;
    ctx->saved_data["tp"] = reinterpret_cast<int64_t>(tp);
    ctx->saved_data["chunk_rows"] = chunk_rows;
    return {lp, ent};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const auto& logits = saved[0];
    const auto& rows = saved[1];
    const auto& targets = saved[2];
    const double temperature = ctx->saved_data["temperature"].toDouble();
    const int64_t vocab_size = ctx->saved_data["vocab_size"].toInt();
    const auto& tp = *reinterpret_cast<const TensorParallel*>(ctx->saved_data["tp"].toInt());
    const int64_t chunk_rows = ctx->saved_data["chunk_rows"].toInt();
    const int64_t width = logits.size(1), start = width * tp.rank;
    auto grad_logits = at::zeros_like(logits);
    const int64_t n = rows.numel();
    for (int64_t begin = 0; begin < n; begin += chunk_rows) {
      const int64_t len = std::min(chunk_rows, n - begin);
      auto r = rows.narrow(0, begin, len);
      auto t = targets.narrow(0, begin, len);
      auto c = vocab_chunk(logits.index_select(0, r), t, temperature, vocab_size, tp, false);
      auto log_p = c.z - saved[3].narrow(0, begin, len).unsqueeze(1);  // -inf at padding
      auto probs = log_p.exp();
      auto g = at::zeros_like(probs);  // d/dz, [len, width] fp32
      if (grads[0].defined()) {
        auto g_lp = grads[0].narrow(0, begin, len).to(at::kFloat).unsqueeze(1);
        g -= probs * g_lp;
        auto local = t - start;
        auto is_mine = (local >= 0).logical_and(local < width).unsqueeze(1);
        g.scatter_add_(1, local.clamp(0, width - 1).unsqueeze(1), g_lp.masked_fill(~is_mine, 0.0));
      }
      if (grads[1].defined()) {  // dH/dz_j = -p_j (log p_j + H)
        auto g_h = grads[1].narrow(0, begin, len).to(at::kFloat).unsqueeze(1);
        auto entropy = saved[4].narrow(0, begin, len).unsqueeze(1);
        g -= at::where(probs > 0, g_h * probs * (log_p + entropy), at::zeros_like(probs));
      }
      grad_logits.index_add_(0, r, (g / temperature).to(logits.scalar_type()));
    }
    return {grad_logits,  at::Tensor(), at::Tensor(), at::Tensor(),
            at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

TokenLogProbs vocab_parallel_token_log_probs(const at::Tensor& local_logits, const at::Tensor& rows,
                                             const at::Tensor& targets, double temperature,
                                             int64_t vocab_size, const TensorParallel& tp,
                                             int64_t chunk_rows) {
  if (!tp.is_parallel()) {
    return token_log_probs(local_logits.narrow(-1, 0, vocab_size), rows, targets, temperature,
                           chunk_rows);
  }
  if (temperature <= 0) throw Error("temperature must be > 0 to compute log-probs");
  auto all_rows = rows.defined()
                      ? rows
                      : at::arange(local_logits.size(0), local_logits.options().dtype(at::kLong));
  auto out = VocabParallelLogProbs::apply(local_logits, all_rows.to(local_logits.device()),
                                          targets.to(local_logits.device()), temperature,
                                          vocab_size, &tp, std::max<int64_t>(chunk_rows, 1));
  return {out[0], out[1]};
}

TokenLogProbs token_log_probs(const at::Tensor& logits, const at::Tensor& rows,
                              const at::Tensor& targets, double temperature, int64_t chunk_rows) {
  if (temperature <= 0) throw Error("temperature must be > 0 to compute log-probs");
  auto all_rows =
      rows.defined() ? rows : at::arange(logits.size(0), logits.options().dtype(at::kLong));
  auto out =
      ChunkedLogProbs::apply(logits, all_rows.to(logits.device()), targets.to(logits.device()),
                             temperature, std::max<int64_t>(chunk_rows, 1));
  return {out[0], out[1]};
}

ResponseRows response_rows(const at::Tensor& tokens, const std::vector<int64_t>& total_lengths,
                           const std::vector<int64_t>& response_lengths) {
  std::vector<int64_t> rows;
  int64_t start = 0;
  for (size_t i = 0; i < total_lengths.size(); ++i) {
    const int64_t total = total_lengths[i], response = response_lengths[i];
    if (response >= total) {
      throw Error("sample " + std::to_string(i) + ": response_length " + std::to_string(response) +
                  " leaves no prompt token in " + std::to_string(total) + " tokens");
    }
    for (int64_t t = total - response; t < total; ++t) rows.push_back(start + t - 1);
    start += total;
  }
  auto row_tensor = at::tensor(rows, at::TensorOptions().dtype(at::kLong)).to(tokens.device());
  return {row_tensor, tokens.index_select(0, row_tensor + 1)};
}

}  // namespace vime::train
