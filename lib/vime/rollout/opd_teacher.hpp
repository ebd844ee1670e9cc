// On-policy distillation with a served teacher (--use-opd --opd-type vllm|sglang
// --opd-teacher-model): slime's on_policy_distillation.reward_func + post_process_rewards. Each
// sample's whole token list goes to the teacher's /v1/completions with prompt_logprobs=0 at
// --rollout-temperature; entries [1:] are the log-probs of tokens 1.., and the last
// response_length of them become Sample::teacher_log_probs. The requests go out together through
// one http::Client (no thread per request), at most --vllm-server-concurrency per teacher URL.
#pragma once

#include <memory>
#include <vector>

#include "vime/rollout/rollout_options.hpp"
#include "vime/sample.hpp"

namespace vime::rollout {

class OpdTeacher {
 public:
  explicit OpdTeacher(OpdTeacherOptions options);
  ~OpdTeacher();
  OpdTeacher(const OpdTeacher&) = delete;
  OpdTeacher& operator=(const OpdTeacher&) = delete;

  // Sets teacher_log_probs of every sample that has none yet (a rollout plugin or loaded debug
  // data may have set them): an empty list for a sample without response. Throws vime::Error
  // naming --opd-teacher-model and the URL on the first failed request or malformed answer.
  void score(std::vector<Sample>& samples);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vime::rollout
