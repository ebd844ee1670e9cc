// POST /v1/chat/completions (vLLM's ChatCompletionRequest/ChatCompletionResponse): messages
// (and tools) rendered with the model's chat template, generated as /v1/completions generates,
// answered as one chat.completion or, with stream=true, chat.completion.chunk events. Tool calls
// stay in the content unless the server runs a tool-call parser (tool_calls.hpp).
#include <httplib.h>

#include <algorithm>
#include <ctime>
#include <deque>
#include <future>
#include <limits>
#include <span>

#include "vime/serve/completion_output.hpp"
#include "vime/serve/event_stream.hpp"
#include "vime/serve/serve_context.hpp"
#include "vime/serve/tool_calls.hpp"

namespace vime::serve {
namespace {

// One {token, logprob, bytes} of chat logprobs.
Json chat_token(const ServeContext& ctx, int32_t id, const Json& logprob) {
  const std::string token = ctx.tokenizer.decode(std::span<const int32_t>(&id, 1));
  Json bytes = Json::array();
  for (unsigned char c : token) bytes.push_back(static_cast<int64_t>(c));
  return Json::Object{{"token", token}, {"logprob", logprob}, {"bytes", bytes}};
}

// Chat logprobs: {"content": [{token, logprob, bytes, top_logprobs}]}; top_logprobs lists the
// engine's most likely tokens at each position (`top`, one list per token; empty without).
Json chat_logprobs(const ServeContext& ctx, std::span<const int32_t> ids,
                   std::span<const float> log_probs,
                   std::span<const std::vector<engine::TokenLogProb>> top = {}) {
  Json content = Json::array();
  for (size_t i = 0; i < ids.size(); ++i) {
    const Json lp = i < log_probs.size() ? Json(clamp_logprob(log_probs[i])) : Json(nullptr);
    Json entry = chat_token(ctx, ids[i], lp);
    Json alternatives = Json::array();
    if (i < top.size())
      for (const auto& t : top[i])
        alternatives.push_back(chat_token(ctx, t.token_id, Json(clamp_logprob(t.log_prob))));
    entry["top_logprobs"] = std::move(alternatives);
    content.push_back(std::move(entry));
  }
  return Json::Object{{"content", content}};
}

struct Chat {
  std::string id;
  int64_t created;
  SamplingParams params;
  bool logprobs;
  int64_t top_logprobs;
  bool include_usage;
  bool parse_tools;  // the server's tool-call parser reads the output (tools given, not "none")
  std::vector<int32_t> prompt;
};

// Tool calls are parsed when the server has a parser, the request lists tools and tool_choice is
// "auto" (the default with tools) or absent; "none" leaves the text alone. Other choices need
// guided decoding, which vime serve does not do.
bool parses_tools(const ServeContext& ctx, const Json& body) {
  const Json* tools = body.find("tools");
  const bool has_tools = tools && tools->is_array() && tools->size() > 0;
  std::string choice = has_tools ? "auto" : "none";
  if (const Json* t = body.find("tool_choice"); t && !t->is_null()) {
    if (!t->is_string() || (t->as_string() != "auto" && t->as_string() != "none")) {
      throw BadRequest("tool_choice: vime serve supports \"auto\" and \"none\"");
    }
    choice = t->as_string();
  }
  return choice == "auto" && has_tools && !ctx.options.tool_call_parser.empty();
}

// The assistant message and finish reason of one finished choice.
std::pair<Json, Json> message_of(const ServeContext& ctx, const Chat& c, const GenerateResponse& r,
                                 size_t choice) {
  const std::string text = output_text(ctx, r, c.params);
  Json message = Json::Object{{"role", "assistant"},
                              {"content", text},
                              {"refusal", nullptr},
                              {"tool_calls", Json::array()}};
  Json finish = r.finish_reason;
  if (c.parse_tools) {
    auto parsed = parse_hermes_tool_calls(
        text, "chatcmpl-tool-" + c.id.substr(std::string_view("chatcmpl-").size()) + "-" +
                  std::to_string(choice) + "-");
    message["content"] = parsed.content;
    if (parsed.called()) {
      message["tool_calls"] = std::move(parsed.tool_calls);
      finish = "tool_calls";
    }
  }
  return {std::move(message), std::move(finish)};
}

Json chunk_json(const ServeContext& ctx, const Chat& c, Json choices) {
  Json out = Json::Object{{"id", c.id},
                          {"object", "chat.completion.chunk"},
                          {"created", c.created},
                          {"model", ctx.options.model_name},
                          {"choices", std::move(choices)}};
  if (c.include_usage) out["usage"] = nullptr;
  return out;
}

void stream_chat(ServeContext& ctx, const Chat& c, httplib::Response& res) {
  StreamFormat format;
  Json role = Json::Object{{"index", 0},
                           {"delta", Json::Object{{"role", "assistant"}, {"content", ""}}},
                           {"logprobs", nullptr},
                           {"finish_reason", nullptr}};
  format.first.push_back(chunk_json(ctx, c, Json::Array{role}));
  format.chunk = [&ctx, c](const StreamPiece& p) {
    Json delta = Json::object();
    if (!p.text.empty() || !p.end) delta["content"] = p.text;
    Json choice = Json::object();
    choice["index"] = 0;
    choice["delta"] = std::move(delta);
    choice["logprobs"] = c.logprobs ? chat_logprobs(ctx, p.ids, p.log_probs) : Json(nullptr);
    choice["finish_reason"] = p.end ? Json(p.end->finish_reason) : Json(nullptr);
    if (p.end) choice["stop_reason"] = stop_reason_of(ctx, *p.end, c.params);
    return chunk_json(ctx, c, Json::Array{choice});
  };
  format.every_token = c.logprobs;
  if (c.include_usage) {
    format.last = [&ctx, c](const GenerateResponse& r) {
      Json out = chunk_json(ctx, c, Json::array());
      out["usage"] = usage_json(static_cast<int64_t>(c.prompt.size()),
                                static_cast<int64_t>(r.output_ids.size()), r.cached_tokens);
      return std::vector<Json>{out};
    };
  }
  stream_generation(
      ctx, res,
      GenerateRequest{
          .input_ids = c.prompt, .sampling_params = c.params, .session_id = c.id, .group_id = {}},
      std::move(format));
}

// stream=true with the tool parser: the parser needs the whole output, so the answer is generated
// first and sent as the events a streaming client expects (role, content and tool_calls, finish,
// usage, [DONE]).
void stream_parsed_chat(ServeContext& ctx, const Chat& c, httplib::Response& res) {
  const GenerateResponse r = ctx.generate(GenerateRequest{
      .input_ids = c.prompt, .sampling_params = c.params, .session_id = c.id, .group_id = {}});
  auto [message, finish] = message_of(ctx, c, r, 0);
  Json delta = Json::Object{{"role", "assistant"}, {"content", message.at("content")}};
  Json calls = Json::array();
  for (size_t i = 0; i < message.at("tool_calls").size(); ++i) {
    Json call = message.at("tool_calls").at(i);
    call["index"] = static_cast<int64_t>(i);
    calls.push_back(std::move(call));
  }
  if (calls.size() > 0) delta["tool_calls"] = std::move(calls);
  auto choice = [&](Json d, Json reason) {
    return Json::Object{{"index", 0},
                        {"delta", std::move(d)},
                        {"logprobs", nullptr},
                        {"finish_reason", std::move(reason)}};
  };
  std::string events;
  auto add = [&events](const Json& chunk) { events += "data: " + chunk.dump() + "\n\n"; };
  add(chunk_json(ctx, c, Json::Array{choice(std::move(delta), nullptr)}));
  add(chunk_json(ctx, c, Json::Array{choice(Json::object(), finish)}));
  if (c.include_usage) {
    Json usage = chunk_json(ctx, c, Json::array());
    usage["usage"] = usage_json(static_cast<int64_t>(c.prompt.size()),
                                static_cast<int64_t>(r.output_ids.size()), r.cached_tokens);
    add(usage);
  }
  events += "data: [DONE]\n\n";
  res.set_content(events, "text/event-stream");
}

void chat_completions(ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  const Json body = parse_body(req);
  Chat c;
  c.prompt = chat_prompt(ctx.tokenizer, ctx.options.max_model_len, body);

  // Chat's logprobs is a bool and top_logprobs the count; the rest reads as /v1/completions.
  Json fields = body;
  c.logprobs = bool_field(body, "logprobs", false);
  c.top_logprobs = 0;
  if (const Json* top = body.find("top_logprobs"); top && !top->is_null()) {
    if (!top->is_int() || top->as_int() < 0 || top->as_int() > 20) {
      throw BadRequest("top_logprobs must be an integer in [0, 20]");
    }
    if (!c.logprobs) throw BadRequest("top_logprobs needs logprobs set to true");
    c.top_logprobs = top->as_int();
  }
  fields.as_object().erase("logprobs");
  // Without max_tokens, the rest of the context (vLLM's default for chat); the engine caps it.
  const int64_t room = ctx.options.max_model_len > 0
                           ? ctx.options.max_model_len - static_cast<int64_t>(c.prompt.size())
                           : std::numeric_limits<int32_t>::max();
  c.params = sampling_params_from(fields, std::max<int64_t>(room, 1));
  const auto prompt_logprobs = prompt_logprobs_from(body, bool_field(body, "stream"));
  c.include_usage = include_usage(body);
  c.id = new_id(ctx, "chatcmpl-");
  if (const Json* id = body.find("request_id"); id && id->is_string()) {
    c.id = "chatcmpl-" + id->as_string();
  }
  c.created = static_cast<int64_t>(std::time(nullptr));
  const int64_t n = choices_per_prompt(body);
  c.parse_tools = parses_tools(ctx, body);
  if (bool_field(body, "stream")) {
    if (n != 1) throw BadRequest("stream: vime serve streams one choice (n=1) at a time");
    if (c.top_logprobs > 0)
      throw BadRequest("stream: vime serve returns top_logprobs > 0 without stream only");
    if (c.parse_tools) {
      stream_parsed_chat(ctx, c, res);
    } else {
      stream_chat(ctx, c, res);
    }
    return;
  }

  std::vector<std::future<GenerateResponse>> pending;  // batched together by the engine
  std::deque<engine::TopLogProbs> tops;                // one per choice, filled by the engine
  engine::PromptLogProbs scored{prompt_logprobs.value_or(0), {}};  // with the first choice
  for (int64_t j = 0; j < n; ++j) {
    GenerateRequest g{c.prompt, params_of_choice(c.params, j), c.id, true, {}};
    auto* top = &tops.emplace_back(engine::TopLogProbs{c.top_logprobs, {}});
    auto* prompt = prompt_logprobs && j == 0 ? &scored : nullptr;
    pending.push_back(std::async(std::launch::async,
                                 [&ctx, g, top, prompt] { return ctx.generate(g, top, prompt); }));
  }
  Json choices = Json::array();
  int64_t completion_tokens = 0, cached = 0;
  Json weight_version = nullptr;
  for (size_t j = 0; j < pending.size(); ++j) {
    const GenerateResponse r = pending[j].get();
    auto [message, finish] = message_of(ctx, c, r, j);
    Json choice = Json::object();
    choice["index"] = static_cast<int64_t>(j);
    choice["message"] = std::move(message);
    choice["logprobs"] =
        c.logprobs ? chat_logprobs(ctx, r.output_ids, r.output_log_probs, tops[j].positions)
                   : Json(nullptr);
    choice["finish_reason"] = std::move(finish);
    choice["stop_reason"] = stop_reason_of(ctx, r, c.params);
    choices.push_back(std::move(choice));
    completion_tokens += static_cast<int64_t>(r.output_ids.size());
    if (j == 0) cached = r.cached_tokens;   // one prompt, counted once
    weight_version = weight_version_of(r);  // the weights of the choice that ended last
  }
  Json out = Json::object();
  out["id"] = c.id;
  out["object"] = "chat.completion";
  out["created"] = c.created;
  out["model"] = ctx.options.model_name;
  out["choices"] = std::move(choices);
  out["usage"] = usage_json(static_cast<int64_t>(c.prompt.size()), completion_tokens, cached);
  out["system_fingerprint"] = nullptr;
  out["prompt_logprobs"] = prompt_logprobs
                               ? prompt_logprobs_json(ctx, c.prompt, scored, /*as_ids=*/false)
                               : Json(nullptr);
  out["kv_transfer_params"] = nullptr;
  out["weight_version"] = weight_version;
  send_json(res, out);
}

}  // namespace

void add_chat_routes(httplib::Server& http, ServeContext& ctx) {
  http.Post("/v1/chat/completions", [&ctx](const httplib::Request& req, httplib::Response& res) {
    chat_completions(ctx, req, res);
  });
}

}  // namespace vime::serve
