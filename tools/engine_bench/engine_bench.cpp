// Generation throughput of the NativeEngine on a random-init model: N prompts of P random tokens,
// M new tokens each (no EOS, so every request runs M steps), all submitted at once.
//   engine_bench --model qwen3-0.6b|qwen3-4b|tiny --prompts 256 --prompt-len 128 --new-tokens 512
//                [--n 1] [--max-running 256] [--device cuda] [--temperature 1.0]
//                [--contiguous-kv] [--block-size B] [--gather-attention]
//                [--enforce-eager] [--varlen-decode] [--breakdown]
//                [--gpu-memory-utilization F] [--max-num-batched-tokens T]
// --n samples each prompt n times (a GRPO group: the samples share the prompt's cached blocks);
// --contiguous-kv runs the engine's old per-row cache, to compare against; decode-only steps run
// vime's paged decode kernel replayed as CUDA graphs, --enforce-eager without graphs,
// --varlen-decode through the varlen gather path of mixed steps.
// Prints one JSON line: generated tokens/s over the whole run (prefill included), decode-only
// tokens/s, prefill tokens/s, steps and the KV cache size. tools/engine_bench/hf_generate_bench.py
// measures HF transformers' generate() on the same shape.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <torch/cuda.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "common/model_presets.hpp"
#include "vime/engine/decode_graph.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/engine/row_sampling.hpp"
#include "vime/model/model.hpp"
#include "vime/model/paged_decode.hpp"

namespace {

// A failed request ends the bench with its error (not std::terminate in 256 threads).
void run_all(vime::engine::NativeEngine& engine,
             const std::vector<vime::GenerateRequest>& requests) {
  std::vector<std::thread> threads;
  std::atomic<bool> failed{false};
  for (const auto& r : requests)
    threads.emplace_back([&engine, &r, &failed] {
      try {
        engine.generate(r);
      } catch (const std::exception& e) {
        if (!failed.exchange(true)) std::fprintf(stderr, "engine_bench: %s\n", e.what());
      }
    });
  for (auto& t : threads) t.join();
  if (failed) std::exit(1);
}

// --breakdown: the parts of one decode step of `rows` rows at `context` positions each, in ms: the
// paged decode kernel over all layers, the eager fixed-shape forward, its graph replay, sampling.
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
  const double attention = ms(
                               [&] {
                                 (void)vime::paged_decode_attention(
                                     q, cache.keys(0), cache.values(0), tables_t, lens, 0.08);
                               },
                               20) *
                           double(cfg.num_layers);
  vime::engine::DecodeGraphRunner eager(model, cache, rows, blocks, false);
  vime::engine::DecodeGraphRunner graphs(model, cache, rows, blocks, true);
  const double eager_ms = ms([&] { (void)eager.run(decode_rows); }, 10);
  const double graph_ms = ms([&] { (void)graphs.run(decode_rows); }, 20);
  vime::SamplingParams params;
  params.temperature = temperature;
  const auto sampling = vime::engine::make_row_sampling(params, {}, 1);
  std::vector<vime::engine::SamplerRow> sampler_rows(rows, {&sampling, 0, 0});
  auto logits = graphs.run(decode_rows).clone();
  const double sample_ms = ms(
      [&] {
        (void)vime::engine::sample_tokens(logits, sampler_rows,
                                          vime::engine::LogProbMode::kTemperature);
      },
      10);
  std::printf(
      "{\"breakdown\": true, \"rows\": %lld, \"context\": %lld, \"attention_kernel_ms\": %.3f, "
      "\"eager_forward_ms\": %.3f, \"graph_forward_ms\": %.3f, \"sampling_ms\": %.3f, "
      "\"kv_read_gb_per_s\": %.1f}\n",
      static_cast<long long>(rows), static_cast<long long>(context), attention, eager_ms, graph_ms,
      sample_ms,
      double(rows * context) * double(vime::PagedKvCache::block_bytes(cfg, model.dtype(), 1)) /
          (attention * 1e6));
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_name = "qwen3-0.6b", device_name = "cuda";
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
    else if (a == "--contiguous-kv")
      options.paged_kv = false;
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
    else if (a == "--gpu-memory-utilization")
      options.gpu_memory_utilization = std::stod(next());
    else if (a == "--max-num-batched-tokens")
      options.max_prefill_tokens = std::stoll(next());
    else {
      std::fprintf(stderr, "unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  const at::Device device(device_name);
  const auto dtype = device.is_cuda() ? at::kBFloat16 : at::kFloat;
  const auto config = vime::presets::by_name(model_name);
  vime::Model model(config, dtype, device, 1);
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
  run_all(engine, make_requests(std::min<int64_t>(prompts, 8), 8, 1));  // warm-up: kernels, cache
  const auto warm = engine.stats();

  const auto requests = make_requests(prompts, new_tokens, n);
  const auto start = std::chrono::steady_clock::now();
  run_all(engine, requests);
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
      "\"kv_cache_gib\": %.3f, \"n\": %lld, \"kv\": \"%s\", \"prefill_tokens\": %lld, "
      "\"prefix_cached_tokens\": %lld, \"preempted\": %lld, \"kv_blocks\": %lld, "
      "\"decode\": \"%s\", \"cuda_graphs\": %lld}\n",
      model_name.c_str(), device_name.c_str(), device.is_cuda() ? "bf16" : "fp32",
      static_cast<long long>(prompts), static_cast<long long>(prompt_len),
      static_cast<long long>(new_tokens), static_cast<long long>(max_running), seconds, generated,
      generated / seconds, double(s.decode_tokens - warm.decode_tokens) / decode_s,
      double(s.prefill_tokens - warm.prefill_tokens) / prefill_s,
      static_cast<long long>(s.decode_steps - warm.decode_steps),
      double(s.kv_cache_bytes) / (1024.0 * 1024.0 * 1024.0), static_cast<long long>(n),
      options.paged_kv ? "paged" : "contiguous",
      static_cast<long long>(s.prefill_tokens - warm.prefill_tokens),
      static_cast<long long>(s.prefix_cached_tokens - warm.prefix_cached_tokens),
      static_cast<long long>(s.preempted - warm.preempted),
      static_cast<long long>(s.kv_blocks_total),
      !options.paged_kv                                        ? "contiguous"
      : !options.fixed_shape_decode.value_or(device.is_cuda()) ? "varlen"
      : options.cuda_graphs                                    ? "graph"
                                                               : "eager",
      static_cast<long long>(s.cuda_graphs));
  return 0;
}
