// POST /tokenize (text or chat form) and /detokenize, with the server's tokenizer.
#include <httplib.h>

#include "vime/serve/serve_context.hpp"

namespace vime::serve {
namespace {

void tokenize(ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  const Json body = parse_body(req);
  std::vector<int32_t> ids;
  if (const Json* messages = body.find("messages"); messages && !messages->is_null()) {
    if (!messages->is_array()) throw BadRequest("messages must be a list");
    const Json* kw = body.find("chat_template_kwargs");
    const Json* tools = body.find("tools");
    const std::string text = ctx.tokenizer.apply_chat_template(
        *messages, tools ? *tools : Json(nullptr), bool_field(body, "add_generation_prompt", true),
        kw && !kw->is_null() ? *kw : Json::object());
    ids = ctx.tokenizer.encode(text, bool_field(body, "add_special_tokens", false));
  } else {
    const Json* prompt = body.find("prompt");
    if (!prompt || !prompt->is_string())
      throw BadRequest("prompt (a string) or messages is required");
    ids = ctx.tokenizer.encode(prompt->as_string(), bool_field(body, "add_special_tokens", true));
  }
  Json strs = nullptr;
  if (bool_field(body, "return_token_strs", false)) {
    strs = Json::array();
    for (int32_t id : ids) strs.push_back(ctx.tokenizer.decode(std::span<const int32_t>(&id, 1)));
  }
  send_json(res, Json::Object{{"count", static_cast<int64_t>(ids.size())},
                              {"max_model_len", ctx.options.max_model_len},
                              {"tokens", ids},
                              {"token_strs", strs}});
}

}  // namespace

void add_tokenize_routes(httplib::Server& http, ServeContext& ctx) {
  http.Post("/tokenize", [&ctx](const httplib::Request& req, httplib::Response& res) {
    tokenize(ctx, req, res);
  });
  http.Post("/detokenize", [&ctx](const httplib::Request& req, httplib::Response& res) {
    const Json body = parse_body(req);
    const Json* tokens = body.find("tokens");
    if (!tokens) throw BadRequest("tokens is required");
    const auto ids = token_ids_from(*tokens, "tokens", ctx.tokenizer.vocab_size());
    send_json(res, Json::Object{{"prompt", ctx.tokenizer.decode(ids)}});
  });
}

}  // namespace vime::serve
