// Generation throughput of the NativeEngine on a random-init model: N prompts of P random tokens,
// M new tokens each (no EOS, so every request runs M steps), all submitted at once.
//   engine_bench --model qwen3-0.6b|qwen3-4b|tiny --prompts 256 --prompt-len 128 --new-tokens 512
//                [--n 1] [--max-running 256] [--device cuda] [--temperature 1.0]
//                [--block-size B] [--gather-attention]
//                [--enforce-eager] [--varlen-decode] [--breakdown]
//                [--gpu-memory-utilization F] [--max-num-batched-tokens T]
//                [--tp T] [--fp32] [--dump-ids FILE] [--reference-sampler] [--kv-splits S]
//                [--decode-lanes 32|16]
// --n samples each prompt n times (a GRPO group: the samples share the prompt's cached blocks);
// --gather-attention runs the CPU path of the paged attention (the reference on CUDA); decode-only
// steps run vime's paged decode kernel replayed as CUDA graphs, --enforce-eager without graphs,
// --varlen-decode through the varlen gather path of mixed steps.
// --tp T: T local ranks (vime's launcher) run one tensor-parallel engine, each on its own shards;
// rank 0 takes the requests. --fp32 runs in fp32 (bf16 on CUDA otherwise); --dump-ids writes each
// request's output ids, one line per request (compare greedy runs at different --tp).
// --reference-sampler samples with the ATen path instead of vime's CUDA sampling kernel;
// --kv-splits S fixes the decode kernel's split-K (1: unsplit; default: chosen per batch size),
// --decode-lanes its lanes per K/V position (32: a warp each; 16: two per warp; default: its pick).
// Prints one JSON line: generated tokens/s over the whole run (prefill included), decode-only
// tokens/s, prefill tokens/s, steps, the KV cache size and where rank 0's host time went (issuing
// forwards, sampling, posting tensor-parallel plans); each other TP rank prints its own line
// ("tp_follower": seconds waiting for plans and issuing forwards, warm-up included).
// tools/engine_bench/hf_generate_bench.py measures HF transformers' generate() on the same shape.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <torch/cuda.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "common/model_presets.hpp"
#include "vime/dist/local_launcher.hpp"
#include "vime/dist/parallel_groups.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/dist/rank_device.hpp"
#include "vime/dist/rank_env.hpp"
#include "vime/engine/decode_graph.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/engine/row_sampling.hpp"
#include "vime/model/model.hpp"
#include "vime/model/paged_decode.hpp"

namespace {

// Each request's output ids. A failed request ends the bench with its error (not std::terminate
// in 256 threads).
std::vector<std::vector<int32_t>> run_all(vime::engine::NativeEngine& engine,
                                          const std::vector<vime::GenerateRequest>& requests) {
  std::vector<std::vector<int32_t>> ids(requests.size());
  std::vector<std::thread> threads;
  std::atomic<bool> failed{false};
  for (size_t i = 0; i < requests.size(); ++i)
    threads.emplace_back([&engine, &requests, &ids, &failed, i] {
      try {
        ids[i] = engine.generate(requests[i]).output_ids;
      } catch (const std::exception& e) {
        if (!failed.exchange(true)) std::fprintf(stderr, "engine_bench: %s\n", e.what());
      }
    });
  for (auto& t : threads) t.join();
  if (failed) std::exit(1);
  return ids;
}

// --breakdown: the parts of one decode step of `rows` rows at `context` positions each, in ms: the
// paged decode kernel over all layers (split-K as chosen, and at fixed split counts), the eager
// fixed-shape forward, its graph replay, sampling (vime's kernel and the ATen reference; plain
// temperature and top-k 50 + top-p 0.9).
void breakdown(vime::Model& model, int64_t rows, int64_t context, double temperature) {
  const auto& cfg = model.config();
  const auto device = model.device();
  at::AutoGradMode no_grad(false);
  const int64_t block_size = 16, blocks = (context + block_size - 1) / block_size;
  vime::PagedKvCache cache(cfg, model.dtype(), device, block_size);
  cache.resize(rows * blocks);
  std::vector<std::vector<int32_t>> tables(rows);
  std::vector<int32_t> flat;
  std::vector<vime::engine::DecodeRow> decode_rows;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < blocks; ++b) tables[r].push_back(static_cast<int32_t>(r * blocks + b));
    flat.insert(flat.end(), tables[r].begin(), tables[r].end());
  }
  for (int64_t r = 0; r < rows; ++r)
    decode_rows.push_back({static_cast<int32_t>(r * 7 % 1000), context - 1, tables[r]});
  auto sync = [&] {
    if (device.is_cuda()) torch::cuda::synchronize();
  };
  auto ms = [&](auto&& fn, int iters) {
    fn();
    sync();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) fn();
    sync();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
               .count() /
           iters;
  };
  auto q = at::randn({rows, cfg.num_attention_heads, cfg.head_dim},
                     at::TensorOptions().dtype(model.dtype()).device(device));
  auto tables_t =
      at::tensor(flat, at::TensorOptions().dtype(at::kInt)).to(device).view({rows, blocks});
  auto lens = at::full({rows}, context, at::TensorOptions().dtype(at::kInt).device(device));
  auto attention_ms = [&](int64_t splits, int64_t lanes) {
    return ms(
               [&] {
                 (void)vime::paged_decode_attention(q, cache.keys(0), cache.values(0), tables_t,
                                                    lens, 0.08, {splits, lanes});
               },
               20) *
           double(cfg.num_layers);
  };
  const double attention = attention_ms(0, 0);
  const double attention_lanes32 = attention_ms(0, 32), attention_lanes16 = attention_ms(0, 16);
  std::string by_splits;
  for (int64_t splits : {1, 2, 4, 8, 16})
    by_splits += (by_splits.empty() ? "" : ", ") + std::string("\"") + std::to_string(splits) +
                 "\": " + std::to_string(attention_ms(splits, 0));
  vime::engine::DecodeGraphRunner eager(model, cache, rows, blocks, false);
  vime::engine::DecodeGraphRunner graphs(model, cache, rows, blocks, true);
  const double eager_ms = ms([&] { (void)eager.run(decode_rows); }, 10);
  const double graph_ms = ms([&] { (void)graphs.run(decode_rows); }, 20);
  auto logits = graphs.run(decode_rows).clone();
  auto sampling_ms = [&](int64_t top_k, double top_p, vime::engine::SamplerPath path) {
    vime::SamplingParams params;
    params.temperature = temperature;
    params.top_k = top_k;
    params.top_p = top_p;
    const auto sampling = vime::engine::make_row_sampling(params, {}, 1);
    std::vector<vime::engine::SamplerRow> sampler_rows(rows, {&sampling, 0, 0});
    return ms(
        [&] {
          (void)vime::engine::sample_tokens(logits, sampler_rows,
                                            vime::engine::LogProbMode::kTemperature, path);
        },
        10);
  };
  using vime::engine::SamplerPath;
  const double sample_ms = sampling_ms(-1, 1.0, SamplerPath::kAuto);
  const double sample_ref_ms = sampling_ms(-1, 1.0, SamplerPath::kReference);
  const double filtered_ms = sampling_ms(50, 0.9, SamplerPath::kAuto);
  const double filtered_ref_ms = sampling_ms(50, 0.9, SamplerPath::kReference);
  const double top_p_ms = sampling_ms(-1, 0.9, SamplerPath::kAuto);
  const double top_p_ref_ms = sampling_ms(-1, 0.9, SamplerPath::kReference);
  std::printf(
      "{\"breakdown\": true, \"rows\": %lld, \"context\": %lld, \"attention_kernel_ms\": %.3f, "
      "\"attention_ms_by_splits\": {%s}, \"attention_ms_lanes32\": %.3f, "
      "\"attention_ms_lanes16\": %.3f, "
      "\"eager_forward_ms\": %.3f, \"graph_forward_ms\": %.3f, \"sampling_ms\": %.3f, "
      "\"sampling_reference_ms\": %.3f, \"sampling_topk50_topp0.9_ms\": %.3f, "
      "\"sampling_topk50_topp0.9_reference_ms\": %.3f, \"sampling_topp0.9_ms\": %.3f, "
      "\"sampling_topp0.9_reference_ms\": %.3f, \"kv_read_gb_per_s\": %.1f}\n",
      static_cast<long long>(rows), static_cast<long long>(context), attention, by_splits.c_str(),
      attention_lanes32, attention_lanes16, eager_ms, graph_ms, sample_ms, sample_ref_ms,
      filtered_ms, filtered_ref_ms, top_p_ms, top_p_ref_ms,
      double(rows * context) * double(vime::PagedKvCache::block_bytes(cfg, model.dtype(), 1)) /
          (attention * 1e6));
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_name = "qwen3-0.6b", device_name = "cuda", dump_ids;
  int tp = 1;
  bool fp32 = false;
  int64_t prompts = 256, prompt_len = 128, new_tokens = 512, max_running = 256, n = 1;
  double temperature = 1.0;
  bool breakdown_only = false;
  vime::engine::NativeEngineOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() { return std::string(i + 1 < argc ? argv[++i] : ""); };
    if (a == "--model")
      model_name = next();
    else if (a == "--prompts")
      prompts = std::stoll(next());
    else if (a == "--prompt-len")
      prompt_len = std::stoll(next());
    else if (a == "--new-tokens")
      new_tokens = std::stoll(next());
    else if (a == "--max-running")
      max_running = std::stoll(next());
    else if (a == "--device")
      device_name = next();
    else if (a == "--temperature")
      temperature = std::stod(next());
    else if (a == "--n")
      n = std::stoll(next());
    else if (a == "--block-size")
      options.kv_block_size = std::stoll(next());
    else if (a == "--gather-attention")
      options.attention_path = vime::PagedAttentionPath::kGather;
    else if (a == "--breakdown")
      breakdown_only = true;
    else if (a == "--enforce-eager")
      options.cuda_graphs = false;
    else if (a == "--varlen-decode")
      options.fixed_shape_decode = false;
    else if (a == "--gpu-memory-utilization") {
      options.gpu_memory_utilization = std::stod(next());
      options.gpu_memory_flag = "--gpu-memory-utilization";
    } else if (a == "--max-num-batched-tokens")
      options.max_prefill_tokens = std::stoll(next());
    else if (a == "--tp")
      tp = std::stoi(next());
    else if (a == "--fp32")
      fp32 = true;
    else if (a == "--dump-ids")
      dump_ids = next();
    else if (a == "--reference-sampler")
      options.sampler_path = vime::engine::SamplerPath::kReference;
    else if (a == "--kv-splits")
      options.decode_kernel.kv_splits = std::stoll(next());
    else if (a == "--decode-lanes")
      options.decode_kernel.lanes_per_position = std::stoll(next());
    else {
      std::fprintf(stderr, "unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  auto env = vime::dist::rank_env_from_environment(vime::Args{});
  if (tp > 1 && env.is_single()) {
    vime::dist::LocalLaunchPlan plan;
    plan.gpus_per_node = tp;
    plan.argv.assign(argv, argv + argc);
    plan.program = "engine_bench";
    return vime::dist::launch_local_ranks(plan, std::cout);
  }
  at::Device device(device_name);
  std::unique_ptr<vime::dist::ProcessGroup> group;
  if (!env.is_single()) {
    if (device.is_cuda()) device = vime::dist::bind_rank_device(env);
    group = vime::dist::ProcessGroup::create(env, device, std::chrono::minutes(10));
  }
  const auto groups = vime::dist::make_parallel_groups(group.get(), tp);
  const auto dtype = device.is_cuda() && !fp32 ? at::kBFloat16 : at::kFloat;
  const auto config = vime::presets::by_name(model_name);
  vime::Model model(config, dtype, device, 1, vime::TensorParallel::over(groups.tensor_parallel()));
  model.set_requires_grad(false);
  if (!dump_ids.empty() && device.is_cuda()) {
    // The same weights at any --tp (a CUDA init draws from each device's own generator): the whole
    // model drawn on the CPU from one seed, each rank loading its slice.
    vime::Model whole(config, at::kFloat, at::kCPU, 1);
    vime::NamedTensorList tensors;
    for (const auto& [name, t] : whole.named_parameters()) tensors.emplace_back(name, t.to(device));
    model.load_tensors(tensors, "engine_bench's seeded weights");
  }
  if (breakdown_only) {
    breakdown(model, prompts, prompt_len + new_tokens / 2, temperature);
    return 0;
  }

  auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
  auto make_requests = [&](int64_t count, int64_t tokens, int64_t samples) {
    std::vector<vime::GenerateRequest> out(count * samples);
    for (int64_t i = 0; i < count; ++i) {
      auto t =
          at::randint(config.vocab_size, {prompt_len}, gen, at::TensorOptions().dtype(at::kInt));
      for (int64_t j = 0; j < samples; ++j) {
        auto& r = out[i * samples + j];
        r.input_ids.assign(t.data_ptr<int32_t>(), t.data_ptr<int32_t>() + prompt_len);
        r.sampling_params.max_new_tokens = tokens;
        r.sampling_params.temperature = temperature;
        r.sampling_params.seed = i * samples + j;
      }
    }
    return out;
  };
  options.max_running_requests = max_running;
  options.max_context_len = prompt_len + new_tokens + 1;
  vime::engine::NativeEngine engine(model, nullptr, options);
  if (groups.tp_rank != 0) {  // runs rank 0's steps until it pauses at the end
    engine.pause();
    const auto s = engine.stats();
    std::printf(
        "{\"tp_follower\": %d, \"forwards\": %lld, \"plan_wait_s\": %.3f, "
        "\"forward_s\": %.3f}\n",
        groups.tp_rank, static_cast<long long>(s.decode_steps), s.tp_plan_seconds,
        s.forward_seconds);
    return 0;
  }
  run_all(engine, make_requests(std::min<int64_t>(prompts, 8), 8, 1));  // warm-up: kernels, cache
  const auto warm = engine.stats();

  const auto requests = make_requests(prompts, new_tokens, n);
  const auto start = std::chrono::steady_clock::now();
  const auto ids = run_all(engine, requests);
  engine.pause();  // the other ranks may go
  if (!dump_ids.empty()) {
    std::ofstream out(dump_ids);
    for (const auto& row : ids) {
      for (size_t t = 0; t < row.size(); ++t) out << (t ? " " : "") << row[t];
      out << "\n";
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto s = engine.stats();
  const double generated = double(s.generated_tokens - warm.generated_tokens);
  const double decode_s = s.decode_seconds - warm.decode_seconds;
  const double prefill_s = s.prefill_seconds - warm.prefill_seconds;
  std::printf(
      "{\"system\": \"vime-native\", \"model\": \"%s\", \"device\": \"%s\", \"dtype\": \"%s\", "
      "\"prompts\": %lld, \"prompt_len\": %lld, \"new_tokens\": %lld, \"max_running\": %lld, "
      "\"seconds\": %.3f, \"generated_tokens\": %.0f, \"tokens_per_s\": %.1f, "
      "\"decode_tokens_per_s\": %.1f, \"prefill_tokens_per_s\": %.1f, \"decode_steps\": %lld, "
      "\"kv_cache_gib\": %.3f, \"n\": %lld, \"prefill_tokens\": %lld, "
      "\"prefix_cached_tokens\": %lld, \"preempted\": %lld, \"kv_blocks\": %lld, "
      "\"decode\": \"%s\", \"cuda_graphs\": %lld, \"tp\": %d, \"forward_s\": %.3f, "
      "\"sample_s\": %.3f, \"tp_plan_s\": %.3f, \"sampler\": \"%s\", \"kv_splits\": %lld, "
      "\"decode_lanes\": %lld}\n",
      model_name.c_str(), device_name.c_str(), dtype == at::kBFloat16 ? "bf16" : "fp32",
      static_cast<long long>(prompts), static_cast<long long>(prompt_len),
      static_cast<long long>(new_tokens), static_cast<long long>(max_running), seconds, generated,
      generated / seconds, double(s.decode_tokens - warm.decode_tokens) / decode_s,
      double(s.prefill_tokens - warm.prefill_tokens) / prefill_s,
      static_cast<long long>(s.decode_steps - warm.decode_steps),
      double(s.kv_cache_bytes) / (1024.0 * 1024.0 * 1024.0), static_cast<long long>(n),
      static_cast<long long>(s.prefill_tokens - warm.prefill_tokens),
      static_cast<long long>(s.prefix_cached_tokens - warm.prefix_cached_tokens),
      static_cast<long long>(s.preempted - warm.preempted),
      static_cast<long long>(s.kv_blocks_total),
      !options.fixed_shape_decode.value_or(device.is_cuda()) ? "varlen"
      : options.cuda_graphs                                  ? "graph"
                                                             : "eager",
      static_cast<long long>(s.cuda_graphs), tp, s.forward_seconds - warm.forward_seconds,
      s.sample_seconds - warm.sample_seconds, s.tp_plan_seconds - warm.tp_plan_seconds,
      options.sampler_path == vime::engine::SamplerPath::kReference ? "reference" : "auto",
      static_cast<long long>(options.decode_kernel.kv_splits),
      static_cast<long long>(options.decode_kernel.lanes_per_position));
  return 0;
}
