// Train-step throughput of vime's actor math: forward, fp32 chunked log-probs, an SFT-style loss,
// backward, AdamW with fp32 master weights. Random weights, packed sequences.
//   vime_bench_train --model qwen3-0.6b|qwen3-4b|tiny --tokens 16384 --seq-len 2048
//                    [--recompute] [--recompute-layers N] [--iters 5] [--warmup 2] [--device cuda]
//                    [--peak-tflops 989]
//                    [--gpus N] [--tp T] [--cp C] [--use-distributed-optimizer]
//                    [--profile TRACE.json]
//                    [--forward-only] [--chunk-rows 2048] [--actor [--micro-batch-size 1]]
// --gpus N: N local ranks (vime's launcher, c10d NCCL/Gloo); --tp T of them share each model
// (Megatron tensor parallelism, vocab-parallel log-probs) and the N / T data-parallel replicas
// each take --tokens, gradients all-reduced as the trainer does. Rank 0 prints one JSON line:
// tokens/s over all replicas, step ms, MFU per GPU (model FLOPs: 6·N·T for the matmul weights,
// including the output layer, plus causal attention 6·L·heads·head_dim·Σ seq_len²) and the peak GPU
// memory of rank 0.
// --cp C: C ranks share each sample (context parallelism, tp-cp-dp rank order): each runs its two
// chunks of every sequence, K/V all-gathered; a replica is T x C ranks and takes --tokens. (On
// CUDA each rank draws its own random weights: timings and memory only, not a loss to compare.)
// --recompute-layers N: only the first N layers recompute (Megatron's --recompute-method block).
// --forward-only: the log-prob pass instead (no autograd state, as Actor::compute_log_probs runs).
// --chunk-rows: rows per chunk of the fused output head (the actor's --log-probs-chunk-size).
// --actor: a whole Actor::train per step instead, as `vime train` runs it on one rank: GRPO's
// policy loss over the --tokens / --seq-len samples (half of each the response) in micro-batches
// of --micro-batch-size samples, their logged metrics, one optimizer step; "loss" is train/loss.
// --profile: one more step after the timed ones under LibTorch's Kineto profiler, written as a
// Chrome trace (rank 0); tools/bench/trace_summary.py makes the per-kernel table.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "bench/kineto_trace.hpp"
#include "common/model_presets.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/runtime_info.hpp"
#include "vime/dist/local_launcher.hpp"
#include "vime/dist/parallel_groups.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/dist/rank_device.hpp"
#include "vime/dist/rank_env.hpp"
#include "vime/model/model.hpp"
#include "vime/train/actor.hpp"
#include "vime/train/context_parallel_rows.hpp"
#include "vime/train/linear_log_probs.hpp"
#include "vime/train/log_probs.hpp"
#include "vime/train/optimizer.hpp"

namespace {

double model_flops(const vime::ModelConfig& c, int64_t tokens, int64_t seq_len) {
  const double q = double(c.num_attention_heads * c.head_dim);
  const double kv = double(c.num_key_value_heads * c.head_dim);
  const double h = double(c.hidden_size);
  // MoE layers count the active parameters: the router, the top-k experts and the shared one.
  double matmul_params = double(c.vocab_size) * h;
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const auto& m = c.moe;
    const double ffn = c.is_moe_layer(i) ? double(m.num_experts_per_tok * m.moe_intermediate_size +
                                                  m.shared_expert_intermediate_size)
                                         : double(c.intermediate_size);
    matmul_params += h * (q + 2 * kv) + q * h + 3 * h * ffn +
                     (c.is_moe_layer(i) ? h * double(m.num_experts) : 0.0);
  }
  const double num_seqs = double(tokens / seq_len);
  const double attention =
      6.0 * double(c.num_layers) * q * num_seqs * double(seq_len) * double(seq_len);
  return 6.0 * matmul_params * double(tokens) + attention;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_name = "qwen3-0.6b", device_name = "cuda", profile_path;
  int64_t tokens = 16384, seq_len = 2048, iters = 5, warmup = 2, chunk_rows = 2048;
  int64_t recompute_layers = 0;  // 0: every layer
  int64_t micro_batch_size = 1;
  bool recompute = false, forward_only = false, actor_step = false;
  int gpus = 1, tp = 1, cp = 1;
  bool distributed_optimizer = false;
  double peak_tflops = 989.0;  // H100/H200 SXM dense bf16
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() { return std::string(i + 1 < argc ? argv[++i] : ""); };
    if (a == "--model")
      model_name = next();
    else if (a == "--tokens")
      tokens = std::stoll(next());
    else if (a == "--seq-len")
      seq_len = std::stoll(next());
    else if (a == "--iters")
      iters = std::stoll(next());
    else if (a == "--warmup")
      warmup = std::stoll(next());
    else if (a == "--chunk-rows")
      chunk_rows = std::stoll(next());
    else if (a == "--recompute")
      recompute = true;
    else if (a == "--recompute-layers")
      recompute = true, recompute_layers = std::stoll(next());
    else if (a == "--forward-only")
      forward_only = true;
    else if (a == "--actor")
      actor_step = true;
    else if (a == "--micro-batch-size")
      micro_batch_size = std::stoll(next());
    else if (a == "--device")
      device_name = next();
    else if (a == "--peak-tflops")
      peak_tflops = std::stod(next());
    else if (a == "--use-distributed-optimizer")
      distributed_optimizer = true;
    else if (a == "--profile")
      profile_path = next();
    else if (a == "--gpus")
      gpus = std::stoi(next());
    else if (a == "--tp")
      tp = std::stoi(next());
    else if (a == "--cp")
      cp = std::stoi(next());
    else {
      std::fprintf(stderr, "unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  const vime::Args no_flags;
  auto env = vime::dist::rank_env_from_environment(no_flags);
  if (gpus > 1 && env.is_single()) {
    vime::dist::LocalLaunchPlan plan;
    plan.gpus_per_node = gpus;
    plan.argv.assign(argv, argv + argc);
    plan.program = "vime_bench_train";
    return vime::dist::launch_local_ranks(plan, std::cout);
  }
  at::Device device(device_name);
  if (device.is_cuda() && !device.has_index()) device = vime::dist::current_device();
  std::unique_ptr<vime::dist::ProcessGroup> group;
  if (!env.is_single()) {
    device = vime::dist::bind_rank_device(env);
    group = vime::dist::ProcessGroup::create(env, device, std::chrono::minutes(10));
  }
  const auto groups = vime::dist::make_parallel_groups(group.get(), tp, cp);
  const auto config = vime::presets::by_name(model_name);
  const auto dtype = device.is_cuda() ? at::kBFloat16 : at::kFloat;
  vime::Model model(config, dtype, device, 1, vime::TensorParallel::over(groups.tensor_parallel()));
  model.set_recompute({recompute, recompute_layers});
  model.set_context_parallel(vime::ContextParallel::over(groups.context_parallel()));
  if (actor_step && (group || forward_only)) {
    std::fprintf(stderr, "--actor runs on one rank, forward and backward\n");
    return 2;
  }
  vime::OptimizerConfig opt_config;
  opt_config.distributed = distributed_optimizer;
  std::unique_ptr<vime::Optimizer> optimizer;  // --actor: the actor's own
  if (!actor_step) {
    optimizer =
        std::make_unique<vime::Optimizer>(model.named_parameters(), opt_config, groups.gradient(),
                                          vime::TensorParallelNorm::of(model));
  }

  auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
  std::vector<std::vector<int64_t>> sequences;
  for (int64_t s = 0; s < tokens / seq_len; ++s) {
    auto t = at::randint(config.vocab_size, {seq_len}, gen, at::TensorOptions().dtype(at::kLong));
    sequences.emplace_back(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + seq_len);
  }
  auto batch = vime::PackedBatch::pack(sequences, device);
  std::vector<int64_t> totals(sequences.size(), seq_len), responses(sequences.size(), seq_len - 1);
  auto rows = vime::train::response_rows(batch.tokens, totals, responses);

  // Log-probs from this rank's vocabulary columns (all of them without tensor parallelism).
  // As the actor scores: fused from the hidden states at TP 1, vocab-parallel logits under TP.
  // Under context parallelism this rank's shard and rows, the log-probs gathered whole.
  auto score = [&](bool with_entropy) {
    const auto& cpg = model.context_parallel();
    auto local = vime::shard_for_context_parallel(batch, cpg);
    vime::train::CpRows local_rows{rows.rows, rows.targets, {}, 0};
    if (cpg.is_parallel()) local_rows = vime::train::cp_response_rows(local, rows);
    auto hidden = model.forward_hidden(local);
    vime::train::TokenLogProbs out;
    if (!model.tensor_parallel().is_parallel()) {
      out = vime::train::linear_token_log_probs(hidden, model.output_weight(), local_rows.rows,
                                                local_rows.targets, 1.0, chunk_rows, with_entropy);
    } else {
      out = vime::train::vocab_parallel_token_log_probs(
          model.vocab_parallel_logits(hidden), local_rows.rows, local_rows.targets, 1.0,
          config.vocab_size, model.tensor_parallel(), chunk_rows);
    }
    if (cpg.is_parallel())
      out.log_probs =
          vime::gather_rows(out.log_probs, local_rows.dest, local_rows.num_whole, cpg.group);
    return out;
  };
  double loss_value = 0;
  std::unique_ptr<vime::train::Actor> actor;
  vime::train::SingleRank single_rank;
  vime::train::TrainBatch train_batch;
  vime::Args actor_args;  // the actor keeps a reference
  int64_t rollout_id = 0;
  if (actor_step) {
    const std::vector<std::string> flags{"--advantage-estimator",
                                         "grpo",
                                         "--global-batch-size",
                                         std::to_string(sequences.size()),
                                         "--micro-batch-size",
                                         std::to_string(micro_batch_size),
                                         "--log-probs-chunk-size",
                                         std::to_string(chunk_rows),
                                         "--lr",
                                         "1e-5"};
    actor_args = vime::core::parse_args(flags);
    actor = std::make_unique<vime::train::Actor>(actor_args, model, nullptr, single_rank);
    for (size_t s = 0; s < sequences.size(); ++s) {
      train_batch.tokens.push_back(sequences[s]);
      train_batch.response_lengths.push_back(seq_len / 2);
      train_batch.rewards.push_back(s % 4 == 0 ? 1.0 : 0.0);
    }
  }
  auto step = [&]() {
    if (actor) {
      loss_value = actor->train(rollout_id++, train_batch).at("train/loss");
      return;
    }
    if (forward_only) {
      at::NoGradGuard no_grad;
      loss_value = -score(false).log_probs.mean().item<double>();
      return;
    }
    auto loss = -score(true).log_probs.mean();  // entropy computed, unused: as the actor does
    loss.backward();
    optimizer->accumulate_grads();
    optimizer->step(1e-5);
    loss_value = loss.item<double>();  // also waits for the GPU
  };
  for (int64_t i = 0; i < warmup; ++i) step();
  const int device_index = device.is_cuda() ? device.index() : 0;
  vime::core::reset_cuda_peak(device_index);
  if (group) group->barrier();
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iters; ++i) step();
  (void)model.named_parameters()[0].second.sum().item<double>();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
      double(iters);
  const double flops = model_flops(config, tokens, seq_len) / (forward_only ? 3.0 : 1.0);
  const int world = group ? group->size() : 1;
  const int model_ranks = groups.tp_size * groups.cp_size;
  const int replicas = world / model_ranks;
  const double peak_gib =
      static_cast<double>(vime::core::cuda_peak_allocated_bytes(device_index)) / double(1 << 30);
  if (!profile_path.empty()) {
    const bool traced = !group || group->rank() == 0;
    if (traced) vime::bench::start_kineto_trace(device.is_cuda());
    step();
    if (traced) vime::bench::save_kineto_trace(profile_path);
  }
  if (group && group->rank() != 0) return 0;
  std::printf(
      "{\"impl\": \"vime\", \"model\": \"%s\", \"recompute\": %s, \"recompute_layers\": %lld, "
      "\"gpus\": %d, "
      "\"tokens_per_gpu\": %lld, \"seq_len\": %lld, \"step_ms\": %.2f, \"tokens_per_s\": %.1f, "
      "\"tflops_per_gpu\": %.1f, \"mfu\": %.4f, \"peak_gib\": %.2f, \"loss\": %.4f, "
      "\"params\": %lld, \"distributed_optimizer\": %s, \"forward_only\": %s, \"tp\": %d, "
      "\"cp\": %d, \"actor\": %s}\n",
      model_name.c_str(), recompute ? "true" : "false", static_cast<long long>(recompute_layers),
      world, static_cast<long long>(tokens), static_cast<long long>(seq_len), seconds * 1e3,
      double(tokens) * replicas / seconds, flops / seconds / 1e12 / model_ranks,
      flops / seconds / 1e12 / model_ranks / peak_tflops, peak_gib, loss_value,
      static_cast<long long>(config.num_parameters()), distributed_optimizer ? "true" : "false",
      forward_only ? "true" : "false", groups.tp_size, groups.cp_size,
      actor_step ? "true" : "false");
  std::fflush(stdout);
  return 0;
}
