// stream=true: one generation answered as Server-Sent Events while the engine decodes it
// (`data: {json}\n\n` chunks, then `data: [DONE]\n\n`), as vLLM's OpenAI server streams.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "vime/serve/serve_context.hpp"

namespace vime::serve {

// What one chunk carries: the text and tokens since the previous chunk.
struct StreamPiece {
  std::string text;  // whole UTF-8 characters only
  std::span<const int32_t> ids;
  std::span<const float> log_probs;
  const GenerateResponse* end = nullptr;  // the finished request, on the last piece only
};

struct StreamFormat {
  std::vector<Json> first;                                         // sent before any token
  std::function<Json(const StreamPiece&)> chunk;                   // one chunk per piece
  std::function<std::vector<Json>(const GenerateResponse&)> last;  // after the final piece
  bool every_token = false;  // a chunk for new tokens even when their text is held back
};

// Queues `request` (throws as ServeContext::submit does, before anything is sent) and answers
// `res` as an event stream: format.first, a piece whenever the decoded text grows, the final
// piece (its text completes output_text(), finish_reason in piece.end), format.last, [DONE].
// Text that may still become a stop string, or ends inside a character, is held back. A failed
// generation sends {"error": ...} before [DONE]. A client that goes away aborts the request.
void stream_generation(ServeContext& ctx, httplib::Response& res, const GenerateRequest& request,
                       StreamFormat format);

}  // namespace vime::serve
