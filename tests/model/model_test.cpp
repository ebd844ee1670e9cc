// The transformer against reference logits of tiny Qwen3 / Qwen2 / Llama-3 / GLM models (goldens
// made by tools/parity/make_tiny_goldens.py from a port of HF's eager modeling code on Debian's
// python3-torch), packing, recompute and gradients.
#include "vime/model/model.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <catch2/catch.hpp>

#include "vime/ckpt/model_io.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/core/arg_parser.hpp"

namespace {

const std::string kGolden = VIME_SOURCE_DIR "/tests/model/golden/";

std::vector<std::vector<int64_t>> golden_sequences(const vime::ckpt::SafetensorsFile& file) {
  auto tokens = file.get("tokens");
  auto cu = file.get("cu_seqlens");
  std::vector<std::vector<int64_t>> out;
  for (int64_t i = 0; i + 1 < cu.numel(); ++i) {
    auto s = tokens.slice(0, cu[i].item<int64_t>(), cu[i + 1].item<int64_t>());
    out.emplace_back(s.data_ptr<int64_t>(), s.data_ptr<int64_t>() + s.numel());
  }
  return out;
}

}  // namespace

TEST_CASE("tiny models match the reference logits in fp32", "[model]") {
  for (const char* name :
       {"tiny_qwen3", "tiny_qwen2", "tiny_llama", "tiny_qwen3_moe", "tiny_qwen2_moe", "tiny_glm4",
        "tiny_glm4_moe", "tiny_sigmoid_moe", "tiny_deepseek_v3", "tiny_deepseek_v3_qlora"}) {
    CAPTURE(name);
    auto model = vime::ckpt::load_hf_model(kGolden + name, at::kFloat, at::kCPU);
    CHECK(model->config().padded_vocab_size == 128);  // vocab 96 padded for the GEMM
    vime::ckpt::SafetensorsFile golden(kGolden + name + "/logits.safetensors");
    auto batch = vime::PackedBatch::pack(golden_sequences(golden), at::kCPU);
    at::NoGradGuard no_grad;
    auto logits = model->forward(batch);
    auto expected = golden.get("logits");
    REQUIRE(logits.sizes() == expected.sizes());
    double max_diff = (logits - expected).abs().max().item<double>();
    CHECK(max_diff < 2e-5);
  }
}

TEST_CASE("packing does not leak attention across sequences", "[model]") {
  auto model = vime::ckpt::load_hf_model(kGolden + "tiny_qwen3", at::kFloat, at::kCPU);
  at::NoGradGuard no_grad;
  std::vector<int64_t> a{3, 1, 4, 1, 5}, b{9, 2, 6};
  auto packed = model->forward(vime::PackedBatch::pack({a, b}, at::kCPU));
  auto alone = model->forward(vime::PackedBatch::pack({b}, at::kCPU));
  CHECK(at::allclose(packed.slice(0, 5, 8), alone, 1e-5, 1e-5));
}

TEST_CASE("recompute gives the same loss and gradients", "[model]") {
  auto model = vime::ckpt::load_hf_model(kGolden + "tiny_qwen2", at::kFloat, at::kCPU);
  auto batch = vime::PackedBatch::pack({{1, 2, 3, 4, 5, 6}, {7, 8, 9}}, at::kCPU);
  auto grads_of = [&](bool recompute) {
    model->set_recompute({recompute, 0});
    for (auto& p : model->parameters()) p.mutable_grad() = at::Tensor();
    auto loss = at::log_softmax(model->forward(batch), -1).select(1, 7).sum();
    loss.backward();
    std::vector<at::Tensor> grads;
    for (const auto& [name, p] : model->named_parameters()) {
      INFO(name << (recompute ? " (recompute)" : ""));
      CHECK(p.grad().defined());
      if (!p.grad().defined()) continue;
      grads.push_back(p.grad().clone());
    }
    return std::make_pair(loss.item<double>(), grads);
  };
  auto [plain_loss, plain] = grads_of(false);
  auto [recomputed_loss, recomputed] = grads_of(true);
  CHECK(plain_loss == Approx(recomputed_loss).epsilon(1e-6));
  REQUIRE(plain.size() == recomputed.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    CAPTURE(model->named_parameters()[i].first);
    CHECK(at::allclose(plain[i], recomputed[i], 1e-5, 1e-6));
    CHECK(plain[i].abs().sum().item<double>() > 0);
  }
}

TEST_CASE("a model needs every tensor at its shape", "[model]") {
  auto model = vime::ckpt::load_hf_model(kGolden + "tiny_llama", at::kFloat, at::kCPU);
  auto tensors = model->hf_tensors();
  tensors.erase(tensors.begin() + 3);
  CHECK_THROWS_WITH(model->load_tensors(tensors, "ckpt"),
                    Catch::Contains("ckpt") && Catch::Contains("is missing"));
  tensors = model->hf_tensors();
  tensors[2].second = at::zeros({3, 3});
  CHECK_THROWS_WITH(model->load_tensors(tensors, "ckpt"), Catch::Contains("has shape [3, 3]"));
}

TEST_CASE("Megatron flags build the same config as config.json, and disagreements are named",
          "[model]") {
  auto hf = vime::ModelConfig::from_hf_dir(kGolden + "tiny_qwen3");
  std::vector<std::string> flags{"--num-layers",
                                 "2",
                                 "--hidden-size",
                                 "32",
                                 "--ffn-hidden-size",
                                 "48",
                                 "--num-attention-heads",
                                 "4",
                                 "--group-query-attention",
                                 "--num-query-groups",
                                 "2",
                                 "--kv-channels",
                                 "16",
                                 "--vocab-size",
                                 "96",
                                 "--qk-layernorm",
                                 "--norm-epsilon",
                                 "1e-6",
                                 "--rotary-base",
                                 "1000000"};
  auto args = vime::core::parse_args(flags);
  auto from_flags = vime::ModelConfig::from(args);
  CHECK(from_flags.model_type == "qwen3");
  CHECK(from_flags.head_dim == hf.head_dim);
  CHECK(from_flags.num_key_value_heads == hf.num_key_value_heads);
  CHECK(from_flags.rope_theta == hf.rope_theta);
  CHECK(from_flags.tie_word_embeddings == hf.tie_word_embeddings);
  CHECK(from_flags.padded_vocab_size == 128);
  CHECK_NOTHROW(hf.check_agrees_with_args(args));
  flags.insert(flags.end(), {"--num-query-groups", "4"});  // the last value wins
  CHECK_THROWS_WITH(hf.check_agrees_with_args(vime::core::parse_args(flags)),
                    Catch::Contains("--num-query-groups 4 disagrees"));
  CHECK_THROWS_WITH(vime::ModelConfig::from(vime::core::parse_args({})),
                    Catch::Contains("--num-layers is required"));
}

TEST_CASE("recompute flags", "[model]") {
  using vime::core::parse_args;
  auto none = vime::RecomputeOptions::from(parse_args({}));
  CHECK_FALSE(none.enabled);
  std::vector<std::string> block{"--recompute-granularity", "full", "--recompute-method", "block",
                                 "--recompute-num-layers",  "3"};
  auto b = vime::RecomputeOptions::from(parse_args(block));
  CHECK(b.enabled);
  CHECK(b.num_layers == 3);
  std::vector<std::string> selective{"--recompute-granularity", "selective"};
  CHECK_THROWS_WITH(vime::RecomputeOptions::from(parse_args(selective)),
                    Catch::Contains("selective"));
}
