// One data-parallel rank for the [dist_optim] tests: trains the tiny Qwen3 model (fp32, CPU) for
// --steps optimizer steps on a deterministic global batch, of which it feeds its own contiguous
// share, over a Gloo group on 127.0.0.1; optionally resumes from / saves a checkpoint; writes its
// parameters and each step's grad norm to --out (safetensors).
//   optimizer_worker --rank R --world W --port P --out FILE [--steps K] [--distributed]
//       [--clip C] [--bucket N] [--load DIR] [--save DIR] [--offload]
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "vime/ckpt/checkpoint.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/model/model.hpp"
#include "vime/train/optimizer.hpp"
#include "worker_world.hpp"

namespace {

constexpr int64_t kGlobalBatch = 6;  // divides by 1, 2 and 3 ranks
constexpr double kLr = 1e-3;

std::vector<int64_t> sample_tokens(int64_t step, int64_t index, int64_t vocab) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(1000 * step + index);
  const int64_t length = 5 + index % 3;
  auto t = at::randint(vocab, {length}, gen, at::kLong);
  return {t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + length};
}

// Mean next-token cross-entropy of one sequence.
at::Tensor sample_loss(vime::Model& model, const std::vector<int64_t>& tokens) {
  auto batch = vime::PackedBatch::pack({tokens}, at::kCPU);
  auto logits = model.forward(batch);
  const int64_t n = static_cast<int64_t>(tokens.size());
  auto log_probs = at::log_softmax(logits.narrow(0, 0, n - 1), -1);
  auto targets = batch.tokens.narrow(0, 1, n - 1).unsqueeze(1);
  return -log_probs.gather(1, targets).mean();
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> opt;
  for (int i = 1; i < argc; ++i) {
    std::string key = argv[i];
    if (key == "--distributed" || key == "--offload") {
      opt.insert_or_assign(key, std::string("1"));
    } else if (i + 1 < argc) {
      opt[key] = argv[++i];
    }
  }
  try {
    auto env = vime::test::join_worker_world(opt);
    auto& group = env.group;
    auto config = vime::ModelConfig::from_hf_dir(VIME_SOURCE_DIR "/tests/model/golden/tiny_qwen3");
    vime::Model model(config, at::kFloat, at::kCPU, 1234);
    model.set_requires_grad(true);
    vime::OptimizerConfig oc;
    oc.clip_grad = opt.count("--clip") ? std::stod(opt["--clip"]) : 1.0;
    oc.distributed = opt.count("--distributed") > 0;
    oc.bucket_elements = opt.count("--bucket") ? std::stoll(opt["--bucket"]) : 1000;
    vime::Optimizer optimizer(model.named_parameters(), oc, group.get());

    int64_t first_step = 0;
    if (opt.count("--load")) {
      auto resolved = vime::ckpt::resolve_checkpoint(opt["--load"]);
      if (!resolved) throw std::runtime_error("no checkpoint at " + opt["--load"]);
      first_step =
          vime::ckpt::load_checkpoint(*resolved, model, &optimizer, false, group.get()).iteration;
    }
    const int64_t steps = opt.count("--steps") ? std::stoll(opt["--steps"]) : 3;
    const int64_t w = env.world_size;
    std::vector<double> norms;
    for (int64_t step = first_step; step < first_step + steps; ++step) {
      optimizer.zero_grad();
      // Each sample its own micro-batch, scaled as the actor scales per-sample losses: summed
      // over the rank's samples x world / global batch, then averaged over the ranks.
      for (int64_t i = env.rank * kGlobalBatch / w; i < (env.rank + 1) * kGlobalBatch / w; ++i) {
        auto loss = sample_loss(model, sample_tokens(step, i, config.vocab_size));
        (loss * static_cast<double>(w) / static_cast<double>(kGlobalBatch)).backward();
        optimizer.accumulate_grads();
      }
      if (opt.count("--offload")) {  // the rollout's round trip, between backward and step
        optimizer.offload();
        optimizer.reload();
      }
      auto result = optimizer.step(kLr);
      if (!result.is_updated) throw std::runtime_error("step skipped");
      norms.push_back(result.grad_norm);
      if (opt.count("--offload")) {  // and once with Adam state in it
        optimizer.offload();
        optimizer.reload();
      }
    }
    if (opt.count("--save")) {
      vime::ckpt::TrainState state;
      state.iteration = first_step + steps;
      vime::ckpt::SaveOptions save;
      save.save_rng = false;
      vime::ckpt::save_checkpoint(opt["--save"], model, &optimizer, state, save, group.get());
    }
    vime::NamedTensorList out;
    for (const auto& [name, t] : model.named_parameters()) out.emplace_back(name, t.detach());
    out.emplace_back("grad_norms", at::tensor(norms, at::kDouble));
    vime::ckpt::write_safetensors(opt.at("--out"), out);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "optimizer_worker rank %s: %s\n", opt["--rank"].c_str(), e.what());
    return 1;
  }
}
