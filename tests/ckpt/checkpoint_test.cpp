// Checkpoints: save -> load -> an identical next step; slime's --load / --ref-load rules; atomic
// layout; HF directories accepted as checkpoints.
#include "vime/ckpt/checkpoint.hpp"

#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "vime/ckpt/model_io.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/rollout/reward_post_process.hpp"
#include "vime/train/actor.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kTinyQwen3 = VIME_SOURCE_DIR "/tests/model/golden/tiny_qwen3";

vime::Args args_of(std::vector<std::string> tokens) { return vime::core::parse_args(tokens); }

vime::train::TrainBatch batch_for(int seed) {
  vime::train::TrainBatch b;
  for (int i = 0; i < 4; ++i) {
    std::vector<int64_t> seq;
    for (int t = 0; t < 10; ++t) seq.push_back((seed * 7 + i * 3 + t * 5) % 96);
    b.tokens.push_back(seq);
    b.response_lengths.push_back(4);
    b.rewards.push_back(i % 2);
  }
  // Post-processed as the rollout does for grpo with --n-samples-per-prompt 2.
  b.rewards = vime::rollout::normalize_group_rewards(b.rewards, 2, true);
  return b;
}

}  // namespace

TEST_CASE("save -> load -> the next step is identical", "[ckpt]") {
  vime::test::TempDir dir;
  const std::vector<std::string> flags{"--advantage-estimator",
                                       "grpo",
                                       "--n-samples-per-prompt",
                                       "2",
                                       "--global-batch-size",
                                       "2",
                                       "--lr",
                                       "1e-3",
                                       "--lr-warmup-iters",
                                       "3",
                                       "--save",
                                       dir.path().string()};
  auto args = args_of(flags);
  vime::train::SingleRank rank;
  auto a = vime::ckpt::load_hf_model(kTinyQwen3, at::kFloat, at::kCPU);
  vime::train::Actor actor_a(args, *a, nullptr, rank);
  actor_a.train(0, batch_for(0));
  vime::ckpt::TrainState state;
  state.iteration = 0;
  state.lr_scheduler_steps = actor_a.lr_scheduler().num_steps();
  state.data_source = vime::Json(vime::Json::Object{{"epoch", vime::Json(1)}});
  vime::ckpt::save_checkpoint(dir.path(), *a, &actor_a.optimizer(), state);
  CHECK(fs::exists(dir.path() / "iter_0000000" / "model" / "model.safetensors"));
  CHECK(vime::read_text_file(dir.path() / "latest_checkpointed_iteration.txt") == "0\n");

  auto load_args = flags;
  load_args.insert(load_args.end(), {"--load", dir.path().string()});
  auto resumed_args = args_of(load_args);
  auto b = vime::ckpt::load_hf_model(kTinyQwen3, at::kFloat, at::kCPU);  // other weights...
  vime::train::Actor actor_b(resumed_args, *b, nullptr, rank);
  auto resume =
      vime::ckpt::load_for_training(resumed_args, *b, actor_b.optimizer(), actor_b.lr_scheduler());
  REQUIRE(resume.is_resumed);
  CHECK(resume.state.iteration == 0);
  CHECK(resume.state.data_source.at("epoch").as_int() == 1);
  CHECK(actor_b.optimizer().num_steps() == 2);
  CHECK(actor_b.lr_scheduler().num_steps() == 2);

  auto ma = actor_a.train(1, batch_for(1));
  auto mb = actor_b.train(1, batch_for(1));
  CHECK(ma.at("train/loss") == mb.at("train/loss"));
  CHECK(ma.at("train/lr") == mb.at("train/lr"));
  for (size_t i = 0; i < a->named_parameters().size(); ++i) {
    CAPTURE(a->named_parameters()[i].first);
    CHECK(a->named_parameters()[i].second.equal(b->named_parameters()[i].second));
  }
}

TEST_CASE("--load falls back to --ref-load; HF dirs are checkpoints; --no-save-optim", "[ckpt]") {
  vime::test::TempDir dir;
  vime::train::SingleRank rank;
  auto args = args_of({"--load", (dir.path() / "empty").string(), "--ref-load", kTinyQwen3,
                       "--global-batch-size", "1"});
  auto model = std::make_unique<vime::Model>(vime::ModelConfig::from_hf_dir(kTinyQwen3), at::kFloat,
                                             at::kCPU, 99);
  vime::train::Actor actor(args, *model, nullptr, rank);
  auto r = vime::ckpt::load_for_training(args, *model, actor.optimizer(), actor.lr_scheduler());
  CHECK(r.is_loaded);
  CHECK_FALSE(r.is_resumed);
  CHECK(r.from == fs::path(kTinyQwen3));
  auto reference = vime::ckpt::load_hf_model(kTinyQwen3, at::kFloat, at::kCPU);
  CHECK(model->named_parameters()[3].second.equal(reference->named_parameters()[3].second));

  vime::ckpt::TrainState state;
  state.iteration = 5;
  vime::ckpt::SaveOptions save;
  save.save_optimizer = false;
  vime::ckpt::save_checkpoint(dir.path() / "ckpt", *model, &actor.optimizer(), state, save);
  auto resolved = vime::ckpt::resolve_checkpoint(dir.path() / "ckpt");
  REQUIRE(resolved.has_value());
  CHECK(resolved->iteration == 5);
  CHECK_THROWS_WITH(vime::ckpt::load_checkpoint(*resolved, *model, &actor.optimizer(), false),
                    Catch::Contains("--no-load-optim"));
  CHECK_THROWS_WITH(vime::ckpt::resolve_checkpoint(dir.path() / "ckpt", 7),
                    Catch::Contains("iter_0000007") && Catch::Contains("--ckpt-step"));
  auto should =
      vime::ckpt::CheckpointOptions::from(args_of({"--save", "x", "--save-interval", "2"}));
  CHECK_FALSE(vime::ckpt::should_save(should, 0, 5));
  CHECK(vime::ckpt::should_save(should, 1, 5));
  CHECK(vime::ckpt::should_save(should, 4, 5));
}
