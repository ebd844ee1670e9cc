// LoRA adapters (model/lora.hpp) on the tiny Qwen2 (qkv bias, untied) and Qwen3 models: a fresh
// adapter (B = 0) leaves logits and log-probs bit-identical, gradients reach only A and B, the
// reference (adapters off) is the base, the merged weights compute the same as base + adapter,
// recompute gives the same adapter gradients, PEFT's files round-trip under PEFT's names, and a
// checkpoint resumes the adapters with their optimizer state.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "support/test_support.hpp"
#include "vime/ckpt/checkpoint.hpp"
#include "vime/ckpt/model_io.hpp"
#include "vime/ckpt/peft_adapter.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/model/model.hpp"
#include "vime/train/optimizer.hpp"

namespace {
namespace fs = std::filesystem;

const std::string kGolden = VIME_SOURCE_DIR "/tests/model/golden/";

vime::PackedBatch batch() {
  return vime::PackedBatch::pack({{1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11}}, at::kCPU);
}

vime::LoraConfig config(int64_t rank, double alpha, std::vector<std::string> targets = {}) {
  vime::LoraConfig c;
  c.rank = rank;
  c.alpha = alpha;
  if (targets.empty()) targets.assign(vime::kLoraModules.begin(), vime::kLoraModules.end());
  c.target_modules = targets;
  return c;
}

// B drawn at random too, so that the adapters change the output.
void randomize(vime::Model& model, uint64_t seed) {
  at::NoGradGuard no_grad;
  at::manual_seed(seed);
  for (auto& [name, t] : model.lora_parameters()) t.normal_(0.0, 0.05);
}

at::Tensor logits_of(vime::Model& model) {
  at::NoGradGuard no_grad;
  return model.forward(batch());
}

at::Tensor loss_of(vime::Model& model) {
  auto logits = model.forward(batch());
  return at::log_softmax(logits, -1).select(-1, 5).mean();
}

vime::Args args_of(std::vector<std::string> tokens) { return vime::core::parse_args(tokens); }

}  // namespace

TEST_CASE("a fresh adapter (B = 0) leaves the logits and log-probs bit-identical", "[lora]") {
  for (const char* name : {"tiny_qwen2", "tiny_qwen3"}) {
    CAPTURE(name);
    auto model = vime::ckpt::load_hf_model(kGolden + name, at::kFloat, at::kCPU);
    auto base = logits_of(*model);
    model->add_lora(config(4, 8));
    REQUIRE(model->lora_parameters().size() == 2 * 7 * size_t(model->config().num_layers));
    auto adapted = logits_of(*model);
    CHECK(at::equal(adapted, base));
    CHECK(at::equal(at::log_softmax(adapted, -1), at::log_softmax(base, -1)));
    // PEFT's init: A uniform in +-1/sqrt(in), B zeros.
    const auto& [a_name, a] = model->lora_parameters()[0];
    CHECK(a_name == "model.layers.0.self_attn.q_proj.lora_A.weight");
    CHECK(a.size(0) == 4);
    CHECK(a.size(1) == model->config().hidden_size);
    CHECK(a.abs().max().item<double>() <= 1.0 / std::sqrt(double(a.size(1))));
    CHECK(a.abs().max().item<double>() > 0.5 / std::sqrt(double(a.size(1))));
    CHECK(model->lora_parameters()[1].second.abs().max().item<double>() == 0);
  }
}

TEST_CASE("gradients reach only the adapters; the base is frozen", "[lora]") {
  auto model = vime::ckpt::load_hf_model(kGolden + "tiny_qwen2", at::kFloat, at::kCPU);
  model->add_lora(config(4, 8, {"q_proj", "v_proj", "down_proj"}));
  randomize(*model, 7);
  for (const auto& [name, t] : model->named_parameters()) CHECK_FALSE(t.requires_grad());
  loss_of(*model).backward();
  for (const auto& [name, t] : model->named_parameters()) {
    CAPTURE(name);
    CHECK_FALSE(t.grad().defined());
  }
  REQUIRE(model->lora_parameters().size() == 2 * 3 * size_t(model->config().num_layers));
  for (const auto& [name, t] : model->lora_parameters()) {
    CAPTURE(name);
    REQUIRE(t.grad().defined());
    CHECK(t.grad().abs().max().item<double>() > 0);
  }
}

TEST_CASE("recompute gives the same adapter gradients", "[lora]") {
  auto grads = [](bool recompute) {
    auto model = vime::ckpt::load_hf_model(kGolden + "tiny_qwen3", at::kFloat, at::kCPU);
    model->add_lora(config(4, 8));
    randomize(*model, 11);
    if (recompute) model->set_recompute({.enabled = true});
    loss_of(*model).backward();
    std::vector<at::Tensor> out;
    for (const auto& [name, t] : model->lora_parameters()) out.push_back(t.grad().clone());
    for (const auto& [name, t] : model->named_parameters()) CHECK_FALSE(t.grad().defined());
    return out;
  };
  auto plain = grads(false), recomputed = grads(true);
  REQUIRE(plain.size() == recomputed.size());
  for (size_t i = 0; i < plain.size(); ++i)
    CHECK(at::allclose(plain[i], recomputed[i], 1e-5, 1e-6));
}

TEST_CASE("adapters off is the base; merged weights compute base + adapter", "[lora]") {
  auto model = vime::ckpt::load_hf_model(kGolden + "tiny_qwen2", at::kFloat, at::kCPU);
  auto base = logits_of(*model);
  model->add_lora(config(8, 16));
  randomize(*model, 3);
  auto adapted = logits_of(*model);
  CHECK((adapted - base).abs().max().item<double>() > 1e-3);  // the adapters matter
  model->set_lora_enabled(false);
  CHECK(at::equal(logits_of(*model), base));
  model->set_lora_enabled(true);
  auto merged = std::make_unique<vime::Model>(model->config(), at::kFloat, at::kCPU);
  merged->load_tensors(model->merged_hf_tensors(), "merged");
  CHECK((logits_of(*merged) - adapted).abs().max().item<double>() < 1e-5);
}

TEST_CASE("--lora-rank, --lora-alpha, --target-modules", "[lora]") {
  auto c = vime::LoraConfig::from(args_of({"--lora-rank", "8"}));
  CHECK(c.rank == 8);
  CHECK(c.alpha == 8);
  CHECK(c.target_modules.size() == 7);
  c = vime::LoraConfig::from(
      args_of({"--lora-rank", "4", "--lora-alpha", "32", "--target-modules", "v_proj", "q_proj"}));
  CHECK(c.scale() == 8);
  CHECK(c.target_modules == std::vector<std::string>{"q_proj", "v_proj"});
  CHECK_FALSE(vime::LoraConfig::from(args_of({})).enabled());
  CHECK_THROWS_AS(vime::LoraConfig::from(args_of({"--lora-rank", "0"})), vime::UsageError);
  CHECK_THROWS_WITH(
      vime::LoraConfig::from(args_of({"--lora-rank", "4", "--target-modules", "qkv_proj"})),
      Catch::Contains("--target-modules") && Catch::Contains("qkv_proj"));
  CHECK_THROWS_AS(vime::LoraConfig::from(args_of({"--lora-rank", "4", "--lora-dropout", "1"})),
                  vime::UsageError);
}

TEST_CASE("PEFT's files: names, shapes, config, round trip, merge", "[lora]") {
  vime::test::TempDir tmp;
  auto model = vime::ckpt::load_hf_model(kGolden + "tiny_qwen3", at::kFloat, at::kCPU);
  const auto base = logits_of(*model);
  model->add_lora(config(4, 16, {"q_proj", "o_proj", "up_proj"}));
  randomize(*model, 5);
  const auto adapted = logits_of(*model);
  const fs::path dir = tmp.path() / "adapter";
  vime::ckpt::write_peft_adapter(dir, model->lora_config(), model->lora_tensors(), "Qwen/Qwen3");
  REQUIRE(vime::ckpt::is_peft_adapter_dir(dir));
  auto json = vime::Json::parse(vime::read_text_file(dir / "adapter_config.json"));
  CHECK(json.at("peft_type").as_string() == "LORA");
  CHECK(json.at("task_type").as_string() == "CAUSAL_LM");
  CHECK(json.at("r").as_int() == 4);
  CHECK(json.at("lora_alpha").as_double() == 16);
  CHECK(json.at("base_model_name_or_path").as_string() == "Qwen/Qwen3");
  CHECK(json.at("target_modules").size() == 3);
  vime::ckpt::SafetensorsFile file(dir / "adapter_model.safetensors");
  const auto& cfg = model->config();
  const auto listed = file.names();
  std::set<std::string> names(listed.begin(), listed.end());
  CHECK(names.size() == size_t(6 * cfg.num_layers));
  const std::string layer1 = "base_model.model.model.layers.1.";
  REQUIRE(names.count(layer1 + "self_attn.q_proj.lora_A.weight"));
  CHECK(file.get(layer1 + "self_attn.q_proj.lora_A.weight").sizes() ==
        at::IntArrayRef({4, cfg.hidden_size}));
  CHECK(file.get(layer1 + "self_attn.q_proj.lora_B.weight").sizes() ==
        at::IntArrayRef({cfg.num_attention_heads * cfg.head_dim, 4}));
  CHECK(file.get(layer1 + "self_attn.o_proj.lora_A.weight").sizes() ==
        at::IntArrayRef({4, cfg.num_attention_heads * cfg.head_dim}));
  CHECK(file.get(layer1 + "mlp.up_proj.lora_B.weight").sizes() ==
        at::IntArrayRef({cfg.intermediate_size, 4}));

  // Loaded onto a fresh base: the same model; merged into one without adapters: the same logits.
  auto fresh = vime::ckpt::load_hf_model(kGolden + "tiny_qwen3", at::kFloat, at::kCPU);
  vime::ckpt::apply_peft_adapter(dir, *fresh);
  CHECK(at::equal(logits_of(*fresh), adapted));
  auto merged = vime::ckpt::load_hf_model(kGolden + "tiny_qwen3", at::kFloat, at::kCPU);
  vime::ckpt::merge_peft_adapter(dir, *merged);
  CHECK((logits_of(*merged) - adapted).abs().max().item<double>() < 1e-5);
  // Another rank on the run is refused by name.
  auto other = vime::ckpt::load_hf_model(kGolden + "tiny_qwen3", at::kFloat, at::kCPU);
  other->add_lora(config(8, 16, {"q_proj", "o_proj", "up_proj"}));
  CHECK_THROWS_WITH(vime::ckpt::apply_peft_adapter(dir, *other), Catch::Contains("--lora-rank 8"));
  // What vime cannot apply is refused naming the file.
  auto text = vime::read_text_file(dir / "adapter_config.json");
  vime::write_text_file_atomic(
      dir / "adapter_config.json",
      text.replace(text.find("\"use_dora\": false"), 17, "\"use_dora\": true"));
  CHECK_THROWS_WITH(vime::ckpt::read_peft_adapter(dir), Catch::Contains("use_dora"));
  (void)base;
}

TEST_CASE("a checkpoint resumes the adapters and their optimizer state", "[lora]") {
  vime::test::TempDir tmp;
  auto make = [] {
    auto model = vime::ckpt::load_hf_model(kGolden + "tiny_qwen2", at::kFloat, at::kCPU);
    model->add_lora(config(4, 8, {"k_proj", "gate_proj"}));
    return model;
  };
  auto model = make();
  vime::Optimizer optimizer(model->lora_parameters(), {});
  for (int step = 0; step < 2; ++step) {
    loss_of(*model).backward();
    optimizer.accumulate_grads();
    REQUIRE(optimizer.step(1e-2).is_updated);
  }
  vime::ckpt::TrainState state;
  state.iteration = 3;
  vime::ckpt::save_checkpoint(tmp.path(), *model, &optimizer, state,
                              {.save_rng = false, .base_model = "tiny"});
  const fs::path iter = tmp.path() / "iter_0000003";
  REQUIRE(vime::ckpt::is_peft_adapter_dir(iter / "adapter"));
  const auto adapted = logits_of(*model);

  auto resumed = make();
  vime::Optimizer resumed_optimizer(resumed->lora_parameters(), {});
  auto resolved = vime::ckpt::resolve_checkpoint(tmp.path());
  REQUIRE(resolved);
  vime::ckpt::load_checkpoint(*resolved, *resumed, &resumed_optimizer, false);
  CHECK(at::equal(logits_of(*resumed), adapted));
  auto a = optimizer.state_tensors(), b = resumed_optimizer.state_tensors();
  REQUIRE(a.size() == b.size());
  REQUIRE(a.size() > 0);
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].first == b[i].first);
    CHECK(at::equal(a[i].second, b[i].second));
  }
  CHECK(a[0].first.find("lora_") != std::string::npos);

  // Resuming it without --lora-rank is refused with the flags to pass; a plain load merges.
  auto plain = vime::ckpt::load_hf_model(kGolden + "tiny_qwen2", at::kFloat, at::kCPU);
  vime::Optimizer plain_optimizer(plain->named_parameters(), {});
  CHECK_THROWS_WITH(vime::ckpt::load_checkpoint(*resolved, *plain, &plain_optimizer, false),
                    Catch::Contains("--lora-rank 4"));
  auto scored = vime::ckpt::load_model(*resolved, at::kFloat, at::kCPU);
  CHECK_FALSE(scored->has_lora());
  CHECK((logits_of(*scored) - adapted).abs().max().item<double>() < 1e-5);
}
