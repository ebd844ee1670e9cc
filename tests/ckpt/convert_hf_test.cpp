// `vime convert-hf` both ways, run as users run it: the round trip is bit-exact and the HF output
// carries the origin's config and tokenizer files.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <map>
#include <tuple>

#include "support/moe_layouts.hpp"
#include "support/test_support.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/core/atomic_file.hpp"

namespace fs = std::filesystem;
using vime::test::run_vime;

namespace {

// The HF checkpoint in `origin` through `vime convert-hf` to a vime checkpoint (with `flags`) and
// back to HF under `work`; the tensors written back, by name.
std::map<std::string, at::Tensor> round_trip(const fs::path& work, const fs::path& origin,
                                             const std::string& flags) {
  const auto ckpt = work / "ckpt";
  auto to_vime = run_vime("convert-hf --hf-checkpoint " + origin.string() + " --save " +
                          ckpt.string() + flags);
  INFO(to_vime.output);
  REQUIRE(to_vime.exit_code == 0);
  const auto out = work / "hf";
  auto to_hf = run_vime("convert-hf --input-dir " + ckpt.string() + " --output-dir " +
                        out.string() + " --origin-hf-dir " + origin.string() + " --vocab-size 96");
  INFO(to_hf.output);
  REQUIRE(to_hf.exit_code == 0);
  auto back = vime::ckpt::read_safetensors_dir(out);
  return {back.begin(), back.end()};
}

}  // namespace

TEST_CASE("convert-hf: HF -> vime -> HF is bit-exact and keeps the origin's files", "[ckpt]") {
  vime::test::TempDir dir;
  const fs::path origin = dir.path() / "origin";
  fs::copy(VIME_SOURCE_DIR "/tests/model/golden/tiny_llama", origin);
  fs::remove(origin / "logits.safetensors");
  fs::copy_file(VIME_ASSET_DIR "/tokenizer-llama3/tokenizer_config.json",
                origin / "tokenizer_config.json");
  // bf16 weights, as HF checkpoints usually are.
  auto file = vime::ckpt::read_safetensors_dir(origin);
  for (auto& [name, t] : file) t = t.to(at::kBFloat16);
  vime::ckpt::write_safetensors(origin / "model.safetensors", file);

  const auto ckpt = dir.path() / "ckpt";
  auto to_vime =
      run_vime("convert-hf --hf-checkpoint " + origin.string() + " --save " + ckpt.string() +
               " --num-layers 2 --hidden-size 32 --untie-embeddings-and-output-weights");
  INFO(to_vime.output);
  REQUIRE(to_vime.exit_code == 0);
  CHECK(fs::exists(ckpt / "iter_0000000" / "model" / "model.safetensors"));
  vime::ckpt::SafetensorsFile stored(ckpt / "iter_0000000" / "model" / "model.safetensors");
  CHECK(stored.get("model.embed_tokens.weight").size(0) == 128);  // 96 padded to 128

  const auto out = dir.path() / "hf";
  auto to_hf =
      run_vime("convert-hf --input-dir " + (ckpt / "iter_0000000").string() + " --output-dir " +
               out.string() + " --origin-hf-dir " + origin.string() + " --vocab-size 96");
  INFO(to_hf.output);
  REQUIRE(to_hf.exit_code == 0);
  auto back = vime::ckpt::read_safetensors_dir(out);
  REQUIRE(back.size() == file.size());
  std::map<std::string, at::Tensor> by_name(back.begin(), back.end());
  for (const auto& [name, t] : file) {
    CAPTURE(name);
    REQUIRE(by_name.count(name) == 1);
    CHECK(by_name[name].scalar_type() == at::kBFloat16);
    CHECK(by_name[name].equal(t));
  }
  CHECK(vime::read_text_file(out / "config.json") == vime::read_text_file(origin / "config.json"));
  CHECK(fs::exists(out / "tokenizer_config.json"));

  auto again = run_vime("convert-hf --input-dir " + ckpt.string() + " --output-dir " +
                        out.string() + " --origin-hf-dir " + origin.string());
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.output, Catch::Contains("not empty") && Catch::Contains("-f"));
}

TEST_CASE("convert-hf: flags that disagree with config.json, missing inputs", "[ckpt]") {
  vime::test::TempDir dir;
  const std::string tiny = VIME_SOURCE_DIR "/tests/model/golden/tiny_qwen3";
  auto wrong = run_vime("convert-hf --hf-checkpoint " + tiny + " --save " +
                        (dir.path() / "c").string() + " --num-layers 28");
  CHECK(wrong.exit_code == 2);
  CHECK_THAT(wrong.output, Catch::Contains("--num-layers 28 disagrees"));
  auto missing = run_vime("convert-hf --hf-checkpoint " + (dir.path() / "nope").string() +
                          " --save " + (dir.path() / "c").string());
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.output, Catch::Contains("not an HF model dir"));
  auto no_origin = run_vime("convert-hf --input-dir x --output-dir y");
  CHECK(no_origin.exit_code == 2);
  CHECK_THAT(no_origin.output, Catch::Contains("--origin-hf-dir"));
}

TEST_CASE("vime convert is convert-hf under its short name, both directions", "[ckpt]") {
  vime::test::TempDir dir;
  const fs::path origin = dir.path() / "origin";
  fs::copy(VIME_SOURCE_DIR "/tests/model/golden/tiny_llama", origin);
  fs::remove(origin / "logits.safetensors");
  const auto file = vime::ckpt::read_safetensors_dir(origin);
  const auto ckpt = dir.path() / "ckpt";
  auto to_vime = run_vime("convert --hf-checkpoint " + origin.string() + " --save " +
                          ckpt.string() + " --untie-embeddings-and-output-weights");
  INFO(to_vime.output);
  REQUIRE(to_vime.exit_code == 0);
  const auto out = dir.path() / "hf";
  auto to_hf = run_vime("convert --input-dir " + ckpt.string() + " --output-dir " + out.string() +
                        " --origin-hf-dir " + origin.string() + " --vocab-size 96");
  INFO(to_hf.output);
  REQUIRE(to_hf.exit_code == 0);
  auto back = vime::ckpt::read_safetensors_dir(out);
  std::map<std::string, at::Tensor> by_name(back.begin(), back.end());
  REQUIRE(back.size() == file.size());
  for (const auto& [name, t] : file) {
    CAPTURE(name);
    REQUIRE(by_name.count(name) == 1);
    CHECK(by_name[name].equal(t));
  }
  // Its errors carry its own name.
  auto bad = run_vime("convert --input-dir x --output-dir y");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.output, Catch::StartsWith("vime convert: error"));
}

// A MoE directory through convert-hf both ways: the Hub's per-expert layout comes back bit-exact,
// and transformers 5's fused layout (mlp.experts.gate_up_proj [E, 2F, H], gate rows first;
// mlp.experts.down_proj [E, H, F]) comes back in the Hub's layout with the same values.
TEST_CASE("convert-hf: MoE checkpoints round trip in both expert layouts", "[ckpt]") {
  const std::string q3 =
      " --num-layers 3 --hidden-size 32 --untie-embeddings-and-output-weights "
      "--qk-layernorm --num-experts 10 --moe-router-topk 3 "
      "--moe-ffn-hidden-size 16 --moe-layer-freq '[1,0,1]'";
  const std::string q2 =
      " --num-layers 2 --hidden-size 32 --untie-embeddings-and-output-weights "
      "--add-qkv-bias --num-experts 8 --moe-router-topk 2 "
      "--moe-ffn-hidden-size 16 --moe-router-pre-softmax "
      "--moe-shared-expert-intermediate-size 24 --moe-shared-expert-gate";
  for (const auto& [name, flags, fused] :
       {std::tuple{"tiny_qwen2_moe", q2, false}, std::tuple{"tiny_qwen3_moe", q3, true}}) {
    CAPTURE(name, fused);
    vime::test::TempDir dir;
    const fs::path origin = dir.path() / "origin";
    fs::copy(std::string(VIME_SOURCE_DIR "/tests/model/golden/") + name, origin);
    fs::remove(origin / "logits.safetensors");
    auto hub = vime::ckpt::read_safetensors_dir(origin);
    for (auto& [n, t] : hub) t = t.to(at::kBFloat16);
    const auto written = fused ? vime::test::fuse_experts_like_transformers5(hub, {0, 2}, 10) : hub;
    vime::ckpt::write_safetensors(origin / "model.safetensors", written);

    auto by_name = round_trip(dir.path(), origin, flags);
    REQUIRE(by_name.size() == hub.size());
    for (const auto& [n, t] : hub) {
      CAPTURE(n);
      REQUIRE(by_name.count(n) == 1);
      CHECK(by_name[n].equal(t));
    }
  }
}

// GLM-4's fused mlp.gate_up_proj and GLM-4.5's fp32 router correction bias and plural shared
// experts go HF -> vime -> HF unchanged (bf16 weights, the bias kept in fp32 as in the Hub's
// checkpoints).
TEST_CASE("convert-hf: GLM-4 and GLM-4.5 checkpoints round trip bit-exact", "[ckpt]") {
  const std::string glm4 =
      " --num-layers 2 --hidden-size 32 --untie-embeddings-and-output-weights --add-qkv-bias "
      "--rotary-percent 0.5 --rotary-interleaved --post-self-attn-layernorm --post-mlp-layernorm";
  const std::string glm45 =
      " --num-layers 3 --hidden-size 32 --untie-embeddings-and-output-weights --add-qkv-bias "
      "--qk-layernorm --rotary-percent 0.5 --num-experts 8 --moe-router-topk 3 "
      "--moe-ffn-hidden-size 16 --moe-layer-freq '[0]*1+[1]*2' "
      "--moe-shared-expert-intermediate-size 16 --moe-router-score-function sigmoid "
      "--moe-router-enable-expert-bias --moe-router-bias-update-rate 0 "
      "--moe-router-num-groups 4 --moe-router-group-topk 2 --moe-router-topk-scaling-factor 2.5";
  for (const auto& [name, flags] :
       {std::pair{"tiny_glm4", glm4}, std::pair{"tiny_glm4_moe", glm45}}) {
    CAPTURE(name);
    vime::test::TempDir dir;
    const fs::path origin = dir.path() / "origin";
    fs::copy(std::string(VIME_SOURCE_DIR "/tests/model/golden/") + name, origin);
    fs::remove(origin / "logits.safetensors");
    auto hub = vime::ckpt::read_safetensors_dir(origin);
    for (auto& [n, t] : hub)
      if (!n.ends_with("e_score_correction_bias")) t = t.to(at::kBFloat16);
    vime::ckpt::write_safetensors(origin / "model.safetensors", hub);

    auto by_name = round_trip(dir.path(), origin, flags);
    REQUIRE(by_name.size() == hub.size());
    for (const auto& [n, t] : hub) {
      CAPTURE(n);
      REQUIRE(by_name.count(n) == 1);
      CHECK(by_name[n].scalar_type() == t.scalar_type());
      CHECK(by_name[n].equal(t));
    }
  }
}
