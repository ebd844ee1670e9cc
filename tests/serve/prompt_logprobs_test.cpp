// vLLM's prompt_logprobs on `vime serve` over real HTTP (the in-process Server around a
// NativeEngine on the tiny fp32 CPU model): the trainer's own log-probs of the prompt at the
// request's temperature, the same numbers when the prompt's prefix comes from the prefix cache, on
// /v1/completions, /inference/v1/generate and /v1/chat/completions, and vLLM's 400s.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's
#include <ATen/core/grad_mode.h>
#include <httplib.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "serve/served_engine.hpp"
#include "vime/json.hpp"
#include "vime/model/model.hpp"
#include "vime/train/log_probs.hpp"

using vime::Json;

namespace {

Json post(const vime::test::ServedEngine& s, const std::string& path, const Json& body,
          int expect = 200) {
  httplib::Client client("127.0.0.1", s.port);
  client.set_read_timeout(120, 0);
  auto res = client.Post(path.c_str(), body.dump(), "application/json");
  REQUIRE(res);
  CAPTURE(path, res->body);
  REQUIRE(res->status == expect);
  return Json::parse(res->body);
}

// The trainer's log-probs (train::token_log_probs over the full forward) of prompt[1..].
std::vector<float> trainer_log_probs(const std::vector<int32_t>& prompt, double temperature) {
  at::NoGradGuard no_grad;
  vime::Model& model = vime::test::served_model();
  auto batch =
      vime::PackedBatch::pack({std::vector<int64_t>(prompt.begin(), prompt.end())}, model.device());
  const auto n = static_cast<int64_t>(prompt.size());
  auto rows = at::arange(n - 1, at::kLong);
  auto targets = batch.tokens.narrow(0, 1, n - 1);
  auto lp = vime::train::token_log_probs(model.forward(batch), rows, targets, temperature)
                .log_probs.contiguous();
  return {lp.data_ptr<float>(), lp.data_ptr<float>() + (n - 1)};
}

// The prompt token's log-prob at each position of a prompt_logprobs list (checked: null first,
// then the prompt token, ranks, and `top` alternatives in order).
std::vector<double> prompt_token_log_probs(const Json& list, const std::vector<int32_t>& prompt,
                                           size_t top) {
  REQUIRE(list.is_array());
  REQUIRE(list.size() == prompt.size());
  CHECK(list.at(size_t{0}).is_null());
  std::vector<double> out;
  for (size_t i = 1; i < prompt.size(); ++i) {
    const Json& position = list.at(i);
    const Json& token = position.at(std::to_string(prompt[i]));
    const double lp = token.at("logprob").as_double();
    const int64_t rank = token.at("rank").as_int();
    CHECK(rank >= 1);
    double best = -1e30;
    for (const auto& [id, entry] : position.as_object())
      best = std::max(best, entry.at("logprob").as_double());
    // The alternatives, plus the prompt token when it is not among them.
    CHECK(position.size() == (rank <= static_cast<int64_t>(top) ? top : top + 1));
    CHECK(best >= lp);
    if (rank == 1) CHECK(best == lp);
    out.push_back(lp);
  }
  return out;
}

}  // namespace

TEST_CASE(
    "serve: prompt_logprobs are the trainer's log-probs at the request's temperature, the same "
    "from the prefix cache",
    "[serve]") {
  vime::test::ServedEngine s;
  const auto prompt = vime::test::served_tokenizer().encode(
      "On-policy distillation asks the teacher for the log-probability of every token the "
      "student wrote, given all the tokens before it, and moves the student toward it.");
  REQUIRE(prompt.size() > 32);  // two whole KV blocks of 16 to find in the prefix cache
  Json body = Json::Object{{"prompt", Json(prompt)},
                           {"max_tokens", 2},
                           {"temperature", 0.7},
                           {"seed", 5},
                           {"prompt_logprobs", 3}};
  const Json first = post(s, "/v1/completions", body);
  const Json& choice = first.at("choices").at(size_t{0});
  const auto served = prompt_token_log_probs(choice.at("prompt_logprobs"), prompt, 3);
  const auto expected = trainer_log_probs(prompt, 0.7);
  for (size_t i = 0; i < served.size(); ++i) {
    INFO("position " << i + 1);
    // fp32 rounding only (the engine's forward packs whatever is queued: row counts differ).
    CHECK(served[i] == Approx(expected[i]).epsilon(1e-5).margin(1e-5));
  }
  CHECK(first.at("usage").at("prompt_tokens_details").at("cached_tokens").as_int() == 0);

  // Again: the prompt's blocks are in the prefix cache now, and every position is still scored.
  const Json again = post(s, "/v1/completions", body);
  CHECK(again.at("usage").at("prompt_tokens_details").at("cached_tokens").as_int() >= 32);
  CHECK(again.at("choices").at(size_t{0}).at("prompt_logprobs").dump() ==
        choice.at("prompt_logprobs").dump());

  // Temperature 0 (greedy) scores at 1; prompt_logprobs=0 holds the prompt token alone.
  body["temperature"] = 0.0;
  body["prompt_logprobs"] = 0;
  body["n"] = 2;
  const Json greedy = post(s, "/v1/completions", body);
  const auto at_one = trainer_log_probs(prompt, 1.0);
  for (size_t c = 0; c < 2; ++c) {  // every choice of the prompt carries them
    const auto lp =
        prompt_token_log_probs(greedy.at("choices").at(c).at("prompt_logprobs"), prompt, 0);
    for (size_t i = 0; i < lp.size(); ++i)
      CHECK(lp[i] == Approx(at_one[i]).epsilon(1e-5).margin(1e-5));
  }

  // /inference/v1/generate: in sampling_params, answered at the top level.
  const Json generated =
      post(s, "/inference/v1/generate",
           Json::Object{
               {"token_ids", Json(prompt)},
               {"sampling_params",
                Json::Object{{"max_tokens", 1}, {"temperature", 0.7}, {"prompt_logprobs", 3}}}});
  const auto from_generate = prompt_token_log_probs(generated.at("prompt_logprobs"), prompt, 3);
  for (size_t i = 0; i < from_generate.size(); ++i) CHECK(from_generate[i] == served[i]);
  CHECK(generated.at("prompt_logprobs")
            .at(size_t{1})
            .at(std::to_string(prompt[1]))
            .at("decoded_token")
            .as_string() == "token_id:" + std::to_string(prompt[1]));

  // /v1/chat/completions: the rendered prompt's, at the top level.
  const Json chat = post(
      s, "/v1/chat/completions",
      Json::Object{{"messages", Json::Array{Json::Object{{"role", "user"}, {"content", "Hi"}}}},
                   {"max_tokens", 1},
                   {"prompt_logprobs", 1}});
  CHECK(static_cast<int64_t>(chat.at("prompt_logprobs").size()) ==
        chat.at("usage").at("prompt_tokens").as_int());

  // vLLM's 400s: with stream=true, and above --max-logprobs (20).
  body["n"] = 1;
  body["stream"] = true;
  const Json streamed = post(s, "/v1/completions", body, 400);
  CHECK_THAT(streamed.at("error").at("message").as_string(),
             Catch::Contains("prompt_logprobs") && Catch::Contains("stream"));
  CHECK(streamed.at("error").at("code").as_int() == 400);
  body["stream"] = false;
  body["prompt_logprobs"] = 21;
  CHECK_THAT(post(s, "/v1/completions", body, 400).at("error").at("message").as_string(),
             Catch::Contains("prompt_logprobs must be an integer in [0, 20]"));
}
