#include "vime/engine/prompt_log_probs.hpp"

#include <ATen/ATen.h>

#include <algorithm>

#include "vime/engine/row_sampling.hpp"
#include "vime/model/model.hpp"

namespace vime::engine {
namespace {

constexpr int64_t kChunkRows = 512;  // rows whose fp32 log-softmax over the vocabulary is held

// One packed forward over `group`; row r of the logits predicts token r + 1 of its prompt.
void score_group(Model& model, const std::vector<const PromptToScore*>& group) {
  std::vector<std::vector<int64_t>> sequences;
  std::vector<int64_t> rows, targets;
  std::vector<float> temperatures;
  int64_t offset = 0, max_top = 0;
  for (const PromptToScore* p : group) {
    const auto& prompt = *p->prompt;
    sequences.emplace_back(prompt.begin(), prompt.end());
    const double t = p->temperature < kGreedyTemperature ? 1.0 : p->temperature;
    for (size_t i = 0; i + 1 < prompt.size(); ++i) {
      rows.push_back(offset + static_cast<int64_t>(i));
      targets.push_back(prompt[i + 1]);
      temperatures.push_back(static_cast<float>(t));
    }
    offset += static_cast<int64_t>(prompt.size());
    max_top = std::max(max_top, p->out->count);
    p->out->positions.clear();
  }
  if (rows.empty()) return;  // one-token prompts: nothing to score
  const at::Device device = model.device();
  const auto hidden = model.forward_hidden(PackedBatch::pack(sequences, device));
  const auto i64 = at::TensorOptions().dtype(at::kLong);
  const auto all_rows = at::tensor(rows, i64).to(device);
  const auto all_targets = at::tensor(targets, i64).to(device);
  const auto all_t = at::tensor(temperatures, at::kFloat).to(device);
  max_top = std::min(max_top, model.config().vocab_size);

  std::vector<float> log_p(rows.size()), top_log_p;
  std::vector<int64_t> rank(rows.size()), top_id;
  for (int64_t begin = 0; begin < static_cast<int64_t>(rows.size()); begin += kChunkRows) {
    const int64_t n = std::min<int64_t>(kChunkRows, static_cast<int64_t>(rows.size()) - begin);
    const auto chunk_rows = all_rows.narrow(0, begin, n);
    // Divided, as the trainer divides (logits / T), not multiplied by 1 / T.
    auto z = model.logits(hidden.index_select(0, chunk_rows)).to(at::kFloat) /
             all_t.narrow(0, begin, n).unsqueeze(1);
    auto lp = at::log_softmax(z, 1);
    auto chosen = lp.gather(1, all_targets.narrow(0, begin, n).unsqueeze(1));
    auto chosen_cpu = chosen.squeeze(1).to(at::kCPU).contiguous();
    auto rank_cpu = (lp >= chosen).sum(1).to(at::kCPU, at::kLong).contiguous();
    std::copy_n(chosen_cpu.data_ptr<float>(), n, log_p.begin() + begin);
    std::copy_n(rank_cpu.data_ptr<int64_t>(), n, rank.begin() + begin);
    if (max_top > 0) {
      auto [values, ids] = lp.topk(max_top, 1);
      auto v = values.to(at::kCPU).contiguous();
      auto i = ids.to(at::kCPU, at::kLong).contiguous();
      top_log_p.insert(top_log_p.end(), v.data_ptr<float>(), v.data_ptr<float>() + n * max_top);
      top_id.insert(top_id.end(), i.data_ptr<int64_t>(), i.data_ptr<int64_t>() + n * max_top);
    }
  }
  size_t row = 0;
  for (const PromptToScore* p : group) {
    const auto& prompt = *p->prompt;
    const int64_t count = std::min(p->out->count, max_top);
    for (size_t i = 0; i + 1 < prompt.size(); ++i, ++row) {
      PromptPosition position{{prompt[i + 1], log_p[row]}, rank[row], {}};
      for (int64_t k = 0; k < count; ++k)
        position.top.push_back(
            {static_cast<int32_t>(top_id[row * max_top + k]), top_log_p[row * max_top + k]});
      p->out->positions.push_back(std::move(position));
    }
  }
}

}  // namespace

void score_prompts(Model& model, const std::vector<PromptToScore>& prompts, int64_t max_tokens) {
  std::vector<const PromptToScore*> group;
  int64_t tokens = 0;
  for (const PromptToScore& p : prompts) {
    const auto size = static_cast<int64_t>(p.prompt->size());
    if (!group.empty() && tokens + size > max_tokens) {
      score_group(model, group);
      group.clear();
      tokens = 0;
    }
    group.push_back(&p);
    tokens += size;
  }
  if (!group.empty()) score_group(model, group);
}

}  // namespace vime::engine
