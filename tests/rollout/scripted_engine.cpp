#include "rollout/scripted_engine.hpp"

#include <chrono>
#include <thread>

#include "vime/error.hpp"

namespace vime::test {

int expected_answer(const std::string& text) {
  const auto at = text.find("What is ");
  if (at == std::string::npos) return -1;
  int a = 0, b = 0;
  if (std::sscanf(text.c_str() + at, "What is %d+%d?", &a, &b) != 2) return -1;
  return a + b;
}

std::vector<GenerateRequest> ScriptedEngine::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

void ScriptedEngine::abort_all() {
  ++num_aborts;
  {
    std::lock_guard lock(mutex_);
    ++abort_epoch_;
  }
  aborted_cv_.notify_all();
}

GenerateResponse ScriptedEngine::generate(const GenerateRequest& request) {
  ++num_requests;
  const std::string text = tokenizer_.decode(request.input_ids);
  const auto close = text.find(']');
  const std::string prompt = close == std::string::npos ? text : text.substr(0, close + 1);
  int call = 0;
  int64_t epoch = 0;
  {
    std::lock_guard lock(mutex_);
    requests_.push_back(request);
    call = calls_[prompt]++;
    epoch = abort_epoch_;
  }
  if (prompt.find("THROW") != std::string::npos) throw Error("scripted engine: THROW in prompt");
  bool right = call % 2 == 0;
  if (prompt.find("ALL_RIGHT") != std::string::npos) right = true;
  if (prompt.find("ALL_WRONG") != std::string::npos) right = false;
  const int answer = expected_answer(prompt);
  std::string reply =
      "The answer is \\boxed{" + std::to_string(right ? answer : answer + 100) + "}.";
  std::vector<int32_t> tokens = tokenizer_.encode(reply);
  if (auto eos = tokenizer_.eos_token_id()) tokens.push_back(*eos);

  // A resumed sample: skip what it already has.
  const size_t prompt_len = tokenizer_.encode(prompt).size();
  size_t done = request.input_ids.size() > prompt_len ? request.input_ids.size() - prompt_len : 0;
  if (done > 0) {
    // Resumed samples keep the response they had, whatever the call count says now.
    const std::string partial = text.substr(prompt.size());
    const std::string other =
        "The answer is \\boxed{" + std::to_string(right ? answer + 100 : answer) + "}.";
    if (reply.rfind(partial, 0) != 0 && other.rfind(partial, 0) == 0) {
      tokens = tokenizer_.encode(other);
      if (auto eos = tokenizer_.eos_token_id()) tokens.push_back(*eos);
    }
  }
  tokens.erase(tokens.begin(),
               tokens.begin() + static_cast<std::ptrdiff_t>(std::min(done, tokens.size())));

  GenerateResponse response;
  response.finish_reason = "stop";
  if (prompt.find("DELAY") != std::string::npos)
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  if (prompt.find("SLOW") != std::string::npos && done == 0) {
    std::unique_lock lock(mutex_);
    const bool aborted = aborted_cv_.wait_for(lock, std::chrono::milliseconds(slow_ms),
                                              [&] { return abort_epoch_ != epoch; });
    if (aborted) {
      tokens.resize(std::min<size_t>(tokens.size(), 2));
      response.finish_reason = "abort";
    }
  }
  if (static_cast<int64_t>(tokens.size()) > request.sampling_params.max_new_tokens) {
    tokens.resize(static_cast<size_t>(request.sampling_params.max_new_tokens));
    response.finish_reason = "length";
  }
  response.output_ids = tokens;
  response.output_log_probs.assign(tokens.size(), -0.25f);
  response.weight_version = "3";
  response.prompt_tokens = static_cast<int64_t>(request.input_ids.size());
  response.cached_tokens = response.prompt_tokens / 2;
  return response;
}

}  // namespace vime::test
