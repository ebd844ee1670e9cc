// One rank for the [dist_tp_engine] tests: the embedded NativeEngine over a tensor-parallel group
// (tiny Qwen3, fp32, CPU, Gloo on 127.0.0.1), each rank running its own shards. TP rank 0 of each
// data-parallel group generates a fixed set of prompts three times: greedy; greedy again after a
// pause, release and an in-place change of every parameter on every rank (the trainer's zero-copy
// weight update); seeded sampling at temperature 1. A small paged KV cache makes rank 0 preempt.
// TP rank 0 writes the output ids and log-probs; every rank writes how many forwards its engine
// ran and whether the engine's tensors are the model's own (no copy of the weights).
// --fixed-shape-decode 1: decode-only steps through the engine's fixed-shape decode runner.
//   tp_engine_worker --rank R --world W --tp T --port P --out FILE [--fixed-shape-decode 1]
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <memory>
#include <string>

#include "vime/ckpt/safetensors.hpp"
#include "vime/dist/parallel_groups.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/model/model.hpp"
#include "worker_world.hpp"

namespace {

constexpr int kPrompts = 6;

std::vector<int32_t> prompt(int index, int64_t vocab) {
  std::vector<int32_t> ids;
  for (int i = 0; i < 5 + index % 4; ++i)
    ids.push_back(static_cast<int32_t>((7 * index + 13 * i + 3) % vocab));
  return ids;
}

// Every prompt at once; the outputs padded with -1 (ids) and 0 (log-probs) to max_new_tokens.
void generate_all(vime::engine::NativeEngine& engine, int64_t vocab, double temperature,
                  const std::string& tag, vime::NamedTensorList& out) {
  constexpr int64_t kNew = 24;
  std::vector<std::future<vime::GenerateResponse>> futures;
  for (int i = 0; i < kPrompts; ++i) {
    vime::GenerateRequest request;
    request.input_ids = prompt(i, vocab);
    request.sampling_params.temperature = temperature;
    request.sampling_params.max_new_tokens = kNew;
    request.sampling_params.seed = 100 + i;
    request.return_logprob = true;
    futures.push_back(engine.submit(request, {}));
  }
  auto ids = at::full({kPrompts, kNew}, -1, at::kInt);
  auto log_probs = at::zeros({kPrompts, kNew}, at::kFloat);
  for (int i = 0; i < kPrompts; ++i) {
    auto response = futures[i].get();
    for (size_t t = 0; t < response.output_ids.size(); ++t) {
      ids[i][t] = response.output_ids[t];
      log_probs[i][t] = response.output_log_probs[t];
    }
  }
  out.emplace_back(tag + ".ids", ids);
  out.emplace_back(tag + ".log_probs", log_probs);
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> opt;
  for (int i = 1; i + 1 < argc; i += 2) opt[argv[i]] = argv[i + 1];
  try {
    auto env = vime::test::join_worker_world(opt);
    auto& world = env.group;
    auto groups = vime::dist::make_parallel_groups(world.get(), std::stoi(opt.at("--tp")));
    auto config = vime::ModelConfig::from_hf_dir(VIME_SOURCE_DIR "/tests/model/golden/tiny_qwen3");
    vime::Model model(config, at::kFloat, at::kCPU, 1234,
                      vime::TensorParallel::over(groups.tensor_parallel()));
    model.set_requires_grad(false);
    std::vector<const void*> storage_before;
    for (const auto& [name, t] : model.named_parameters()) storage_before.push_back(t.data_ptr());

    vime::engine::NativeEngineOptions options;
    options.max_running_requests = 4;
    options.max_prefill_tokens = 16;  // prompts prefill in chunks alongside decode rows
    options.max_context_len = 64;
    options.kv_block_size = 4;
    options.kv_cache_blocks = 24;  // 96 positions for 6 x ~30: rank 0 preempts
    // Decode-only steps through the fixed-shape runner (CUDA's graph path, eager here).
    if (opt.count("--fixed-shape-decode")) options.fixed_shape_decode = true;
    vime::NamedTensorList out;
    {
      vime::engine::NativeEngine engine(model, nullptr, options);
      const bool leader = groups.tp_rank == 0;
      if (leader) generate_all(engine, config.vocab_size, 0.0, "greedy", out);
      // The trainer's turn: every rank pauses, frees the cache, updates its shards in place.
      engine.pause();
      engine.release_memory();
      {
        at::NoGradGuard no_grad;
        for (const auto& [name, t] : model.named_parameters()) t.mul_(1.25);
      }
      engine.resume();
      if (leader) {
        generate_all(engine, config.vocab_size, 0.0, "updated", out);
        generate_all(engine, config.vocab_size, 1.0, "sampled", out);
        out.emplace_back("preempted", at::tensor({engine.stats().preempted}, at::kLong));
      }
      engine.pause();                     // the followers have run every step once this returns
      const auto stats = engine.stats();  // a follower counts every forward as a decode step
      out.emplace_back("forwards",
                       at::tensor({stats.prefill_forwards + stats.decode_steps}, at::kLong));
    }
    bool same_storage = true;
    const auto& params = model.named_parameters();
    for (size_t i = 0; i < params.size(); ++i)
      same_storage = same_storage && params[i].second.data_ptr() == storage_before[i];
    out.emplace_back("same_storage", at::tensor({static_cast<int64_t>(same_storage)}, at::kLong));
    vime::ckpt::write_safetensors(opt.at("--out"), out);
    if (world) world->barrier();  // rank 0 hosts the store the other groups' engines still use
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tp_engine_worker rank %s: %s\n", opt["--rank"].c_str(), e.what());
    return 1;
  }
}
