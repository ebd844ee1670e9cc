// One rank for the [dist_tp] expert-parallel tests: the tiny Qwen3-MoE model (10 experts, top-3,
// fp32, CPU) with its experts split over --ep consecutive ranks of a Gloo world on 127.0.0.1.
// First one forward and backward of a packed batch of this rank's own: it writes the logits and
// every gradient whole, summed over the data-parallel ranks as the optimizer reduces them (experts
// over the expert-data-parallel group; an expert-parallel rank's expert gradient already holds
// every rank's tokens). Then the real train::Actor trains --rollouts rollouts (each rank gets the
// same ones; the DP schedule splits them), and it writes the parameters whole and every step's
// loss and grad norm, and how far the steps moved the parameters ("moved").
// With VIME_EP_DEVICE=cuda in the environment rank R runs on GPU R over NCCL (the weights drawn on
// the CPU as there).
//   ep_worker --rank R --world W --port P --out FILE --ep E --loss sft|grpo
//       [--rollouts K] [--first-rollout I] [--flags "..."] [--load DIR]
//       [--save DIR [--save-after J]]   (a checkpoint after J of the K rollouts; default K)
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "vime/ckpt/checkpoint.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/dist/parallel_groups.hpp"
#include "vime/model/model.hpp"
#include "vime/train/actor.hpp"
#include "vime/train/c10d_reducer.hpp"
#include "worker_world.hpp"

namespace {

// 6 samples of one rollout: lengths 3 .. 21, responses 1 .. 9, groups of 2.
vime::train::TrainBatch rollout(int64_t rollout_id, int64_t vocab) {
  const int64_t lengths[] = {21, 3, 11, 6, 17, 9};
  const int64_t responses[] = {9, 1, 5, 2, 7, 4};
  vime::train::TrainBatch b;
  for (int64_t i = 0; i < 6; ++i) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(1000 * rollout_id + i);
    auto t = at::randint(vocab, {lengths[i]}, gen, at::kLong);
    b.tokens.emplace_back(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + lengths[i]);
    b.response_lengths.push_back(responses[i]);
    std::vector<float> mask(responses[i], 1.0f);
    if (responses[i] > 3) mask[1] = 0;
    b.loss_masks.push_back(mask);
    b.rewards.push_back((i + rollout_id) % 3 == 0 ? 1.0 : -0.5);
    b.rollout_ids.push_back(i / 2);
  }
  return b;
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// This rank's own batch (a different one per rank, 2 + rank sequences), its logits and loss
// sum(logits * R) with a fixed random R; appends the logits and the summed whole gradients.
void forward_backward(vime::Model& model, const vime::dist::ParallelGroups& groups, int rank,
                      vime::NamedTensorList& out) {
  std::vector<std::vector<int64_t>> sequences;
  for (int s = 0; s < 2 + rank; ++s) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(77 + 10 * rank + s);
    auto t = at::randint(model.config().vocab_size, {5 + 4 * s}, gen, at::kLong);
    sequences.emplace_back(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
  }
  auto logits = model.forward(vime::PackedBatch::pack(sequences, model.device()));
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5 + rank);
  auto weights = at::normal(0.0, 1.0, logits.sizes(), gen, at::TensorOptions().dtype(at::kFloat));
  (logits * weights.to(model.device())).sum().backward();
  out.emplace_back("logits", logits.detach().cpu());
  const auto& params = model.named_parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& slice = model.parameter_slices()[i];
    auto grad = params[i].second.grad();
    vime::dist::ProcessGroup* over = groups.world;
    if (slice.group != nullptr) {  // this rank's experts: whole, then over the ranks holding them
      grad = vime::gather_full(grad, slice, model.tensor_parallel());
      over = model.expert_parallel().data_parallel;
    }
    if (over != nullptr) {
      std::vector<at::Tensor> t{grad.contiguous().clone()};
      over->all_reduce(t);
      grad = t[0];
    }
    out.emplace_back("grad." + params[i].first, grad.cpu());
    params[i].second.mutable_grad() = at::Tensor();
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> opt;
  for (int i = 1; i + 1 < argc; i += 2) opt[argv[i]] = argv[i + 1];
  try {
    const char* on = std::getenv("VIME_EP_DEVICE");
    const bool cuda = on != nullptr && std::string(on) == "cuda";
    const at::Device device =
        cuda ? at::Device(at::kCUDA, static_cast<int8_t>(std::stoi(opt.at("--rank"))))
             : at::Device(at::kCPU);
    auto env = vime::test::join_worker_world(opt, device);
    auto groups =
        vime::dist::make_parallel_groups(env.group.get(), 1, 1, std::stoi(opt.at("--ep")));
    auto config =
        vime::ModelConfig::from_hf_dir(VIME_SOURCE_DIR "/tests/model/golden/tiny_qwen3_moe");
    vime::Model model(config, at::kFloat, device, 1234);
    if (cuda)
      model.load_tensors(vime::Model(config, at::kFloat, at::kCPU, 1234).hf_tensors(), "cpu");
    model.set_expert_parallel(
        vime::ExpertParallel::over(groups.expert_parallel(), groups.expert_data_parallel()));
    vime::NamedTensorList out;
    const bool sft = opt.at("--loss") == "sft";
    std::vector<std::string> words{
        "--lr",        "1e-3", "--lr-decay-style",    "constant", "--adam-eps", "1e-4",
        "--clip-grad", "0.5",  "--global-batch-size", "3"};
    if (sft) {
      words.insert(words.end(), {"--loss-type", "sft_loss"});
    } else {
      words.insert(words.end(), {"--advantage-estimator", "grpo", "--n-samples-per-prompt", "2",
                                 "--entropy-coef", "0.01", "--kl-coef", "0"});
    }
    if (opt.count("--flags"))
      for (auto& w : split_words(opt["--flags"])) words.push_back(w);
    const auto args = vime::core::parse_args(words);
    model.set_recompute(vime::RecomputeOptions::from(args));
    std::unique_ptr<vime::train::RankReducer> reducer;
    if (auto* dp = groups.data_parallel()) {
      reducer = std::make_unique<vime::train::C10dReducer>(*dp, groups.gradient());
    } else {
      reducer = std::make_unique<vime::train::SingleRank>();
    }
    vime::train::Actor actor(args, model, nullptr, *reducer);
    int64_t first = opt.count("--first-rollout") ? std::stoll(opt["--first-rollout"]) : 0;
    if (opt.count("--load")) {
      auto resolved = vime::ckpt::resolve_checkpoint(opt["--load"]);
      if (!resolved) throw std::runtime_error("no checkpoint at " + opt["--load"]);
      first =
          vime::ckpt::load_checkpoint(*resolved, model, &actor.optimizer(), false, env.group.get())
              .iteration;
    } else {
      forward_backward(model, groups, env.rank, out);
    }
    const int64_t rollouts = opt.count("--rollouts") ? std::stoll(opt["--rollouts"]) : 2;
    const int64_t save_after =
        opt.count("--save-after") ? std::stoll(opt["--save-after"]) : rollouts;
    std::vector<at::Tensor> initial;  // copies: hf_tensors() may return the parameters themselves
    for (const auto& [name, t] : model.hf_tensors()) initial.push_back(t.clone());
    std::vector<double> losses, norms;
    for (int64_t r = first; r <= first + rollouts; ++r) {
      if (opt.count("--save") && r == first + save_after) {
        vime::ckpt::TrainState state;
        state.iteration = r;
        vime::ckpt::SaveOptions save;
        save.save_rng = false;
        vime::ckpt::save_checkpoint(opt["--save"], model, &actor.optimizer(), state, save,
                                    env.group.get());
      }
      if (r == first + rollouts) break;
      actor.train(r, rollout(r, config.vocab_size));
      for (const auto& m : actor.step_metrics()) {
        losses.push_back(m.at("train/loss"));
        norms.push_back(m.at("train/grad_norm"));
      }
    }
    double moved = 0;
    const auto final = model.hf_tensors();
    for (size_t i = 0; i < final.size(); ++i) {
      moved = std::max(moved, (final[i].second - initial[i]).abs().max().item<double>());
      out.emplace_back("param." + final[i].first, final[i].second.cpu());
    }
    out.emplace_back("moved", at::tensor(std::vector<double>{moved}, at::kDouble));
    out.emplace_back("losses", at::tensor(losses, at::kDouble));
    out.emplace_back("grad_norms", at::tensor(norms, at::kDouble));
    vime::ckpt::write_safetensors(opt.at("--out"), out);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ep_worker rank %s: %s\n", opt["--rank"].c_str(), e.what());
    return 1;
  }
}
