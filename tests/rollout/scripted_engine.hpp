// A scripted EngineClient for the rollout tests: the response is a function of the prompt text,
// the text up to and including its first ']'. A prompt "... What is 2+3? [MIXED]" gets
// "The answer is \boxed{5}." or a wrong \boxed{} answer followed by EOS, depending on its marker:
//   ALL_RIGHT / ALL_WRONG: always right / wrong;  MIXED: right on the prompt's even-numbered calls;
//   SLOW: like MIXED but waits slow_ms (until abort_all, which returns the first 2 tokens,
//   "abort"); THROW: generate throws vime::Error;  DELAY: answers after 300 ms (so SLOW requests
//   are surely in flight before a fast group finishes).
// A request whose input continues past the prompt (a resumed partial rollout) gets the rest of the
// response. Responses longer than max_new_tokens are cut and finish with "length".
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "vime/engine_client.hpp"
#include "vime/tokenizer.hpp"

namespace vime::test {

class ScriptedEngine : public EngineClient {
 public:
  explicit ScriptedEngine(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
  GenerateResponse generate(const GenerateRequest& request) override;
  void abort_all() override;

  int slow_ms = 5000;
  std::atomic<int> num_requests{0};
  std::atomic<int> num_aborts{0};
  std::vector<GenerateRequest> requests() const;

 private:
  const Tokenizer& tokenizer_;
  mutable std::mutex mutex_;
  std::condition_variable aborted_cv_;
  int64_t abort_epoch_ = 0;
  std::map<std::string, int> calls_;
  std::vector<GenerateRequest> requests_;
};

// "What is 2+3?" -> 5 (the first "What is A+B?" in `text`); -1 when there is none.
int expected_answer(const std::string& text);

}  // namespace vime::test
