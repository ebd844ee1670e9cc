#include "vime/serve/request_limits.hpp"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <vector>

#include "vime/serve/serve_context.hpp"

namespace vime::serve {
namespace {

// The longest text one token of `tokenizer` decodes to, in bytes (computed once per tokenizer).
size_t max_token_bytes(const Tokenizer& tokenizer) {
  static std::mutex mutex;
  static std::map<const Tokenizer*, size_t> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(&tokenizer); it != cache.end()) return it->second;
  size_t longest = 1;
  std::vector<int32_t> id(1);
  for (int64_t i = 0; i < tokenizer.vocab_size(); ++i) {
    id[0] = static_cast<int32_t>(i);
    try {
      longest = std::max(longest, tokenizer.decode(id, false).size());
    } catch (const std::exception&) {
      // An id the tokenizer cannot decode alone adds nothing to the bound.
    }
  }
  cache.emplace(&tokenizer, longest);
  return longest;
}

std::string mib(int64_t bytes) {
  return bytes % (1 << 20) == 0 ? std::to_string(bytes >> 20) + " MiB"
                                : std::to_string(bytes) + " bytes";
}

}  // namespace

void limit_request_size(httplib::Server& http, const ServeContext& ctx) {
  if (ctx.options.max_request_bytes > 0)
    http.set_payload_max_length(static_cast<size_t>(ctx.options.max_request_bytes));
  max_token_bytes(ctx.tokenizer);  // at startup, not in the first long request
}

bool refuse_unbounded_body(const ServeContext& ctx, const httplib::Request& req,
                           httplib::Response& res) {
  if (ctx.options.max_request_bytes <= 0) return false;
  std::string encoding = req.get_header_value("Transfer-Encoding");
  std::transform(encoding.begin(), encoding.end(), encoding.begin(), ::tolower);
  if (encoding.find("chunked") == std::string::npos) return false;
  res.set_header("Connection", "close");
  send_error(res, 411,
             "a chunked request body is not accepted: send Content-Length (at most "
             "--max-request-bytes " +
                 mib(ctx.options.max_request_bytes) + ")");
  return true;
}

void describe_limit_error(const ServeContext& ctx, const httplib::Request& req,
                          httplib::Response& res) {
  if (!res.body.empty()) return;
  if (res.status == 413) {
    const std::string length = req.get_header_value("Content-Length");
    send_error(res, 413,
               "the request body" + (length.empty() ? std::string() : " of " + length + " bytes") +
                   " is larger than --max-request-bytes " + mib(ctx.options.max_request_bytes));
  } else if (res.status == 414) {
    send_error(res, 414, "the request line is too long");
  } else if (res.status == 400) {
    send_error(res, 400, "malformed HTTP request");
  }
}

void check_prompt_bytes(const ServeContext& ctx, size_t bytes, std::string_view what) {
  const int64_t context = ctx.options.max_model_len;
  if (context <= 0) return;
  const size_t per_token = max_token_bytes(ctx.tokenizer);
  const size_t at_least = (bytes + per_token - 1) / per_token;
  if (at_least <= static_cast<size_t>(context)) return;
  throw BadRequest("This model's maximum context length is " + std::to_string(context) +
                   " tokens. However, your " + std::string(what) + " (" + std::to_string(bytes) +
                   " bytes) holds at least " + std::to_string(at_least) +
                   " tokens. Please reduce the length of the " + std::string(what) + ".");
}

}  // namespace vime::serve
