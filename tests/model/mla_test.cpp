// DeepSeek-V3's multi-head latent attention on the tiny goldens of
// tools/parity/make_tiny_goldens.py (tiny_deepseek_v3: q_proj with YaRN scaling;
// tiny_deepseek_v3_qlora: q_a/q_b with a kept multi-token-prediction layer): the config,
// recompute's gradients, convert round trips, and the engine's latent KV cache (prefill chunks,
// decode steps, greedy generation) against the trainer's expanded attention.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "engine/engine_fixtures.hpp"
#include "support/test_support.hpp"
#include "vime/ckpt/model_io.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/model/model.hpp"
#include "vime/model/paged_decode.hpp"
#include "vime/model/paged_forward.hpp"

namespace {

const std::string kGolden = VIME_SOURCE_DIR "/tests/model/golden/";

std::unique_ptr<vime::Model> load(const char* name) {
  return vime::ckpt::load_hf_model(kGolden + name, at::kFloat, at::kCPU);
}

at::Tensor last_logits(vime::Model& model, const std::vector<int32_t>& tokens, int64_t end) {
  return model.forward(vime::PackedBatch::pack(
      {std::vector<int64_t>(tokens.begin(), tokens.begin() + end)}, at::kCPU))[-1];
}

}  // namespace

TEST_CASE("DeepSeek-V3 configs: MLA shape and YaRN factors and what is refused", "[model]") {
  auto yarn = vime::ModelConfig::from_hf_dir(kGolden + "tiny_deepseek_v3");
  CHECK(yarn.model_type == "deepseek_v3");
  CHECK(yarn.is_mla());
  CHECK(yarn.mla.q_lora_rank == 0);
  CHECK(yarn.head_dim == 8);  // the RoPE part
  CHECK(yarn.rope_scaling.type == "yarn");
  // HF: scaling = qk_head_dim^-0.5 * (0.1 * 0.8 * ln 4 + 1)^2; cos/sin times mscale ratio.
  const double m_all = 0.1 * 0.8 * std::log(4.0) + 1, m = 0.1 * std::log(4.0) + 1;
  CHECK(yarn.attention_scale() == Approx(m_all * m_all / 4.0));
  CHECK(yarn.rope_attention_factor() == Approx(m / m_all));
  auto qlora = vime::ModelConfig::from_hf_dir(kGolden + "tiny_deepseek_v3_qlora");
  CHECK(qlora.mla.q_lora_rank == 12);
  CHECK(qlora.mla.num_nextn_predict_layers == 1);
  CHECK(qlora.attention_scale() == Approx(0.25));
  // to_hf_json round-trips the MLA fields.
  auto back = vime::ModelConfig::from_hf_json(yarn.to_hf_json("float32"), "json");
  CHECK(back.mla.qk_nope_head_dim == yarn.mla.qk_nope_head_dim);
  CHECK(back.mla.v_head_dim == 12);
  CHECK(back.rope_scaling.mscale_all_dim == 0.8);
  CHECK(back.num_parameters() == yarn.num_parameters());
  auto model = load("tiny_deepseek_v3");
  int64_t count = 0;
  for (const auto& [name, t] : model->named_parameters()) count += t.numel();
  CHECK(yarn.num_parameters() == count);  // both count the padded vocabulary
  // Routed experts from first_k_dense_replace on, routed as DeepseekV3TopkRouter does.
  auto moe = yarn.to_hf_json("float32");
  moe["n_routed_experts"] = 4;
  moe["num_experts_per_tok"] = 2;
  moe["moe_intermediate_size"] = 16;
  moe["n_shared_experts"] = 1;
  moe["n_group"] = 2;
  moe["topk_group"] = 1;
  moe["first_k_dense_replace"] = 1;
  auto sparse = vime::ModelConfig::from_hf_json(moe, "cfg.json");
  CHECK(sparse.is_mla());
  CHECK(sparse.moe.score_function == "sigmoid");
  CHECK_FALSE(sparse.is_moe_layer(0));
  CHECK(sparse.is_moe_layer(1));
  auto written = sparse.to_hf_json("float32");
  CHECK(written.at("n_group").as_int() == 2);
  CHECK(written.at("first_k_dense_replace").as_int() == 1);
}

TEST_CASE("MLA: recompute gives the same gradients and packing does not leak", "[model]") {
  auto model = load("tiny_deepseek_v3_qlora");
  auto batch = vime::PackedBatch::pack({{1, 2, 3, 4, 5, 6}, {7, 8, 9}}, at::kCPU);
  auto grads_of = [&](bool recompute) {
    model->set_recompute({recompute, 0});
    for (auto& p : model->parameters()) p.mutable_grad() = at::Tensor();
    auto loss = at::log_softmax(model->forward(batch), -1).select(1, 7).sum();
    loss.backward();
    std::vector<at::Tensor> grads;
    for (const auto& [name, p] : model->named_parameters()) {
      INFO(name);
      REQUIRE(p.grad().defined());
      grads.push_back(p.grad().clone());
    }
    return grads;
  };
  auto plain = grads_of(false), recomputed = grads_of(true);
  for (size_t i = 0; i < plain.size(); ++i) {
    CAPTURE(model->named_parameters()[i].first);
    CHECK(at::allclose(plain[i], recomputed[i], 1e-5, 1e-6));
  }
  at::NoGradGuard no_grad;
  auto packed = model->forward(batch);
  auto alone = model->forward(vime::PackedBatch::pack({{7, 8, 9}}, at::kCPU));
  CHECK(at::allclose(packed.slice(0, 6, 9), alone, 1e-5, 1e-5));
}

TEST_CASE("MLA checkpoints save back bit-exact with the multi-token-prediction layer kept",
          "[model]") {
  vime::test::TempDir dir;
  for (const char* name : {"tiny_deepseek_v3", "tiny_deepseek_v3_qlora"}) {
    CAPTURE(name);
    auto hf = vime::ckpt::read_safetensors_dir(kGolden + name);
    for (auto& [n, t] : hf) t = t.to(at::kBFloat16);
    const auto in = dir.path() / (std::string(name) + "_in");
    std::filesystem::create_directories(in);
    std::filesystem::copy_file(kGolden + name + "/config.json", in / "config.json");
    vime::ckpt::write_safetensors(in / "model.safetensors", hf);
    auto model = vime::ckpt::load_hf_model(in, at::kBFloat16, at::kCPU);
    const auto out = dir.path() / (std::string(name) + "_out");
    vime::ckpt::save_hf_model(*model, out);
    auto back = vime::ckpt::read_safetensors_dir(out);
    REQUIRE(back.size() == hf.size());
    std::map<std::string, at::Tensor> by_name(back.begin(), back.end());
    for (const auto& [n, t] : hf) {
      CAPTURE(n);
      REQUIRE(by_name.count(n) == 1);
      CHECK(by_name[n].equal(t));
    }
    CHECK(vime::ModelConfig::from_hf_dir(out).mla.num_nextn_predict_layers ==
          model->config().mla.num_nextn_predict_layers);
  }
}

TEST_CASE("MLA engine: the latent cache's prefill chunks and decode rows give the full logits",
          "[engine]") {
  for (const char* name : {"tiny_deepseek_v3", "tiny_deepseek_v3_qlora"}) {
    CAPTURE(name);
    auto model = load(name);
    at::NoGradGuard no_grad;
    const auto& cfg = model->config();
    vime::PagedKvCache cache(cfg, at::kFloat, at::kCPU, 4);
    CHECK(cache.is_latent());
    // One latent row of kv_lora_rank + qk_rope_head_dim per token and layer.
    CHECK(vime::PagedKvCache::block_bytes(cfg, at::kFloat, 4) == 2 * 4 * (16 + 8) * 4);
    cache.resize(8);
    const std::vector<int32_t> a{11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, b{31, 32, 33};
    const std::vector<int32_t> table_a{5, 2, 7}, table_b{0};
    auto l1 =
        vime::paged_forward(*model, cache, {{a, 0, 6, &table_a, true}, {b, 0, 3, &table_b, true}});
    CHECK((l1[0] - last_logits(*model, a, 6)).abs().max().item<double>() < 1e-4);
    CHECK((l1[1] - last_logits(*model, b, 3)).abs().max().item<double>() < 1e-4);
    auto l2 = vime::paged_forward(*model, cache, {{a, 6, 9, &table_a, true}});
    CHECK((l2[0] - last_logits(*model, a, 9)).abs().max().item<double>() < 1e-4);
    // A fixed-shape decode step (the CUDA-graph path) for a's position 9 and b's position 3,
    // with a padding row.
    auto int32 = [](std::vector<int32_t> v) {
      return at::tensor(v, at::TensorOptions().dtype(at::kInt));
    };
    vime::PagedDecodeInputs in;
    in.tokens = int32({a[9], 40, 0});
    in.positions = int32({9, 3, 0});
    in.slots = int32({7 * 4 + 1, 0 * 4 + 3, -1});
    in.context_lens = int32({10, 4, 0});
    in.block_tables = int32({5, 2, 7, 0, 0, 0, 0, 0, 0}).view({3, 3});
    auto l3 = vime::paged_decode_forward(*model, cache, in);
    auto b2 = b;
    b2.push_back(40);
    CHECK((l3[0] - last_logits(*model, a, 10)).abs().max().item<double>() < 1e-4);
    CHECK((l3[1] - last_logits(*model, b2, 4)).abs().max().item<double>() < 1e-4);
  }
}

TEST_CASE("MLA engine: greedy generation equals the trainer's argmax loop", "[engine]") {
  auto model = load("tiny_deepseek_v3");
  vime::engine::NativeEngine engine(*model, nullptr, {});
  const std::vector<int32_t> prompt{3, 14, 15, 92, 65, 35};
  const auto r = engine.generate(vime::test::make_request(prompt, 10));
  CHECK(r.output_ids == vime::test::greedy_reference(*model, prompt, 10));
}

TEST_CASE("MLA from Megatron flags as slime's presets pass them and checked against config.json",
          "[model]") {
  auto hf = vime::ModelConfig::from_hf_dir(kGolden + "tiny_deepseek_v3");
  std::vector<std::string> flags{"--num-layers",
                                 "2",
                                 "--hidden-size",
                                 "32",
                                 "--ffn-hidden-size",
                                 "48",
                                 "--num-attention-heads",
                                 "4",
                                 "--kv-channels",
                                 "128",
                                 "--vocab-size",
                                 "96",
                                 "--norm-epsilon",
                                 "1e-5",
                                 "--rotary-base",
                                 "10000",
                                 "--untie-embeddings-and-output-weights",
                                 "--normalization",
                                 "RMSNorm",
                                 "--swiglu",
                                 "--position-embedding-type",
                                 "rope",
                                 "--multi-latent-attention",
                                 "--kv-lora-rank",
                                 "16",
                                 "--qk-head-dim",
                                 "8",
                                 "--qk-pos-emb-head-dim",
                                 "8",
                                 "--v-head-dim",
                                 "12",
                                 "--qk-layernorm",
                                 "--rotary-scaling-factor",
                                 "4",
                                 "--mscale",
                                 "1.0",
                                 "--mscale-all-dim",
                                 "0.8"};
  auto args = vime::core::parse_args(flags);
  CHECK_NOTHROW(vime::core::check_supported(args));
  auto c = vime::ModelConfig::from(args);
  CHECK(c.model_type == "deepseek_v3");
  CHECK(c.mla.v_head_dim == 12);
  CHECK(c.head_dim == 8);
  CHECK(c.attention_scale() == Approx(hf.attention_scale()));
  CHECK(c.num_parameters() == hf.num_parameters());
  CHECK_NOTHROW(hf.check_agrees_with_args(args));
  auto with = [&](std::vector<std::string> more) {
    auto all = flags;
    all.insert(all.end(), more.begin(), more.end());
    return vime::core::parse_args(all);
  };
  CHECK_THROWS_WITH(hf.check_agrees_with_args(with({"--v-head-dim", "16"})),
                    Catch::Contains("--v-head-dim 16 disagrees"));
  CHECK_THROWS_WITH(hf.check_agrees_with_args(with({"--q-lora-rank", "12"})),
                    Catch::Contains("--q-lora-rank 12 disagrees"));
  CHECK_THROWS_WITH(hf.check_agrees_with_args(with({"--rotary-scaling-factor", "1"})),
                    Catch::Contains("--rotary-scaling-factor"));
  auto dense = vime::ModelConfig::from_hf_dir(kGolden + "tiny_llama");
  CHECK_THROWS_WITH(dense.check_agrees_with_args(args),
                    Catch::Contains("--multi-latent-attention is set"));
}
