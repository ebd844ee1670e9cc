// Bounds on what one request may make `vime serve` do, checked before the work: the body's size
// (--max-request-bytes: 413 above it, read from Content-Length and never buffered), and a text
// prompt's bytes against the context (400 without tokenizing a prompt that cannot fit).
#pragma once

#include <cstdint>
#include <string_view>

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace vime::serve {

struct ServeContext;

// Makes httplib refuse bodies over ctx.options.max_request_bytes (its payload limit skips them
// without keeping them) and answers the 413 in vLLM's error shape.
void limit_request_size(httplib::Server& http, const ServeContext& ctx);

// For the pre-routing handler (before httplib reads the body): answers a chunked body, whose
// size is not known up front, with 411 in vLLM's error shape; returns whether it answered.
bool refuse_unbounded_body(const ServeContext& ctx, const httplib::Request& req,
                           httplib::Response& res);

// For httplib's error handler: fills an empty 411/413/414 answer with vLLM's error body.
void describe_limit_error(const ServeContext& ctx, const httplib::Request& req,
                          httplib::Response& res);

// Throws BadRequest when a text prompt of `bytes` bytes must hold more tokens than the context:
// no token of the vocabulary decodes to more than max_token_bytes(), so `bytes` needs at least
// bytes / max_token_bytes() tokens. Cheap: nothing is tokenized.
void check_prompt_bytes(const ServeContext& ctx, size_t bytes, std::string_view what);

}  // namespace vime::serve
