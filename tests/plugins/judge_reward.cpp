// A reward that asks another model of the run: the "judge" model of --vllm-config, found in
// args.vllm_model_urls (its router, else its first engine). The judge continues prompt + response
// greedily by one token and the reward is that token's log-prob (< 0), so a run's rewards show
// that the judge answered. The pattern for LLM-as-judge rewards and teacher models.
#include <httplib.h>

#include <vime/hooks.hpp>

vime::Json judge_logprob(const vime::Args& args, const vime::Sample& sample) {
  const vime::Json& judge = args.get("vllm_model_urls").at("judge");
  const std::string url = judge.at("router").is_null()
                              ? judge.at("engines").at(size_t{0}).as_string()
                              : judge.at("router").as_string();
  vime::Json body = vime::Json::object();
  body["model"] = "judge";
  body["prompt"] = (sample.prompt.is_string() ? sample.prompt.as_string() : sample.prompt.dump()) +
                   sample.response;
  body["max_tokens"] = 1;
  body["temperature"] = 0.0;
  body["logprobs"] = 1;
  httplib::Client client(url);
  client.set_read_timeout(60);
  const auto res = client.Post("/v1/completions", body.dump(), "application/json");
  if (!res || res->status != 200) {
    throw vime::Error(
        "judge " + url + "/v1/completions: " +
        (res ? std::to_string(res->status) + " " + res->body : httplib::to_string(res.error())));
  }
  const vime::Json reply = vime::Json::parse(res->body);
  return reply.at("choices").at(size_t{0}).at("logprobs").at("token_logprobs").at(size_t{0});
}
VIME_REWARD_PLUGIN(judge_logprob)
