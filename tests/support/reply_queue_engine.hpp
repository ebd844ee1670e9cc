// An EngineClient for multi-turn plugin tests: replies with scripted texts in order; each reply's
// log-probs are -0.1, -0.2, ... so a test can tell which tokens the engine made. Optionally cut to
// the request's max_new_tokens (finish "length"), and tagged with a weight version.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "vime/engine_client.hpp"
#include "vime/tokenizer.hpp"

namespace vime::test {

class ReplyQueueEngine : public EngineClient {
 public:
  struct Reply {
    std::string text, finish_reason = "stop";
  };
  ReplyQueueEngine(const Tokenizer& tok, std::vector<Reply> replies)
      : tok_(tok), replies_(replies.begin(), replies.end()) {}

  GenerateResponse generate(const GenerateRequest& request) override {
    requests.push_back(request);
    REQUIRE_FALSE(replies_.empty());
    Reply reply = replies_.front();
    replies_.pop_front();
    GenerateResponse out;
    out.output_ids = tok_.encode(reply.text);
    out.finish_reason = reply.finish_reason;
    const int64_t limit = request.sampling_params.max_new_tokens;
    if (cut_to_max_new_tokens && static_cast<int64_t>(out.output_ids.size()) > limit) {
      out.output_ids.resize(static_cast<size_t>(limit));
      out.finish_reason = "length";
    }
    for (size_t i = 0; i < out.output_ids.size(); ++i)
      out.output_log_probs.push_back(-0.1f * static_cast<float>(i + 1));
    out.weight_version = weight_version;
    return out;
  }
  void abort_all() override {}

  std::vector<GenerateRequest> requests;
  bool cut_to_max_new_tokens = false;
  std::string weight_version;  // empty: none

 private:
  const Tokenizer& tok_;
  std::deque<Reply> replies_;
};

}  // namespace vime::test
