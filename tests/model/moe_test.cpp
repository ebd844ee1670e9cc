// The MoE block against a dense reference built from the same weights (each token through its
// top-k experts one at a time), its gradients, routing replay and the load-balancing loss; the
// MoE config from config.json and from Megatron's flags; both HF expert layouts in and the Hub's
// out; the engine's paged forward; a checkpoint missing an expert.
#include "vime/model/moe.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "support/moe_layouts.hpp"
#include "support/test_support.hpp"
#include "vime/ckpt/model_io.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"
#include "vime/model/grouped_gemm.hpp"
#include "vime/model/paged_forward.hpp"

namespace {

const std::string kGolden = VIME_SOURCE_DIR "/tests/model/golden/";

struct Block {
  vime::MoeWeights w;
  vime::MoeConfig config;
  int64_t hidden = 16;
};

Block random_block(bool shared, bool norm_topk_prob) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  auto rnd = [&](std::vector<int64_t> shape, double scale) {
    return at::normal(0.0, scale, shape, gen, at::TensorOptions().dtype(at::kFloat));
  };
  Block b;
  b.config.num_experts = 8;
  b.config.num_experts_per_tok = 3;
  b.config.moe_intermediate_size = 12;
  b.config.norm_topk_prob = norm_topk_prob;
  const int64_t e = 8, f = 12, h = b.hidden;
  b.w.router = rnd({e, h}, 1.0);
  b.w.gate = rnd({e, f, h}, 0.3);
  b.w.up = rnd({e, f, h}, 0.3);
  b.w.down = rnd({e, h, f}, 0.3);
  if (shared) {
    b.config.shared_expert_intermediate_size = 20;
    b.w.shared_gate = rnd({20, h}, 0.3);
    b.w.shared_up = rnd({20, h}, 0.3);
    b.w.shared_down = rnd({h, 20}, 0.3);
    b.w.shared_expert_gate = rnd({1, h}, 0.3);
  }
  for (auto* t : {&b.w.router, &b.w.gate, &b.w.up, &b.w.down, &b.w.shared_gate, &b.w.shared_up,
                  &b.w.shared_down, &b.w.shared_expert_gate})
    if (t->defined()) t->requires_grad_(true);
  return b;
}

at::Tensor expert_mlp(const at::Tensor& x, const Block& b, int64_t e) {
  return at::linear(at::silu(at::linear(x, b.w.gate[e])) * at::linear(x, b.w.up[e]), b.w.down[e]);
}

// Token by token: softmax over all experts, the top-k (or `forced`), renormalised or not, each
// chosen expert's MLP scaled by its weight, plus the gated shared expert.
at::Tensor dense_reference(const Block& b, const at::Tensor& h, const at::Tensor& forced = {}) {
  std::vector<at::Tensor> rows;
  const int64_t k = b.config.num_experts_per_tok;
  for (int64_t t = 0; t < h.size(0); ++t) {
    auto x = h.narrow(0, t, 1);
    auto probs = at::softmax(at::linear(x, b.w.router), -1).squeeze(0);
    auto chosen = forced.defined() ? forced[t] : std::get<1>(at::topk(probs, k));
    auto weights = probs.index_select(0, chosen);
    if (b.config.norm_topk_prob) weights = weights / weights.sum();
    auto out = at::zeros({1, b.hidden});
    for (int64_t j = 0; j < k; ++j) {
      out = out + expert_mlp(x, b, chosen[j].item<int64_t>()) * weights[j];
    }
    if (b.w.shared_gate.defined()) {
      auto shared = at::linear(
          at::silu(at::linear(x, b.w.shared_gate)) * at::linear(x, b.w.shared_up), b.w.shared_down);
      out = out + at::sigmoid(at::linear(x, b.w.shared_expert_gate)) * shared;
    }
    rows.push_back(out);
  }
  return at::cat(rows, 0);
}

std::vector<at::Tensor> gradients(const Block& b, const at::Tensor& out) {
  std::vector<at::Tensor> grads;
  for (const auto* t : {&b.w.router, &b.w.gate, &b.w.up, &b.w.down, &b.w.shared_gate})
    if (t->defined()) const_cast<at::Tensor*>(t)->mutable_grad() = at::Tensor();
  (out * at::arange(out.numel(), at::kFloat).view(out.sizes()).sin()).sum().backward();
  for (const auto* t : {&b.w.router, &b.w.gate, &b.w.up, &b.w.down, &b.w.shared_gate})
    if (t->defined()) grads.push_back(t->grad().clone());
  return grads;
}

}  // namespace

TEST_CASE("the MoE block equals each token through its top-k experts one by one", "[model]") {
  for (bool shared : {false, true}) {
    for (bool norm : {true, false}) {
      CAPTURE(shared, norm);
      auto b = random_block(shared, norm);
      auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
      auto h = at::normal(0.0, 1.0, {13, b.hidden}, gen, at::TensorOptions().dtype(at::kFloat));
      auto result = vime::moe_block(b.w, h, b.config);
      auto expected = dense_reference(b, h);
      REQUIRE(result.out.sizes() == expected.sizes());
      CHECK((result.out - expected).abs().max().item<double>() < 1e-5);
      // The chosen experts, in top-k order.
      auto probs = at::softmax(at::linear(h, b.w.router), -1);
      CHECK(result.expert_indices.equal(std::get<1>(at::topk(probs, 3))));
      // Gradients reach every weight and match the reference's.
      auto got = gradients(b, result.out);
      auto want = gradients(b, dense_reference(b, h));
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        CAPTURE(i);
        CHECK((got[i] - want[i]).abs().max().item<double>() < 1e-5);
        CHECK(got[i].abs().sum().item<double>() > 0);
      }
      // Megatron's switch_load_balancing_loss_func: E / (k T^2) sum_e (sum_t p_te) * tokens_e.
      auto counts =
          at::zeros({8}).index_add_(0, result.expert_indices.reshape({-1}), at::ones({13 * 3}));
      double aux = (probs.sum(0) * counts).sum().item<double>() * 8.0 / (3.0 * 13 * 13);
      CHECK(result.aux_loss.item<double>() == Approx(aux).epsilon(1e-6));
      CHECK(result.aux_loss.requires_grad());
    }
  }
}

TEST_CASE("routing replay runs the given experts", "[model]") {
  auto b = random_block(true, true);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
  auto h = at::normal(0.0, 1.0, {6, b.hidden}, gen, at::TensorOptions().dtype(at::kFloat));
  auto forced = at::tensor({0, 1, 2, 7, 6, 5, 3, 0, 4, 1, 2, 3, 5, 6, 7, 2, 4, 0}).view({6, 3});
  at::NoGradGuard no_grad;
  auto result = vime::moe_block(b.w, h, b.config, {}, forced);
  CHECK(result.expert_indices.equal(forced));
  CHECK((result.out - dense_reference(b, h, forced)).abs().max().item<double>() < 1e-5);
  CHECK_THROWS_WITH(vime::moe_block(b.w, h, b.config, {}, forced.narrow(0, 0, 5)),
                    Catch::Contains("routing replay") && Catch::Contains("[6, 3]"));

  // Through the scope: the chosen experts of one forward replay into the next.
  vime::MoeRouting record;
  {
    vime::MoeRoutingScope scope(&record);
    (void)vime::moe_mlp(b.w, h, b.config, {});
  }
  REQUIRE(record.chosen.size() == 1);
  REQUIRE(record.aux_losses.size() == 1);
  vime::MoeRouting replay;
  replay.replay = {forced};
  at::Tensor replayed;
  {
    vime::MoeRoutingScope scope(&replay);
    replayed = vime::moe_mlp(b.w, h, b.config, {});
  }
  CHECK(replayed.equal(result.out));
  CHECK(replay.chosen.at(0).equal(forced));
}

TEST_CASE("grouped_linear multiplies each segment by its group's weight", "[model]") {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  auto opts = at::TensorOptions().dtype(at::kFloat);
  auto x = at::normal(0.0, 1.0, {9, 4}, gen, opts);
  auto w = at::normal(0.0, 1.0, {3, 5, 4}, gen, opts);
  auto offsets = at::tensor({2, 2, 9}, at::TensorOptions().dtype(at::kInt));  // group 1 empty
  auto y = vime::grouped_linear(x, w, offsets);
  REQUIRE(y.sizes() == at::IntArrayRef({9, 5}));
  CHECK(y.narrow(0, 0, 2).allclose(at::linear(x.narrow(0, 0, 2), w[0])));
  CHECK(y.narrow(0, 2, 7).allclose(at::linear(x.narrow(0, 2, 7), w[2])));
  CHECK_FALSE(vime::grouped_linear_is_fused(x, w));  // the loop on the CPU
}

TEST_CASE("MoE config from config.json and from Megatron's flags", "[model]") {
  auto hf = vime::ModelConfig::from_hf_dir(kGolden + "tiny_qwen3_moe");
  CHECK(hf.model_type == "qwen3_moe");
  CHECK(hf.qk_norm);
  CHECK(hf.moe.num_experts == 10);
  CHECK(hf.moe.num_experts_per_tok == 3);
  CHECK(hf.is_moe_layer(0));
  CHECK_FALSE(hf.is_moe_layer(1));  // mlp_only_layers [1]
  CHECK(hf.is_moe_layer(2));
  auto again = vime::ModelConfig::from_hf_json(hf.to_hf_json("float32"), "round trip");
  CHECK(again.to_hf_json("float32").dump() == hf.to_hf_json("float32").dump());
  CHECK(again.moe.mlp_only_layers == std::vector<int64_t>{1});
  // What transformers 5's save_pretrained writes for Qwen3-MoE: num_local_experts.
  auto saved = hf.to_hf_json("float32");
  saved.as_object().erase("num_experts");
  saved["num_local_experts"] = int64_t{10};
  CHECK(vime::ModelConfig::from_hf_json(saved, "transformers 5").moe.num_experts == 10);

  auto q2 = vime::ModelConfig::from_hf_dir(kGolden + "tiny_qwen2_moe");
  CHECK(q2.model_type == "qwen2_moe");
  CHECK(q2.qkv_bias);
  CHECK_FALSE(q2.moe.norm_topk_prob);
  CHECK(q2.moe.shared_expert_intermediate_size == 24);

  std::vector<std::string> flags{"--num-layers",
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
                                 "--qk-layernorm",
                                 "--norm-epsilon",
                                 "1e-6",
                                 "--rotary-base",
                                 "1000000",
                                 "--untie-embeddings-and-output-weights",
                                 "--num-experts",
                                 "10",
                                 "--moe-router-topk",
                                 "3",
                                 "--moe-ffn-hidden-size",
                                 "16",
                                 "--moe-layer-freq",
                                 "[1,0,1]",
                                 "--moe-router-score-function",
                                 "softmax",
                                 "--moe-router-dtype",
                                 "fp32",
                                 "--moe-token-dispatcher-type",
                                 "alltoall",
                                 "--moe-grouped-gemm",
                                 "--moe-permute-fusion"};
  using vime::core::parse_args;
  auto from_flags = vime::ModelConfig::from(parse_args(flags));
  CHECK(from_flags.model_type == "qwen3_moe");
  CHECK(from_flags.moe.norm_topk_prob);
  CHECK(from_flags.moe.mlp_only_layers == std::vector<int64_t>{1});
  CHECK(from_flags.num_parameters() == hf.num_parameters());
  CHECK_NOTHROW(hf.check_agrees_with_args(parse_args(flags)));
  auto with = [&](std::vector<std::string> more) {
    auto all = flags;
    all.insert(all.end(), more.begin(), more.end());
    return parse_args(all);
  };
  CHECK_THROWS_WITH(hf.check_agrees_with_args(with({"--num-experts", "12"})),
                    Catch::Contains("--num-experts 12 disagrees"));
  CHECK_THROWS_WITH(hf.check_agrees_with_args(with({"--moe-layer-freq", "1"})),
                    Catch::Contains("--moe-layer-freq 1 disagrees"));
  CHECK_THROWS_WITH(hf.check_agrees_with_args(with({"--moe-router-pre-softmax"})),
                    Catch::Contains("--moe-router-pre-softmax"));
  CHECK_THROWS_WITH(hf.check_agrees_with_args(with(
                        {"--moe-router-score-function", "sigmoid", "--moe-layer-freq", "[0,1,1]"})),
                    Catch::Contains("--moe-router-score-function sigmoid disagrees"));
  CHECK_THROWS_WITH(vime::ModelConfig::from(with({"--moe-token-dispatcher-type", "flex"})),
                    Catch::Contains("--moe-token-dispatcher-type flex"));
  CHECK_THROWS_WITH(vime::ModelConfig::from(with({"--moe-router-dtype", "fp64"})),
                    Catch::Contains("--moe-router-dtype fp64"));
  CHECK_THROWS_AS(vime::core::check_supported(with({"--expert-model-parallel-size", "2"}),
                                              vime::core::FlagRegistry::instance()),
                  vime::UsageError);

  auto dense = vime::ModelConfig::from_hf_dir(kGolden + "tiny_qwen3");
  CHECK(dense.num_active_parameters() == dense.num_parameters());
}

TEST_CASE("Megatron's --moe-layer-freq", "[model]") {
  using vime::parse_moe_layer_freq;
  auto freq = parse_moe_layer_freq("[0]*1+[1]*47", 48);
  CHECK(freq.size() == 48);
  CHECK(freq[0] == 0);
  CHECK(freq[47] == 1);
  CHECK(parse_moe_layer_freq("([0]*1+[1]*2)", 3) == std::vector<int64_t>{0, 1, 1});
  CHECK(parse_moe_layer_freq("[1, 1, 0]", 3) == std::vector<int64_t>{1, 1, 0});
  CHECK(parse_moe_layer_freq("2", 4) == std::vector<int64_t>{1, 0, 1, 0});
  CHECK_THROWS_WITH(parse_moe_layer_freq("[1]*3", 4),
                    Catch::Contains("--moe-layer-freq [1]*3") && Catch::Contains("3 entries"));
  CHECK_THROWS_WITH(parse_moe_layer_freq("[2]*4", 4), Catch::Contains("0 or 1"));
  CHECK_THROWS_WITH(parse_moe_layer_freq("every", 4), Catch::Contains("not an int"));
}

TEST_CASE("the MoE presets parse as slime passes them and count active parameters", "[model]") {
  // Qwen3-30B-A3B: 30.5B parameters, 3.3B active; Qwen3-235B-A22B: 235B, 22B active.
  struct Expect {
    const char* preset;
    double total, active;
  };
  for (const auto& e :
       {Expect{"qwen3-30B-A3B", 30.5e9, 3.3e9}, Expect{"qwen3-235B-A22B", 235e9, 22e9},
        Expect{"qwen3-moe-debug-tiny", 0, 0}}) {
    CAPTURE(e.preset);
    vime::test::TempDir dir;
    auto script =
        dir.write("print.sh", std::string("source ") + VIME_SOURCE_DIR + "/scripts/models/" +
                                  e.preset + ".sh\nprintf '%s\\n' \"${MODEL_ARGS[@]}\"\n");
    auto r = vime::test::run_command("bash " + script.string());
    REQUIRE(r.exit_code == 0);
    std::vector<std::string> flags;
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);)
      if (!line.empty()) flags.push_back(line);
    auto args = vime::core::parse_args(flags);
    CHECK_NOTHROW(vime::core::check_supported(args));
    auto c = vime::ModelConfig::from(args);
    CHECK(c.model_type == "qwen3_moe");
    CHECK(c.moe.norm_topk_prob);
    if (e.total == 0) {
      CHECK(c.moe.mlp_only_layers == std::vector<int64_t>{0});
      continue;
    }
    CHECK(c.moe.mlp_only_layers.empty());
    CHECK(std::abs(double(c.num_parameters()) / e.total - 1) < 0.02);
    CHECK(std::abs(double(c.num_active_parameters()) / e.active - 1) < 0.05);
  }
}

TEST_CASE("a MoE checkpoint missing an expert tensor names it", "[model]") {
  vime::test::TempDir dir;
  const auto path = dir.path() / "moe";
  std::filesystem::create_directories(path);
  std::filesystem::copy_file(kGolden + "tiny_qwen3_moe/config.json", path / "config.json");
  auto tensors = vime::ckpt::read_safetensors_dir(kGolden + "tiny_qwen3_moe");
  std::erase_if(tensors, [](const auto& nt) {
    return nt.first == "model.layers.2.mlp.experts.7.up_proj.weight";
  });
  vime::ckpt::write_safetensors(path / "model.safetensors", tensors);
  CHECK_THROWS_WITH(
      vime::ckpt::load_hf_model(path, at::kFloat, at::kCPU),
      Catch::Contains(path.string()) &&
          Catch::Contains("\"model.layers.2.mlp.experts.7.up_proj.weight\" is missing"));
}

TEST_CASE("MoE weights load from both expert layouts and save in the Hub's, bit-exact", "[model]") {
  vime::test::TempDir dir;
  auto hub = vime::ckpt::read_safetensors_dir(kGolden + "tiny_qwen3_moe");
  for (auto& [name, t] : hub) t = t.to(at::kBFloat16);
  // transformers 5: mlp.experts.gate_up_proj [E, 2F, H] (gate rows first), down_proj [E, H, F].
  const auto fused = vime::test::fuse_experts_like_transformers5(hub, {0, 2}, 10);
  for (const auto& [layout, tensors] : {std::pair{"hub", hub}, std::pair{"fused", fused}}) {
    CAPTURE(layout);
    const auto in = dir.path() / (std::string(layout) + "_in");
    std::filesystem::create_directories(in);
    std::filesystem::copy_file(kGolden + "tiny_qwen3_moe/config.json", in / "config.json");
    vime::ckpt::write_safetensors(in / "model.safetensors", tensors);
    auto model = vime::ckpt::load_hf_model(in, at::kBFloat16, at::kCPU);
    const auto out = dir.path() / (std::string(layout) + "_out");
    vime::ckpt::save_hf_model(*model, out);
    auto back = vime::ckpt::read_safetensors_dir(out);
    REQUIRE(back.size() == hub.size());
    std::map<std::string, at::Tensor> by_name(back.begin(), back.end());
    for (const auto& [name, t] : hub) {
      CAPTURE(name);
      REQUIRE(by_name.count(name) == 1);
      CHECK(by_name[name].equal(t));
    }
  }
}

TEST_CASE("the engine's paged forward runs MoE layers as the packed forward does", "[model]") {
  for (const char* name : {"tiny_qwen3_moe", "tiny_qwen2_moe"}) {
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

TEST_CASE("activation recompute replays the forward's routing, replayed or not", "[model]") {
  auto model = vime::ckpt::load_hf_model(kGolden + "tiny_qwen3_moe", at::kFloat, at::kCPU);
  auto batch = vime::PackedBatch::pack({{1, 2, 3, 4, 5, 6, 7}, {9, 10, 11}}, at::kCPU);
  // The rollout's choices (MoE layers 0 and 2), far from what the router would pick.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(9);
  std::vector<at::Tensor> forced;
  for (int layer = 0; layer < 2; ++layer) {
    std::vector<at::Tensor> rows;
    for (int t = 0; t < 10; ++t)
      rows.push_back(at::randperm(10, gen, at::TensorOptions().dtype(at::kLong)).narrow(0, 0, 3));
    forced.push_back(at::stack(rows));
  }
  auto grads_of = [&](bool recompute, bool replay) {
    model->set_recompute({recompute, 0});
    for (auto& p : model->parameters()) p.mutable_grad() = at::Tensor();
    vime::MoeRouting routing;
    if (replay) routing.replay = forced;
    at::Tensor loss;
    {
      vime::MoeRoutingScope scope(&routing);
      loss = at::log_softmax(model->forward(batch), -1).select(1, 7).sum();
    }
    loss.backward();
    REQUIRE(routing.chosen.size() == 2);
    if (replay) CHECK(routing.chosen[1].equal(forced[1]));
    std::vector<at::Tensor> grads;
    for (const auto& p : model->parameters()) grads.push_back(p.grad().clone());
    return grads;
  };
  for (bool replay : {false, true}) {
    CAPTURE(replay);
    auto plain = grads_of(false, replay), recomputed = grads_of(true, replay);
    for (size_t i = 0; i < plain.size(); ++i) {
      CAPTURE(model->named_parameters()[i].first);
      CHECK((plain[i] - recomputed[i]).abs().max().item<double>() < 1e-6);
    }
  }
}
