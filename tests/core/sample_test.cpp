#include "vime/sample.hpp"

#include <catch2/catch.hpp>

#include "vime/args.hpp"
#include "vime/error.hpp"

using vime::Json;
using vime::Sample;
using vime::SampleStatus;

// slime's test vector (tests/test_sample.py): a non-trainable append after one trainable token.
TEST_CASE("append_response_tokens matches slime's vector", "[sample]") {
  Sample s;
  s.tokens = {0};
  s.append_response_tokens({1}, {-0.1f}, /*trainable=*/true, "a");
  s.rollout_top_p_offsets = {0, 2};
  s.rollout_top_p_token_ids = {5, 6};
  s.append_response_tokens({200, 201, 202}, {}, /*trainable=*/false, "<tool>");
  CHECK(s.tokens == std::vector<int32_t>{0, 1, 200, 201, 202});
  CHECK(s.response_length == 4);
  CHECK(*s.loss_mask == std::vector<int32_t>{1, 0, 0, 0});
  CHECK(*s.rollout_log_probs == std::vector<float>{-0.1f, 0.f, 0.f, 0.f});
  CHECK(s.rollout_top_p_offsets == std::vector<int32_t>{0, 2, 2, 2, 2});
  CHECK(s.response == "a<tool>");
  CHECK(s.effective_response_length() == 1);
  CHECK_THROWS_AS(s.append_response_tokens({7, 8}, {-1.f}, true), vime::Error);
}

TEST_CASE("finish_reason maps to status as in slime", "[sample]") {
  Sample s;
  s.set_status_from_finish_reason("length");
  CHECK(s.status == SampleStatus::kTruncated);
  s.set_status_from_finish_reason("abort");
  CHECK(s.status == SampleStatus::kAborted);
  s.set_status_from_finish_reason("stop");
  CHECK(s.status == SampleStatus::kCompleted);
  s.set_status_from_finish_reason("error");  // other values leave it
  CHECK(s.status == SampleStatus::kCompleted);
}

TEST_CASE("Sample round-trips through JSON with status as a string and unknown keys kept",
          "[sample]") {
  Sample s;
  s.group_index = 3;
  s.index = 7;
  s.prompt = Json(Json::Array{Json::parse(R"({"role":"user","content":"hi"})")});
  s.tokens = {1, 2, 3};
  s.response = "ok";
  s.response_length = 1;
  s.label = Json::parse(R"({"ground_truth": {"target": ["x"]}})");
  s.reward = Json::parse(R"({"score": 1.0, "acc": true})");
  s.loss_mask = std::vector<int32_t>{1};
  s.rollout_log_probs = std::vector<float>{-0.5f};
  s.status = SampleStatus::kTruncated;
  s.metadata["rm_type"] = "math";
  Json j = s.to_json();
  CHECK(j.at("status").as_string() == "truncated");
  j["my_extra_field"] = 42;
  Sample back = Sample::from_json(j);
  CHECK(back.to_json() == j);
  CHECK(back.extra.at("my_extra_field").as_int() == 42);
  CHECK(back.status == SampleStatus::kTruncated);
  CHECK_THROWS_WITH(Sample::from_json(Json::parse(R"({"status": "done"})")),
                    Catch::Contains("unknown sample status"));
}

TEST_CASE("get_reward_value reads --reward-key", "[sample]") {
  vime::Args args;
  args.set("reward_key", Json(), vime::ArgSource::kDefault, "--reward-key");
  Sample s;
  s.reward = 0.5;
  CHECK(s.get_reward_value(args) == 0.5);
  s.reward = Json::parse(R"({"score": -1.0})");
  args.set("reward_key", "score", vime::ArgSource::kCommandLine, "--reward-key");
  CHECK(s.get_reward_value(args) == -1.0);
  args.set("reward_key", "acc", vime::ArgSource::kCommandLine, "--reward-key");
  CHECK_THROWS_WITH(s.get_reward_value(args), Catch::Contains("has no key 'acc'"));
}
