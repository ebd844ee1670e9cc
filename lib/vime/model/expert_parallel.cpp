#include "vime/model/expert_parallel.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <string>
#include <vector>

#include "vime/dist/process_group.hpp"
#include "vime/error.hpp"
#include "vime/model/model_config.hpp"

namespace vime {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// x: [rows, width]; rows [Σ in_rows[<r], + in_rows[r]) go to rank r. Returns [Σ out_rows, width],
// rank r's rows for this one at [Σ out_rows[<r], ...).
at::Tensor exchange_rows(const at::Tensor& x, dist::ProcessGroup* group,
                         const std::vector<int64_t>& out_rows,
                         const std::vector<int64_t>& in_rows) {
  const int64_t width = x.size(1);
  int64_t total = 0;
  std::vector<int64_t> out_elements, in_elements;
  for (size_t r = 0; r < out_rows.size(); ++r) {
    total += out_rows[r];
    out_elements.push_back(out_rows[r] * width);
    in_elements.push_back(in_rows[r] * width);
  }
  auto out = at::empty({total, width}, x.options());
  auto flat = out.view(-1);
  group->all_to_all(flat, x.contiguous().view(-1), out_elements, in_elements);
  return out;
}

// The all-to-all as an autograd node: backward sends the gradients back the way the rows came.
struct ExchangeRows : public torch::autograd::Function<ExchangeRows> {
  static variable_list forward(AutogradContext* ctx, at::Tensor x, dist::ProcessGroup* group,
                               std::vector<int64_t> out_rows, std::vector<int64_t> in_rows) {
    ctx->saved_data["group"] = reinterpret_cast<int64_t>(group);
    ctx->saved_data["out_rows"] = c10::IValue(out_rows);
    ctx->saved_data["in_rows"] = c10::IValue(in_rows);
    return {exchange_rows(x, group, out_rows, in_rows)};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto* group = reinterpret_cast<dist::ProcessGroup*>(ctx->saved_data["group"].toInt());
    const auto out_rows = ctx->saved_data["out_rows"].toIntVector();
    const auto in_rows = ctx->saved_data["in_rows"].toIntVector();
    return {exchange_rows(grads[0], group, in_rows, out_rows), at::Tensor(), at::Tensor(),
            at::Tensor()};
  }
};

std::string ep_flag(int ep) { return "--expert-model-parallel-size " + std::to_string(ep); }

}  // namespace

ExpertParallel ExpertParallel::over(dist::ProcessGroup* group, dist::ProcessGroup* data_parallel) {
  ExpertParallel ep;
  if (group == nullptr || group->size() == 1) return ep;
  ep.group = group;
  ep.rank = group->rank();
  ep.size = group->size();
  if (data_parallel != nullptr && data_parallel->size() > 1) ep.data_parallel = data_parallel;
  return ep;
}

void check_expert_parallel_shape(const ModelConfig& c, int ep) {
  if (ep < 1) throw UsageError(ep_flag(ep) + ": must be >= 1");
  if (ep == 1) return;
  if (!c.is_moe()) {
    throw UsageError(ep_flag(ep) + ": the model (" + c.model_type +
                     ") has no experts to split; expert parallelism is for MoE models");
  }
  if (c.moe.num_experts % ep != 0) {
    throw UsageError(ep_flag(ep) + ": the model's " + std::to_string(c.moe.num_experts) +
                     " experts do not split evenly over " + std::to_string(ep) + " ranks");
  }
}

at::Tensor run_on_expert_owners(const at::Tensor& x, const at::Tensor& counts,
                                const ExpertParallel& ep, const LocalExperts& local) {
  const int n = ep.size;
  const int64_t experts = counts.size(0), per_rank = experts / n;
  // Every rank tells each owner how many rows of each of its experts are coming.
  auto sent_counts = counts.to(at::kLong).contiguous();
  auto got_counts = at::empty({experts}, sent_counts.options());
  const std::vector<int64_t> equal(n, per_rank);
  ep.group->all_to_all(got_counts, sent_counts, equal, equal);
  auto sent = sent_counts.cpu(), got = got_counts.cpu();  // got: [source rank][local expert]
  const int64_t* s = sent.data_ptr<int64_t>();
  const int64_t* g = got.data_ptr<int64_t>();
  std::vector<int64_t> send_rows(n, 0), recv_rows(n, 0);
  for (int r = 0; r < n; ++r) {
    for (int64_t e = 0; e < per_rank; ++e) {
      send_rows[r] += s[r * per_rank + e];
      recv_rows[r] += g[r * per_rank + e];
    }
  }
  auto received = ExchangeRows::apply(x, ep.group, recv_rows, send_rows)[0];
  // Received rows are source-major; the grouped GEMM wants them expert-major (each expert's rows
  // in source order, as one rank would hold them in token order).
  std::vector<int64_t> source_start(n, 0);
  for (int r = 1; r < n; ++r) source_start[r] = source_start[r - 1] + recv_rows[r - 1];
  const int64_t total = source_start[n - 1] + recv_rows[n - 1];
  auto order = at::empty({total}, at::kLong), inverse = at::empty({total}, at::kLong),
       ends = at::empty({per_rank}, at::kInt);
  int64_t* o = order.data_ptr<int64_t>();
  int64_t* inv = inverse.data_ptr<int64_t>();
  int64_t next = 0;
  std::vector<int64_t> cursor = source_start;
  for (int64_t e = 0; e < per_rank; ++e) {
    for (int r = 0; r < n; ++r) {
      for (int64_t i = 0; i < g[r * per_rank + e]; ++i) {
        inv[cursor[r]] = next;
        o[next++] = cursor[r]++;
      }
    }
    ends.data_ptr<int32_t>()[e] = static_cast<int32_t>(next);
  }
  const auto device = x.device();
  auto y = local(received.index_select(0, order.to(device)), ends.to(device));
  return ExchangeRows::apply(y.index_select(0, inverse.to(device)), ep.group, send_rows,
                             recv_rows)[0];
}

}  // namespace vime
