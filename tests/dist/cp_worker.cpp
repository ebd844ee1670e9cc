// One rank for the [dist_tp] context-parallel tests: the real train::Actor (SFT or GRPO) on the
// tiny Qwen3 model (fp32, CPU) under tensor x context x data parallelism over Gloo on 127.0.0.1, in
// Megatron's rank order. Every rank trains on the same deterministic rollouts: packed micro-batches
// that mix long samples with samples shorter than 2 x the context-parallel size (down to 2 tokens),
// partial loss masks. It writes the parameters after --rollouts rollouts (gathered whole), and the
// loss and grad norm of every optimizer step.
//   cp_worker --rank R --world W --port P --out FILE --tp T --cp C --loss sft|grpo
//       [--rollouts K] [--first-rollout I] [--flags "..."] [--load DIR] [--save DIR] [--critic]
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cstdio>
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
#include "vime/train/critic.hpp"
#include "worker_world.hpp"

namespace {

// 8 samples of one rollout: lengths 2 .. 29, responses 1 .. 12, in a mixed order.
vime::train::TrainBatch rollout(int64_t rollout_id, int64_t vocab) {
  const int64_t lengths[] = {29, 2, 11, 3, 17, 5, 23, 7};
  const int64_t responses[] = {12, 1, 6, 2, 9, 3, 4, 5};
  vime::train::TrainBatch b;
  for (int64_t i = 0; i < 8; ++i) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(1000 * rollout_id + i);
    auto t = at::randint(vocab, {lengths[i]}, gen, at::kLong);
    b.tokens.emplace_back(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + lengths[i]);
    b.response_lengths.push_back(responses[i]);
    std::vector<float> mask(responses[i], 1.0f);
    if (responses[i] > 3) mask[1] = 0;  // a masked token inside the response
    b.loss_masks.push_back(mask);
    b.rewards.push_back((i + rollout_id) % 3 == 0 ? 1.0 : -0.5);
    b.rollout_ids.push_back(i / 2);  // groups of 2 samples (--n-samples-per-prompt 2)
  }
  return b;
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> opt;
  for (int i = 1; i < argc; ++i) {
    std::string key = argv[i];
    if (key == "--critic") {
      opt.insert_or_assign(key, std::string("1"));
    } else if (i + 1 < argc) {
      opt[key] = argv[++i];
    }
  }
  try {
    auto env = vime::test::join_worker_world(opt);
    auto groups = vime::dist::make_parallel_groups(env.group.get(), std::stoi(opt.at("--tp")),
                                                   std::stoi(opt.at("--cp")));
    auto config = vime::ModelConfig::from_hf_dir(VIME_SOURCE_DIR "/tests/model/golden/tiny_qwen3");
    const auto tp = vime::TensorParallel::over(groups.tensor_parallel());
    const auto cp = vime::ContextParallel::over(groups.context_parallel());
    vime::Model model(config, at::kFloat, at::kCPU, 1234, tp);
    model.set_context_parallel(cp);
    const bool sft = opt.at("--loss") == "sft";
    // The clipped gradients here are ~1e-3 and up; Adam's eps at 1e-4 keeps float rounding in
    // near-zero gradient elements from deciding whole steps (see tp_worker).
    std::vector<std::string> words{
        "--lr",        "1e-3", "--lr-decay-style",    "constant", "--adam-eps", "1e-4",
        "--clip-grad", "0.5",  "--global-batch-size", "2"};
    if (sft) {
      words.insert(words.end(), {"--loss-type", "sft_loss"});
    } else {
      words.insert(words.end(),
                   {"--advantage-estimator", opt.count("--critic") ? "ppo" : "grpo",
                    "--n-samples-per-prompt", "2", "--entropy-coef", "0.01", "--kl-coef", "0"});
    }
    if (opt.count("--flags"))
      for (auto& w : split_words(opt["--flags"])) words.push_back(w);
    const auto args = vime::core::parse_args(words);
    model.set_recompute(vime::RecomputeOptions::from(args));  // --recompute-granularity full
    std::unique_ptr<vime::train::RankReducer> reducer;
    if (auto* dp = groups.data_parallel()) {
      reducer = std::make_unique<vime::train::C10dReducer>(*dp, groups.gradient());
    } else {
      reducer = std::make_unique<vime::train::SingleRank>();
    }
    vime::train::Actor actor(args, model, nullptr, *reducer);
    std::unique_ptr<vime::Model> trunk;
    std::unique_ptr<vime::train::Critic> critic;
    if (opt.count("--critic")) {
      trunk = std::make_unique<vime::Model>(config, at::kFloat, at::kCPU, 99, tp);
      trunk->set_context_parallel(cp);
      critic = std::make_unique<vime::train::Critic>(args, *trunk, *reducer);
    }
    int64_t first = opt.count("--first-rollout") ? std::stoll(opt["--first-rollout"]) : 0;
    if (opt.count("--load")) {
      auto resolved = vime::ckpt::resolve_checkpoint(opt["--load"]);
      if (!resolved) throw std::runtime_error("no checkpoint at " + opt["--load"]);
      first =
          vime::ckpt::load_checkpoint(*resolved, model, &actor.optimizer(), false, env.group.get())
              .iteration;
    }
    const int64_t rollouts = opt.count("--rollouts") ? std::stoll(opt["--rollouts"]) : 2;
    std::vector<double> losses, norms, values;
    for (int64_t r = first; r < first + rollouts; ++r) {
      auto batch = rollout(r, config.vocab_size);
      std::vector<at::Tensor> old_values;
      if (critic) {
        old_values = critic->compute_values(batch);
        batch.values = old_values;
        for (auto& v : old_values) values.push_back(v.sum().item<double>());
      }
      actor.train(r, batch);
      for (const auto& m : actor.step_metrics()) {
        losses.push_back(m.at("train/loss"));
        norms.push_back(m.at("train/grad_norm"));
      }
      if (critic) {
        auto m = critic->train(batch, old_values, actor.returns());
        losses.push_back(m.at("critic/value_loss"));
        norms.push_back(m.at("critic/grad_norm"));
      }
    }
    if (opt.count("--save")) {
      vime::ckpt::TrainState state;
      state.iteration = first + rollouts;
      vime::ckpt::SaveOptions save;
      save.save_rng = false;
      vime::ckpt::save_checkpoint(opt["--save"], model, &actor.optimizer(), state, save,
                                  env.group.get());
    }
    vime::NamedTensorList out;
    for (auto& [name, t] : model.hf_tensors()) out.emplace_back(name, t);
    if (trunk)
      for (auto& [name, t] : trunk->hf_tensors()) out.emplace_back("critic." + name, t);
    out.emplace_back("losses", at::tensor(losses, at::kDouble));
    out.emplace_back("grad_norms", at::tensor(norms, at::kDouble));
    if (!values.empty()) out.emplace_back("values", at::tensor(values, at::kDouble));
    vime::ckpt::write_safetensors(opt.at("--out"), out);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cp_worker rank %s: %s\n", opt["--rank"].c_str(), e.what());
    return 1;
  }
}
