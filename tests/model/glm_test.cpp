// GLM-4 and GLM-4.5: their configs from config.json and from slime's flags (presets included),
// the sigmoid router's choice and weights on hand-made scores, and activation recompute and the
// engine's paged forward on the tiny GLM goldens (tools/parity/make_tiny_goldens.py).
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "vime/ckpt/model_io.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"
#include "vime/model/model.hpp"
#include "vime/model/moe.hpp"
#include "vime/model/moe_router.hpp"
#include "vime/model/paged_forward.hpp"
#include "vime/model/paged_kv_cache.hpp"

namespace {

const std::string kGolden = VIME_SOURCE_DIR "/tests/model/golden/";

std::vector<std::string> preset_flags(const std::string& preset) {
  vime::test::TempDir dir;
  auto script =
      dir.write("print.sh", "source " + std::string(VIME_SOURCE_DIR) + "/scripts/models/" + preset +
                                ".sh\nprintf '%s\\n' \"${MODEL_ARGS[@]}\"\n");
  auto r = vime::test::run_command("bash " + script.string());
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> flags;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) flags.push_back(line);
  return flags;
}

// slime's flags for tiny_glm4_moe.
const std::vector<std::string> kTinyGlm45{"--num-layers",
                                          "3",
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
                                          "--add-qkv-bias",
                                          "--qk-layernorm",
                                          "--rotary-percent",
                                          "0.5",
                                          "--norm-epsilon",
                                          "1e-5",
                                          "--rotary-base",
                                          "1000000",
                                          "--untie-embeddings-and-output-weights",
                                          "--num-experts",
                                          "8",
                                          "--moe-router-topk",
                                          "3",
                                          "--moe-ffn-hidden-size",
                                          "16",
                                          "--moe-shared-expert-intermediate-size",
                                          "16",
                                          "--moe-layer-freq",
                                          "[0]*1+[1]*2",
                                          "--moe-router-pre-softmax",
                                          "--moe-router-score-function",
                                          "sigmoid",
                                          "--moe-router-enable-expert-bias",
                                          "--moe-router-bias-update-rate",
                                          "0",
                                          "--moe-router-load-balancing-type",
                                          "seq_aux_loss",
                                          "--moe-aux-loss-coeff",
                                          "0",
                                          "--moe-router-num-groups",
                                          "4",
                                          "--moe-router-group-topk",
                                          "2",
                                          "--moe-router-topk-scaling-factor",
                                          "2.5"};

}  // namespace

TEST_CASE("GLM-4 and GLM-4.5 configs from config.json round trip and agree with slime's flags",
          "[model]") {
  auto glm4 = vime::ModelConfig::from_hf_dir(kGolden + "tiny_glm4");
  CHECK(glm4.model_type == "glm4");
  CHECK(glm4.rope_interleaved);
  CHECK(glm4.post_sublayer_norms);
  CHECK(glm4.qkv_bias);
  CHECK(glm4.rotary_dim() == 8);
  auto moe = vime::ModelConfig::from_hf_dir(kGolden + "tiny_glm4_moe");
  CHECK(moe.model_type == "glm4_moe");
  CHECK(moe.qk_norm);
  CHECK_FALSE(moe.rope_interleaved);
  CHECK(moe.moe.score_function == "sigmoid");
  CHECK(moe.moe.expert_bias);
  CHECK(moe.moe.n_group == 4);
  CHECK(moe.moe.topk_group == 2);
  CHECK(moe.moe.routed_scaling_factor == 2.5);
  CHECK(moe.moe.shared_expert_intermediate_size == 16);
  CHECK_FALSE(moe.moe.shared_expert_gated);
  CHECK_FALSE(moe.is_moe_layer(0));  // first_k_dense_replace 1
  CHECK(moe.is_moe_layer(1));
  for (const auto& c : {glm4, moe}) {
    auto again = vime::ModelConfig::from_hf_json(c.to_hf_json("float32"), "round trip");
    CHECK(again.to_hf_json("float32").dump() == c.to_hf_json("float32").dump());
  }

  using vime::core::parse_args;
  auto from_flags = vime::ModelConfig::from(parse_args(kTinyGlm45));
  CHECK(from_flags.model_type == "glm4_moe");
  CHECK(from_flags.moe.norm_topk_prob);  // sigmoid routing renormalises whatever pre-softmax says
  CHECK(from_flags.moe.first_k_dense_replace == 1);
  CHECK(from_flags.to_hf_json("float32").dump() == [&] {
    auto c = moe;
    c.padded_vocab_size = from_flags.padded_vocab_size;
    c.rope_theta = from_flags.rope_theta;
    c.max_position_embeddings = from_flags.max_position_embeddings;
    c.moe.router_aux_loss_coef = from_flags.moe.router_aux_loss_coef;
    return c.to_hf_json("float32").dump();
  }());
  CHECK_NOTHROW(moe.check_agrees_with_args(parse_args(kTinyGlm45)));
  auto with = [&](std::vector<std::string> more) {
    auto all = kTinyGlm45;
    all.insert(all.end(), more.begin(), more.end());
    return parse_args(all);
  };
  CHECK_THROWS_WITH(moe.check_agrees_with_args(with({"--moe-router-num-groups", "2"})),
                    Catch::Contains("--moe-router-num-groups 2 disagrees"));
  CHECK_THROWS_WITH(moe.check_agrees_with_args(with({"--moe-router-topk-scaling-factor", "1.8"})),
                    Catch::Contains("--moe-router-topk-scaling-factor 1.8 disagrees"));
  CHECK_THROWS_WITH(moe.check_agrees_with_args(with({"--rotary-percent", "1.0"})),
                    Catch::Contains("--rotary-percent 1.0 disagrees"));
  CHECK_THROWS_WITH(vime::ModelConfig::from(with({"--moe-router-bias-update-rate", "0.001"})),
                    Catch::Contains("--moe-router-bias-update-rate 0.001 is not supported"));
  CHECK_THROWS_WITH(vime::ModelConfig::from(with({"--moe-aux-loss-coeff", "0.01"})),
                    Catch::Contains("--moe-router-load-balancing-type seq_aux_loss"));
  CHECK_THROWS_WITH(vime::ModelConfig::from(with({"--moe-layer-freq", "[1,0,1]"})),
                    Catch::Contains("dense layers must come first"));
  CHECK_THROWS_WITH(vime::ModelConfig::from(with({"--moe-router-num-groups", "3"})),
                    Catch::Contains("--moe-router-num-groups 3"));
  CHECK_THROWS_WITH(vime::ModelConfig::from(with({"--rotary-interleaved"})),
                    Catch::Contains("--rotary-interleaved"));
  CHECK_THROWS_WITH(vime::ModelConfig::from(parse_args(std::vector<std::string>{
                        "--num-layers", "2", "--hidden-size", "32", "--num-attention-heads", "4",
                        "--vocab-size", "96", "--spec", "my.module", "my_spec"})),
                    Catch::Contains("--spec"));
}

TEST_CASE("slime's GLM presets parse and count their parameters", "[model]") {
  struct Expect {
    const char* preset;
    const char* model_type;
    double total, active;
  };
  // GLM-4-9B-0414: 9.4B; GLM-4.5: 355B total, 32B active; GLM-4.5-Air: 106B, 12B active (the
  // model cards' figures, which leave out the MTP layer and, for the active ones, the embeddings).
  for (const auto& e : {Expect{"glm4-9B", "glm4", 9.4e9, 9.4e9},
                        Expect{"glm4.5-355B-A32B", "glm4_moe", 355e9, 32e9},
                        Expect{"glm4.5-106B-A12B", "glm4_moe", 106e9, 12e9}}) {
    CAPTURE(e.preset);
    auto args = vime::core::parse_args(preset_flags(e.preset));
    CHECK_NOTHROW(vime::core::check_supported(args));
    auto c = vime::ModelConfig::from(args);
    CHECK(c.model_type == e.model_type);
    CHECK(c.rotary_dim() == c.head_dim / 2);
    CHECK(std::abs(double(c.num_parameters()) / e.total - 1) < 0.03);
    const double embeddings = 2.0 * double(c.padded_vocab_size * c.hidden_size);
    const double active =
        double(c.num_active_parameters()) - (e.total == e.active ? 0 : embeddings);
    CHECK(std::abs(active / e.active - 1) < 0.05);
  }
}

TEST_CASE("the sigmoid router chooses by biased scores and weighs by unbiased ones", "[model]") {
  // The router is the identity: the logits are h itself.
  auto router = at::eye(4, at::kFloat);
  auto h = at::tensor({2.0f, 1.0f, 0.5f, -1.0f}, at::kFloat).view({1, 4});
  auto scores = at::sigmoid(h);
  vime::MoeConfig c;
  c.num_experts = 4;
  c.num_experts_per_tok = 2;
  c.score_function = "sigmoid";
  c.norm_topk_prob = true;
  c.routed_scaling_factor = 2.0;
  auto plain = vime::route_tokens(h, router, {}, c);
  auto sorted = std::get<0>(at::sort(plain.indices, 1));
  CHECK(sorted.equal(at::tensor({0L, 1L}).view({1, 2})));
  // A bias of 2 on expert 3 makes it chosen; its weight is still its unbiased score.
  auto bias = at::tensor({0.0f, 0.0f, 0.0f, 2.0f});
  auto biased = vime::route_tokens(h, router, bias, c);
  auto [ascending, order] = at::sort(biased.indices, 1);
  CHECK(ascending.equal(at::tensor({0L, 3L}).view({1, 2})));
  auto s0 = scores[0][0].item<double>(), s3 = scores[0][3].item<double>();
  auto w = biased.weights.gather(1, order);
  CHECK(w[0][0].item<double>() == Approx(2.0 * s0 / (s0 + s3 + 1e-20)));
  CHECK(w[0][1].item<double>() == Approx(2.0 * s3 / (s0 + s3 + 1e-20)));
  CHECK(biased.weights.scalar_type() == at::kFloat);
  // Two groups {0, 1} and {2, 3}, one kept: the second group's pair (0.5 + 2 biased on 3, then
  // 0.5's score) outscores the first, so both experts come from it.
  c.n_group = 2;
  c.topk_group = 1;
  auto grouped = vime::route_tokens(h, router, bias, c);
  CHECK(std::get<0>(at::sort(grouped.indices, 1)).equal(at::tensor({2L, 3L}).view({1, 2})));
  // Replayed experts keep their unbiased, renormalised, scaled weights.
  auto forced = vime::route_tokens(h, router, bias, c, at::tensor({1L, 2L}).view({1, 2}));
  auto s1 = scores[0][1].item<double>(), s2 = scores[0][2].item<double>();
  CHECK(forced.weights[0][0].item<double>() == Approx(2.0 * s1 / (s1 + s2)));
  // The load-balancing loss sees the scores normalised per token.
  CHECK(forced.probs.sum(-1).item<double>() == Approx(1.0));
}

TEST_CASE("GLM layers recompute to the same gradients; the router bias is not trained", "[model]") {
  for (const char* name : {"tiny_glm4", "tiny_glm4_moe"}) {
    CAPTURE(name);
    auto model = vime::ckpt::load_hf_model(kGolden + name, at::kFloat, at::kCPU);
    auto batch = vime::PackedBatch::pack({{1, 2, 3, 4, 5, 6}, {7, 8, 9}}, at::kCPU);
    auto grads_of = [&](bool recompute) {
      model->set_recompute({recompute, 0});
      for (auto& p : model->parameters()) p.mutable_grad() = at::Tensor();
      auto loss = at::log_softmax(model->forward(batch), -1).select(1, 7).sum();
      loss.backward();
      std::vector<at::Tensor> grads;
      for (const auto& [n, p] : model->named_parameters()) {
        CAPTURE(n);
        if (vime::is_expert_bias(n)) {
          CHECK(p.scalar_type() == at::kFloat);
          CHECK_FALSE(p.grad().defined());
          grads.push_back(at::zeros({1}));
          continue;
        }
        REQUIRE(p.grad().defined());
        grads.push_back(p.grad().clone());
      }
      return grads;
    };
    auto plain = grads_of(false), recomputed = grads_of(true);
    REQUIRE(plain.size() == recomputed.size());
    for (size_t i = 0; i < plain.size(); ++i) {
      CAPTURE(model->named_parameters()[i].first);
      CHECK(at::allclose(plain[i], recomputed[i], 1e-5, 1e-6));
    }
  }
}

TEST_CASE("the engine's paged forward runs GLM layers as the packed forward does", "[model]") {
  for (const char* name : {"tiny_glm4", "tiny_glm4_moe", "tiny_sigmoid_moe"}) {
    CAPTURE(name);
    auto model = vime::ckpt::load_hf_model(kGolden + name, at::kFloat, at::kCPU);
    at::NoGradGuard no_grad;
    vime::PagedKvCache cache(model->config(), at::kFloat, at::kCPU, 4);
    cache.resize(8);
    const std::vector<int32_t> a{11, 12, 13, 14, 15, 16, 17}, table{3, 1};
    auto full = model->forward(vime::PackedBatch::pack({{11, 12, 13, 14, 15, 16, 17}}, at::kCPU));
    auto prefill = vime::paged_forward(*model, cache, {{a, 0, 6, &table, true}});
    CHECK((prefill[0] - full[5]).abs().max().item<double>() < 1e-5);
    auto decode = vime::paged_forward(*model, cache, {{a, 6, 7, &table, true}});
    CHECK((decode[0] - full[6]).abs().max().item<double>() < 1e-5);
  }
}
