#include "vime/train/c10d_reducer.hpp"

#include <ATen/ATen.h>

#include <algorithm>

#include "vime/error.hpp"

namespace vime::train {
double C10dReducer::all_reduce_sum(double value) { return group_.all_reduce_sum(value); }

std::vector<double> C10dReducer::all_reduce_sums(std::vector<double> values) {
  if (group_.size() == 1 || values.empty()) return values;
  std::vector<at::Tensor> t{at::tensor(values, at::kDouble).to(group_.device())};
  group_.all_reduce(t);
  auto host = t[0].cpu();
  std::copy(host.data_ptr<double>(), host.data_ptr<double>() + host.numel(), values.begin());
  return values;
}

void C10dReducer::share_samples(std::vector<at::Tensor>& per_sample, const std::vector<int>& owner,
                                const std::vector<int64_t>& lengths) {
  const int size = group_.size();
  if (size == 1) return;
  if (per_sample.size() != owner.size() || lengths.size() != owner.size()) {
    throw Error("share_samples: per-sample tensors, owners and lengths differ in count");
  }
  // Every rank knows every rank's share from the plan: pack its own in sample order, pad to the
  // largest share, all-gather, unpack by owner.
  std::vector<int64_t> share(size, 0);
  for (size_t i = 0; i < owner.size(); ++i)
    if (owner[i] >= 0) share[owner[i]] += lengths[i];
  const int64_t width = std::max<int64_t>(*std::max_element(share.begin(), share.end()), 1);
  const auto options = at::TensorOptions().dtype(at::kFloat).device(group_.device());
  auto mine = at::zeros({width}, options);
  int64_t offset = 0;
  for (size_t i = 0; i < owner.size(); ++i) {
    if (owner[i] != group_.rank()) continue;
    if (!per_sample[i].defined() || per_sample[i].numel() != lengths[i]) {
      throw Error("share_samples: sample " + std::to_string(i) + " of rank " +
                  std::to_string(group_.rank()) + " was not computed");
    }
    mine.narrow(0, offset, lengths[i]).copy_(per_sample[i].reshape(-1));
    offset += lengths[i];
  }
  std::vector<at::Tensor> all(size);
  for (auto& a : all) a = at::empty({width}, options);
  group_.all_gather(all, mine);
  at::Device device = group_.device();
  for (const auto& t : per_sample)
    if (t.defined()) device = t.device();
  std::vector<int64_t> cursor(size, 0);
  for (size_t i = 0; i < owner.size(); ++i) {
    const int r = owner[i];
    if (r < 0) continue;
    if (r != group_.rank()) {
      per_sample[i] = all[r].narrow(0, cursor[r], lengths[i]).to(device);
    } else if (per_sample[i].scalar_type() != at::kFloat) {
      per_sample[i] = per_sample[i].to(at::kFloat);
    }
    cursor[r] += lengths[i];
  }
}

}  // namespace vime::train
