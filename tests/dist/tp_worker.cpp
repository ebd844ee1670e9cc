// One rank for the [dist_tp] tests: the tiny Qwen3 model (fp32, CPU) under tensor x data
// parallelism over Gloo on 127.0.0.1, in Megatron's rank order. It writes, whole (gathered over
// the tensor-parallel group): the logits, log-probs and entropy of a fixed batch, the gradients
// of a loss on it, then the parameters after --steps AdamW steps on a deterministic global batch
// (of which its data-parallel rank feeds its share) and each step's grad norm.
//   tp_worker --rank R --world W --tp T --port P --out FILE [--steps K] [--distributed]
//       [--recompute] [--config DIR] [--load DIR] [--save DIR] [--lora]
// --lora: rank-4 LoRA adapters on every linear (B drawn at random, the same whole values at any
// tensor-parallel size), trained alone; the gradients and parameters written are the adapters'.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "vime/ckpt/checkpoint.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/dist/parallel_groups.hpp"
#include "vime/model/model.hpp"
#include "vime/model/moe.hpp"
#include "vime/model/recompute_counter.hpp"
#include "vime/train/log_probs.hpp"
#include "vime/train/optimizer.hpp"
#include "worker_world.hpp"

namespace {

constexpr int64_t kGlobalBatch = 4;  // divides by 1 and 2 data-parallel ranks
constexpr double kLr = 1e-3;

std::vector<int64_t> sample_tokens(int64_t step, int64_t index, int64_t vocab) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(1000 * step + index);
  const int64_t length = 5 + index % 3;
  auto t = at::randint(vocab, {length}, gen, at::kLong);
  return {t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + length};
}

struct Scored {
  at::Tensor hidden, log_probs, entropy;
};

// Next-token log-probs and entropy of packed sequences, from vocab-parallel logits.
Scored score(vime::Model& model, const std::vector<std::vector<int64_t>>& sequences) {
  auto batch = vime::PackedBatch::pack(sequences, at::kCPU);
  std::vector<int64_t> totals, responses;
  for (const auto& s : sequences) {
    totals.push_back(static_cast<int64_t>(s.size()));
    responses.push_back(static_cast<int64_t>(s.size()) - 1);
  }
  auto rr = vime::train::response_rows(batch.tokens, totals, responses);
  Scored out;
  out.hidden = model.forward_hidden(batch);
  auto scored = vime::train::vocab_parallel_token_log_probs(
      model.vocab_parallel_logits(out.hidden), rr.rows, rr.targets, 0.7, model.config().vocab_size,
      model.tensor_parallel(), /*chunk_rows=*/3);
  out.log_probs = scored.log_probs;
  out.entropy = scored.entropy;
  return out;
}

at::Tensor loss_of(const Scored& s) { return -s.log_probs.mean() - 0.1 * s.entropy.mean(); }

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> opt;
  for (int i = 1; i < argc; ++i) {
    std::string key = argv[i];
    if (key == "--distributed" || key == "--recompute" || key == "--lora") {
      opt[key] = "1";
    } else if (i + 1 < argc) {
      opt[key] = argv[++i];
    }
  }
  try {
    auto env = vime::test::join_worker_world(opt);
    auto& world = env.group;
    auto groups = vime::dist::make_parallel_groups(world.get(), std::stoi(opt.at("--tp")));
    const std::string config_dir =
        opt.count("--config") ? opt["--config"]
                              : std::string(VIME_SOURCE_DIR "/tests/model/golden/tiny_qwen3");
    auto config = vime::ModelConfig::from_hf_dir(config_dir);
    vime::Model model(config, at::kFloat, at::kCPU, 1234,
                      vime::TensorParallel::over(groups.tensor_parallel()));
    if (opt.count("--recompute")) model.set_recompute({.enabled = true});
    const bool lora = opt.count("--lora") > 0;
    if (lora) {
      vime::LoraConfig lc;
      lc.rank = 4;
      lc.alpha = 8;
      lc.target_modules.assign(vime::kLoraModules.begin(), vime::kLoraModules.end());
      model.add_lora(lc, 77);
      at::NoGradGuard no_grad;
      auto gen = at::make_generator<at::CPUGeneratorImpl>(78);
      const auto& params = model.lora_parameters();
      for (size_t i = 0; i < params.size(); ++i) {
        if (params[i].first.find("lora_B") == std::string::npos) continue;
        const auto& slice = model.lora_slices()[i];
        auto whole = at::normal(
            0.0, 0.05, vime::whole_shape(params[i].second, slice, model.tensor_parallel().size),
            gen, at::TensorOptions().dtype(at::kFloat));
        params[i].second.copy_(slice.of(whole));
      }
    }
    // The trained tensors and their slices: not the routers' fixed correction biases.
    vime::NamedTensorList trained;
    std::vector<vime::TpSlice> trained_slices;
    {
      const auto& all = lora ? model.lora_parameters() : model.named_parameters();
      const auto& slices = lora ? model.lora_slices() : model.parameter_slices();
      for (size_t i = 0; i < all.size(); ++i) {
        if (vime::is_expert_bias(all[i].first)) continue;
        trained.push_back(all[i]);
        trained_slices.push_back(slices[i]);
      }
    }
    vime::OptimizerConfig oc;
    oc.clip_grad = 0.5;  // below the norms here: every update is scaled by the global norm
    // Adam divides by sqrt(v) + eps: at the default 1e-8 a gradient element near zero gets a
    // full-size step whose sign float rounding decides, which hides a real mismatch in noise. At
    // 1e-4 (the clipped gradients here are ~1e-3 and up) the update stays normalised where it
    // matters and the comparison stays tight.
    oc.eps = 1e-4;
    oc.distributed = opt.count("--distributed") > 0;
    oc.bucket_elements = 1000;
    vime::Optimizer optimizer(trained, oc, groups.data_parallel(),
                              vime::TensorParallelNorm::of(model));
    int64_t first_step = 0;
    if (opt.count("--load")) {
      auto resolved = vime::ckpt::resolve_checkpoint(opt["--load"]);
      if (!resolved) throw std::runtime_error("no checkpoint at " + opt["--load"]);
      first_step =
          vime::ckpt::load_checkpoint(*resolved, model, &optimizer, false, groups.world).iteration;
    }

    vime::NamedTensorList out;
    // 1. Logits, log-probs, entropy and gradients on a fixed batch.
    {
      std::vector<std::vector<int64_t>> fixed{sample_tokens(99, 0, config.vocab_size),
                                              sample_tokens(99, 1, config.vocab_size),
                                              sample_tokens(99, 2, config.vocab_size)};
      auto s = score(model, fixed);
      out.emplace_back("logits", model.logits(s.hidden).detach());
      out.emplace_back("log_probs", s.log_probs.detach());
      out.emplace_back("entropy", s.entropy.detach());
      const int64_t recomputed_before = vime::recomputed_layers();
      loss_of(s).backward();
      // Layers run again by the backward: every layer with --recompute, none without.
      out.emplace_back("recomputed_layers",
                       at::tensor(vime::recomputed_layers() - recomputed_before, at::kLong));
      const auto& params = trained;
      for (size_t i = 0; i < params.size(); ++i) {
        auto& p = params[i].second;
        out.emplace_back("grad." + params[i].first,
                         vime::gather_full(p.grad(), trained_slices[i], model.tensor_parallel()));
        p.mutable_grad() = at::Tensor();
      }
    }
    // 2. AdamW steps; the data-parallel rank takes its contiguous share of the global batch.
    const int64_t steps = opt.count("--steps") ? std::stoll(opt["--steps"]) : 3;
    const int64_t dp = env.world_size / groups.tp_size, dp_rank = groups.dp_rank;
    std::vector<double> norms;
    for (int64_t step = first_step; step < first_step + steps; ++step) {
      optimizer.zero_grad();
      for (int64_t i = dp_rank * kGlobalBatch / dp; i < (dp_rank + 1) * kGlobalBatch / dp; ++i) {
        auto loss = loss_of(score(model, {sample_tokens(step, i, config.vocab_size)}));
        (loss * static_cast<double>(dp) / static_cast<double>(kGlobalBatch)).backward();
        optimizer.accumulate_grads();
      }
      auto result = optimizer.step(kLr);
      if (!result.is_updated) throw std::runtime_error("step skipped");
      norms.push_back(result.grad_norm);
    }
    if (opt.count("--save")) {
      vime::ckpt::TrainState state;
      state.iteration = first_step + steps;
      vime::ckpt::save_checkpoint(opt["--save"], model, &optimizer, state, {.save_rng = false},
                                  groups.world);
    }
    for (auto& [name, t] : model.hf_tensors()) out.emplace_back(name, t);
    if (lora)
      for (auto& [name, t] : model.lora_tensors()) out.emplace_back(name, t);
    out.emplace_back("grad_norms", at::tensor(norms, at::kDouble));
    vime::ckpt::write_safetensors(opt.at("--out"), out);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tp_worker rank %s: %s\n", opt["--rank"].c_str(), e.what());
    return 1;
  }
}
