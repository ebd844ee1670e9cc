#include "vime/rollout/opd_teacher.hpp"

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

#include "vime/error.hpp"
#include "vime/http/client.hpp"

namespace vime::rollout {
namespace {

// The teacher's log-prob of each token after the first of `tokens`, from vLLM's prompt_logprobs
// (null first, then {"<id>": {"logprob": ...}} holding the prompt token).
std::vector<float> prompt_token_log_probs(const Json& reply, const std::vector<int32_t>& tokens,
                                          const std::string& where) {
  const Json* choices = reply.find("choices");
  const Json* list = choices && choices->is_array() && choices->size() > 0
                         ? choices->at(size_t{0}).find("prompt_logprobs")
                         : nullptr;
  if (list == nullptr || !list->is_array())
    throw Error(where +
                " answered without prompt_logprobs (does it serve vLLM's /v1/completions?)");
  if (list->size() != tokens.size())
    throw Error(where + " answered " + std::to_string(list->size()) +
                " prompt log-probs for a sample of " + std::to_string(tokens.size()) + " tokens");
  std::vector<float> out;
  out.reserve(tokens.size() - 1);
  for (size_t i = 1; i < tokens.size(); ++i) {
    const Json& position = list->at(i);
    const Json* entry = position.is_object() ? position.find(std::to_string(tokens[i])) : nullptr;
    const Json* lp = entry && entry->is_object() ? entry->find("logprob") : nullptr;
    if (lp == nullptr || !lp->is_number())
      throw Error(where + " answered no log-prob for token " + std::to_string(tokens[i]) +
                  " at prompt position " + std::to_string(i));
    out.push_back(static_cast<float>(lp->as_double()));
  }
  return out;
}

}  // namespace

struct OpdTeacher::Impl {
  explicit Impl(OpdTeacherOptions o) : options(std::move(o)) {}
  OpdTeacherOptions options;
  http::Client client;
};

OpdTeacher::OpdTeacher(OpdTeacherOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

OpdTeacher::~OpdTeacher() = default;

void OpdTeacher::score(std::vector<Sample>& samples) {
  const OpdTeacherOptions& o = impl_->options;
  const std::string flag = "--opd-teacher-model " + o.model;
  std::vector<size_t> todo;
  for (size_t i = 0; i < samples.size(); ++i) {
    Sample& s = samples[i];
    if (s.teacher_log_probs) continue;
    if (s.response_length <= 0) {
      s.teacher_log_probs.emplace();
      continue;
    }
    if (s.response_length >= static_cast<int64_t>(s.tokens.size()))
      throw Error(flag + ": sample " + std::to_string(s.index.value_or(-1)) + " has " +
                  std::to_string(s.tokens.size()) + " tokens for a response of " +
                  std::to_string(s.response_length) + " (the teacher needs a prompt token)");
    todo.push_back(i);
  }
  if (todo.empty()) return;

  // Answers come back on the client's thread and are parsed here; the next request goes out as
  // each one ends.
  std::mutex mutex;
  std::condition_variable arrived;
  std::deque<std::pair<size_t, http::Response>> answers;  // (position in todo, answer)
  size_t submitted = 0, finished = 0;
  bool stop = false;
  std::function<void()> submit_next;  // under `mutex`
  submit_next = [&] {
    const size_t k = submitted++;
    const Sample& s = samples[todo[k]];
    Json body = Json::Object{{"prompt", Json(s.tokens)},
                             {"max_tokens", 1},
                             {"temperature", o.temperature},
                             {"prompt_logprobs", 0}};
    auto request =
        http::Request::post_json(o.urls[k % o.urls.size()] + "/v1/completions", body, o.timeout_s);
    request.bearer(o.api_key);
    impl_->client.submit(std::move(request), [&, k](http::Response r) {
      std::lock_guard lock(mutex);
      answers.emplace_back(k, std::move(r));
      if (!stop && submitted < todo.size()) submit_next();
      arrived.notify_all();
    });
  };
  const size_t window = static_cast<size_t>(o.max_in_flight) * o.urls.size();
  std::unique_lock lock(mutex);
  while (submitted < todo.size() && submitted < window) submit_next();
  std::string error;
  while (finished < submitted) {
    arrived.wait(lock, [&] { return !answers.empty(); });
    auto [k, response] = std::move(answers.front());
    answers.pop_front();
    ++finished;
    if (!error.empty()) continue;  // draining what is in flight
    Sample& s = samples[todo[k]];
    const std::string where = flag + ": " + o.urls[k % o.urls.size()] + "/v1/completions";
    lock.unlock();
    try {
      if (!response.ok()) throw Error(where + ": " + response.describe());
      auto log_probs = prompt_token_log_probs(response.json(where), s.tokens, where);
      s.teacher_log_probs.emplace(log_probs.end() - s.response_length, log_probs.end());
    } catch (const std::exception& e) {
      error = e.what();
    }
    lock.lock();
    if (!error.empty() && !stop) {
      stop = true;
      impl_->client.cancel_all();
    }
  }
  if (!error.empty()) throw Error(error);
}

}  // namespace vime::rollout
