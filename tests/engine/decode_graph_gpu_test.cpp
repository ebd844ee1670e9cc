// On the GPU machine (skipped without CUDA): vime's paged decode kernel against the ATen reference
// and the gather path (GQA, head_dim 64/128, fp32/bf16/fp16, lengths across block boundaries), its
// K/V write, and the engine's CUDA-graph decode against its eager decode and its varlen path.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <catch2/catch.hpp>
#include <future>

#include "common/model_presets.hpp"
#include "engine/engine_fixtures.hpp"
#include "support/skip.hpp"
#include "vime/engine/decode_graph.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/model/lora.hpp"
#include "vime/model/model.hpp"
#include "vime/model/paged_attention.hpp"
#include "vime/model/paged_decode.hpp"
#include "vime/model/paged_forward.hpp"

namespace {

// The gather path for one new token per row (what paged_forward runs for decode rows).
at::Tensor gather_attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                            const at::Tensor& tables, const std::vector<int32_t>& lens,
                            double scale) {
  const int64_t batch = q.size(0), block_size = keys.size(1);
  auto tables_cpu = tables.to(at::kCPU);
  vime::PagedAttentionInfo info;
  std::vector<int64_t> slots, cu_q, cu_k{0};
  for (int64_t b = 0; b <= batch; ++b) cu_q.push_back(b);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t p = 0; p < lens[b]; ++p)
      slots.push_back(tables_cpu[b][p / block_size].item<int64_t>() * block_size + p % block_size);
    cu_k.push_back(cu_k.back() + lens[b]);
    info.seqlens_k.push_back(lens[b]);
    info.max_seqlen_k = std::max<int64_t>(info.max_seqlen_k, lens[b]);
  }
  info.cu_seqlens_q = cu_q;
  info.max_seqlen_q = 1;
  auto on_device = [&](const std::vector<int64_t>& v, at::ScalarType type) {
    return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(type).to(q.device());
  };
  info.cu_seqlens_q_device = on_device(cu_q, at::kInt);
  info.cu_seqlens_k_device = on_device(cu_k, at::kInt);
  info.block_tables = tables;
  info.gather_slots = on_device(slots, at::kLong);
  return vime::paged_attention(q, keys, values, info, scale, vime::PagedAttentionPath::kGather);
}

}  // namespace

TEST_CASE("vime's paged decode kernel equals the gather path and the reference",
          "[gpu][engine_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  const std::vector<int32_t> lens{1, 15, 16, 17, 31, 32, 33, 100, 255, 256, 257, 600};
  const int64_t block_size = 16, max_blocks = 40, batch = static_cast<int64_t>(lens.size());
  for (auto dtype : {at::kFloat, at::kBFloat16, at::kHalf}) {
    for (int64_t head_dim : {64, 128}) {
      for (int64_t groups : {1, 2, 4, 8}) {
        const int64_t kv_heads = 2, heads = kv_heads * groups, blocks = batch * max_blocks + 5;
        at::manual_seed(11 + groups + head_dim);
        const auto f32 = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
        auto q = at::randn({batch, heads, head_dim}, f32).to(dtype);
        auto keys = at::randn({blocks, block_size, kv_heads, head_dim}, f32).to(dtype);
        auto values = at::randn({blocks, block_size, kv_heads, head_dim}, f32).to(dtype);
        auto tables = at::randperm(blocks, f32.dtype(at::kLong))
                          .narrow(0, 0, batch * max_blocks)
                          .view({batch, max_blocks})
                          .to(at::kInt);
        auto lens_t = at::tensor(lens, at::TensorOptions().dtype(at::kInt)).to(at::kCUDA);
        const double scale = 1.0 / std::sqrt(double(head_dim));
        REQUIRE(vime::paged_decode_kernel_available(q, kv_heads));
        auto out = vime::paged_decode_attention(q, keys, values, tables, lens_t, scale);
        auto ref = vime::paged_decode_attention_reference(q, keys, values, tables, lens_t, scale);
        auto gather = gather_attention(q, keys, values, tables, lens, scale);
        const double tol = dtype == at::kFloat ? 1e-4 : 2e-2;
        const double to_ref = (out.to(at::kFloat) - ref.to(at::kFloat)).abs().max().item<double>();
        const double to_gather =
            (out.to(at::kFloat) - gather.to(at::kFloat)).abs().max().item<double>();
        INFO("dtype " << c10::toString(dtype) << ", head_dim " << head_dim << ", groups " << groups
                      << ": kernel - reference " << to_ref << ", kernel - gather " << to_gather);
        CHECK(to_ref < tol);
        CHECK(to_gather < tol);
      }
    }
  }
  // A padding row (length 0) gives zeros.
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16).device(at::kCUDA);
  auto q = at::randn({2, 4, 128}, bf16);
  auto keys = at::randn({4, 16, 2, 128}, bf16), values = at::randn({4, 16, 2, 128}, bf16);
  auto tables = at::tensor(std::vector<int32_t>{0, 1, 2, 3}).view({2, 2}).to(at::kCUDA);
  auto padded_lens = at::tensor(std::vector<int32_t>{20, 0}).to(at::kCUDA);
  auto out = vime::paged_decode_attention(q, keys, values, tables, padded_lens, 0.1);
  CHECK(out[1].abs().max().item<double>() == 0.0);
  CHECK(out[0].abs().max().item<double>() > 0.0);
}

TEST_CASE("split-K decode equals the unsplit kernel and the reference", "[gpu][engine_gpu]") {
  // (and the two-positions-per-warp layout equals the warp-per-position one)
  VIME_SKIP_WITHOUT_CUDA();
  // Lengths at block (16) and range (kMinSplitPositions = 256) boundaries, a padding row, and rows
  // too short to split beside long ones; every split count against splits = 1 and the reference.
  const std::vector<int32_t> lens{0,   1,   15,  16,  17,   255,  256,  257,  511,  512,
                                  513, 767, 768, 769, 1000, 2047, 2048, 2049, 4095, 4100};
  const int64_t block_size = 16, max_blocks = 260, batch = static_cast<int64_t>(lens.size());
  for (auto dtype : {at::kFloat, at::kBFloat16}) {
    for (int64_t head_dim : {64, 128}) {
      const int64_t kv_heads = 2, groups = head_dim == 128 ? 3 : 4, heads = kv_heads * groups;
      const int64_t blocks = batch * max_blocks + 3;
      at::manual_seed(31 + head_dim);
      const auto f32 = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
      auto q = at::randn({batch, heads, head_dim}, f32).to(dtype);
      auto keys = at::randn({blocks, block_size, kv_heads, head_dim}, f32).to(dtype);
      auto values = at::randn({blocks, block_size, kv_heads, head_dim}, f32).to(dtype);
      auto tables = at::randperm(blocks, f32.dtype(at::kLong))
                        .narrow(0, 0, batch * max_blocks)
                        .view({batch, max_blocks})
                        .to(at::kInt);
      auto lens_t = at::tensor(lens, at::TensorOptions().dtype(at::kInt)).to(at::kCUDA);
      const double scale = 1.0 / std::sqrt(double(head_dim));
      auto unsplit = vime::paged_decode_attention(q, keys, values, tables, lens_t, scale, {1, 32});
      auto ref = vime::paged_decode_attention_reference(q, keys, values, tables, lens_t, scale);
      const double tol = dtype == at::kFloat ? 1e-4 : 2e-2;
      CHECK((unsplit.to(at::kFloat) - ref.to(at::kFloat)).abs().max().item<double>() < tol);
      // Every split count (0: the automatic choice), with a warp per position and with two.
      for (int64_t lanes : {32, 16}) {
        for (int64_t splits : {0, 1, 2, 3, 4, 7, 16}) {
          auto out =
              vime::paged_decode_attention(q, keys, values, tables, lens_t, scale, {splits, lanes});
          auto diff = (out.to(at::kFloat) - unsplit.to(at::kFloat)).abs().amax({1, 2}).cpu();
          const double to_ref =
              (out.to(at::kFloat) - ref.to(at::kFloat)).abs().max().item<double>();
          for (int64_t b = 0; b < batch; ++b) {
            INFO(c10::toString(dtype) << ", head_dim " << head_dim << ", lanes " << lanes
                                      << ", splits " << splits << ", length " << lens[b]);
            CHECK(diff[b].item<double>() < tol);
          }
          INFO(c10::toString(dtype)
               << ", head_dim " << head_dim << ", lanes " << lanes << ", splits " << splits);
          CHECK(to_ref < tol);
          CHECK(out[0].abs().max().item<double>() == 0.0);  // the padding row
        }
      }
    }
  }
}

TEST_CASE("the CUDA K/V write puts rows in their slots and skips padding", "[gpu][engine_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16).device(at::kCUDA);
  auto keys = at::zeros({6, 16, 8, 128}, bf16), values = at::zeros({6, 16, 8, 128}, bf16);
  auto k = at::randn({4, 8, 128}, bf16), v = at::randn({4, 8, 128}, bf16);
  auto slots = at::tensor(std::vector<int32_t>{17, -1, 95, 0}).to(at::kCUDA);
  vime::write_paged_kv(keys, values, k, v, slots);
  auto cpu_keys = at::zeros({6, 16, 8, 128}, at::kBFloat16);
  auto cpu_values = at::zeros({6, 16, 8, 128}, at::kBFloat16);
  vime::write_paged_kv(cpu_keys, cpu_values, k.cpu(), v.cpu(), slots.cpu());
  CHECK(at::equal(keys.cpu(), cpu_keys));
  CHECK(at::equal(values.cpu(), cpu_values));
  CHECK(cpu_keys.abs().sum().item<double>() > 0);
}

namespace {

// The tiny engine model with heads of 64 (the kernel's), 8 query heads over 2 KV heads.
std::unique_ptr<vime::Model> kernel_sized_model(at::ScalarType dtype) {
  auto config = vime::presets::tiny_qwen3_real_vocab(1024);
  config.head_dim = 64;
  config.num_attention_heads = 8;
  config.num_key_value_heads = 2;
  auto model = std::make_unique<vime::Model>(config, dtype, at::kCUDA, 7);
  at::NoGradGuard no_grad;
  for (auto& [name, t] : model->named_parameters())
    if (name == "lm_head.weight") t.mul_(40.0);
  return model;
}

std::vector<vime::GenerateRequest> decode_requests() {
  std::vector<vime::GenerateRequest> requests;
  for (int i = 0; i < 11; ++i) {  // 11 rows: padded to the bucket of 16
    std::vector<int32_t> p;
    for (int t = 0; t < 5 + 23 * i; ++t) p.push_back((1000 + 7919 * (i * 31 + t)) % 150000);
    requests.push_back(vime::test::make_request(p, 40 + 2 * i));  // rows leave: other buckets
  }
  return requests;
}

struct EngineRun {
  std::vector<std::vector<int32_t>> outputs;
  int64_t graphs = 0;
};

EngineRun run_engine(vime::Model& model, vime::engine::NativeEngineOptions options) {
  vime::engine::NativeEngine engine(model, nullptr, options);
  engine.pause();  // scheduled together
  std::vector<std::future<vime::GenerateResponse>> futures;
  for (const auto& r : decode_requests()) futures.push_back(engine.submit(r, {}));
  engine.resume();
  EngineRun run;
  for (auto& f : futures) run.outputs.push_back(f.get().output_ids);
  run.graphs = engine.stats().cuda_graphs;
  return run;
}

double agreement(const EngineRun& a, const EngineRun& b) {
  int64_t same = 0, total = 0;
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    size_t k = 0;
    while (k < a.outputs[i].size() && k < b.outputs[i].size() && a.outputs[i][k] == b.outputs[i][k])
      ++k;
    same += static_cast<int64_t>(k);
    total += static_cast<int64_t>(a.outputs[i].size());
  }
  return double(same) / double(total);
}

}  // namespace

TEST_CASE("CUDA-graph decode gives the eager decode's greedy output", "[gpu][engine_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  for (auto dtype : {at::kFloat, at::kBFloat16}) {
    auto model = kernel_sized_model(dtype);
    vime::engine::NativeEngineOptions graphs, eager, varlen;
    graphs.kv_block_size = eager.kv_block_size = varlen.kv_block_size = 16;
    eager.cuda_graphs = false;
    varlen.fixed_shape_decode = false;
    const auto with_graphs = run_engine(*model, graphs);
    const auto without = run_engine(*model, eager);
    const auto reference = run_engine(*model, varlen);
    CHECK(with_graphs.graphs >= 2);
    CHECK(without.graphs == 0);
    const double graph_eager = agreement(with_graphs, without);
    const double graph_varlen = agreement(with_graphs, reference);
    WARN(c10::toString(dtype) << ": greedy agreement graph/eager " << graph_eager
                              << ", graph/varlen " << graph_varlen << " (" << with_graphs.graphs
                              << " graphs captured)");
    if (dtype == at::kFloat) {
      CHECK(with_graphs.outputs == without.outputs);
      CHECK(graph_varlen >= 0.95);
    } else {
      CHECK(graph_eager >= 0.8);
      CHECK(graph_varlen >= 0.5);
    }
  }
}

TEST_CASE("decode graphs are captured again when the KV cache moves", "[gpu][engine_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  auto model = kernel_sized_model(at::kFloat);
  at::NoGradGuard no_grad;
  const int64_t block_size = 16;
  vime::PagedKvCache cache(model->config(), at::kFloat, at::kCUDA, block_size);
  cache.resize(16);
  std::vector<std::vector<int32_t>> sequences{{11, 12, 13, 14, 15}, {21, 22, 23, 24, 25, 26, 27}};
  std::vector<std::vector<int32_t>> tables{{3, 9}, {12, 1}};
  std::vector<vime::PagedSequence> prefill;
  for (size_t i = 0; i < sequences.size(); ++i)
    prefill.push_back(
        {sequences[i], 0, static_cast<int64_t>(sequences[i].size()), &tables[i], true});
  (void)vime::paged_forward(*model, cache, prefill);
  vime::engine::DecodeGraphRunner graphs(*model, cache, 8, 2, true);
  vime::engine::DecodeGraphRunner eager(*model, cache, 8, 2, false);
  for (int step = 0; step < 4; ++step) {
    if (step == 2) cache.resize(64);  // reallocates every layer's K/V: the graphs must follow
    std::vector<vime::engine::DecodeRow> rows;
    for (size_t i = 0; i < sequences.size(); ++i) {
      sequences[i].push_back(300 + 17 * step + static_cast<int32_t>(i));
      rows.push_back(
          {sequences[i].back(), static_cast<int64_t>(sequences[i].size()) - 1, tables[i]});
    }
    auto expected = eager.run(rows).clone();
    auto replayed = graphs.run(rows).clone();
    CHECK((replayed - expected).abs().max().item<double>() < 1e-3);
    std::vector<int64_t> full(sequences[0].begin(), sequences[0].end());
    auto reference = model->forward(vime::PackedBatch::pack({full}, at::kCUDA))[-1];
    CHECK((replayed[0] - reference).abs().max().item<double>() < 1e-2);
  }
  CHECK(graphs.graphs_captured() == 2);  // bucket 2, then bucket 2 again after the move
  CHECK(graphs.graph_replays() == 4);
}

TEST_CASE("split-K decode graphs give the unsplit engine's greedy output", "[gpu][engine_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  // 11 rows of up to ~300 positions: those past 256 split in two. fp32; the merge changes the
  // order of the sums only, so greedy outputs agree but for near-ties.
  auto model = kernel_sized_model(at::kFloat);
  vime::engine::NativeEngineOptions split, unsplit;
  split.kv_block_size = unsplit.kv_block_size = 16;
  split.decode_kernel.kv_splits = 4;
  unsplit.decode_kernel.kv_splits = 1;
  const auto a = run_engine(*model, split);
  const auto b = run_engine(*model, unsplit);
  CHECK(a.graphs >= 1);
  const double same = agreement(a, b);
  WARN("split-K / unsplit greedy agreement " << same);
  CHECK(same >= 0.95);
}

// LoRA: the engine generates with the trainer's adapters (unmerged); an update writes them in
// place, so the captured graphs stay valid and follow it: the same engine, after the update,
// gives an eager engine's output on the updated model.
TEST_CASE("CUDA-graph decode with LoRA adapters follows an in-place adapter update",
          "[gpu][engine_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  auto model = kernel_sized_model(at::kFloat);
  vime::LoraConfig lora;
  lora.rank = 8;
  lora.alpha = 16;
  lora.target_modules.assign(vime::kLoraModules.begin(), vime::kLoraModules.end());
  model->add_lora(lora);
  auto draw_b = [&](uint64_t seed) {
    at::NoGradGuard no_grad;
    at::manual_seed(seed);
    for (auto& [name, t] : model->lora_parameters())
      if (name.find("lora_B") != std::string::npos) t.normal_(0.0, 0.05);
  };
  auto generate = [](vime::engine::NativeEngine& engine) {
    engine.pause();
    std::vector<std::future<vime::GenerateResponse>> futures;
    for (const auto& r : decode_requests()) futures.push_back(engine.submit(r, {}));
    engine.resume();
    EngineRun run;
    for (auto& f : futures) run.outputs.push_back(f.get().output_ids);
    run.graphs = engine.stats().cuda_graphs;
    return run;
  };
  vime::engine::NativeEngineOptions graphs, eager;
  graphs.kv_block_size = eager.kv_block_size = 16;
  eager.cuda_graphs = false;
  const auto base = run_engine(*model, eager);  // B = 0: the base
  draw_b(1);
  vime::engine::NativeEngine engine(*model, nullptr, graphs);
  const auto first = generate(engine);
  CHECK(first.graphs >= 2);
  CHECK(first.outputs == run_engine(*model, eager).outputs);
  CHECK(agreement(first, base) < 0.9);  // the adapters change what is generated
  draw_b(2);                            // in place, as the optimizer writes them
  const auto second = generate(engine);
  CHECK(second.outputs == run_engine(*model, eager).outputs);
  CHECK(agreement(second, first) < 0.9);
}
