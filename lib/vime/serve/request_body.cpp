#include "vime/serve/request_body.hpp"

#include <httplib.h>

#include <algorithm>
#include <map>
#include <mutex>

namespace vime::serve {
namespace {

const Json* present(const Json& fields, std::string_view key) {
  const Json* v = fields.find(key);
  return v && !v->is_null() ? v : nullptr;
}

template <class F>
auto field(const Json& fields, std::string_view key, F read) -> decltype(read(fields)) {
  try {
    return read(*present(fields, key));
  } catch (const Error& e) {
    throw BadRequest(std::string(key) + ": " + e.what());
  }
}

// A list of {"type": "text", "text": ...} parts as one string, as vLLM hands "string"-format
// templates (joined by newlines).
std::string text_of_parts(const Json& parts, const std::string& where) {
  std::string text;
  for (size_t j = 0; j < parts.size(); ++j) {
    const Json& part = parts.at(j);
    const std::string at = where + "[" + std::to_string(j) + "]";
    const Json* type = part.is_object() ? part.find("type") : nullptr;
    if (!type || !type->is_string()) throw BadRequest(at + " must be an object with a type");
    if (type->as_string() != "text") {
      throw BadRequest(at + ": content parts of type '" + type->as_string() +
                       "' are not supported (only 'text')");
    }
    const Json* t = part.find("text");
    if (!t || !t->is_string()) throw BadRequest(at + ".text must be a string");
    if (j > 0) text += "\n";
    text += t->as_string();
  }
  return text;
}

// The messages as the chat template takes them: roles checked, content parts joined.
Json messages_of(const Json& body) {
  const Json* messages = body.find("messages");
  if (!messages || messages->is_null()) throw BadRequest("messages is required");
  if (!messages->is_array() || messages->size() == 0) {
    throw BadRequest("messages must be a non-empty list of {role, content} objects");
  }
  Json out = Json::array();
  for (size_t i = 0; i < messages->size(); ++i) {
    const std::string at = "messages[" + std::to_string(i) + "]";
    Json m = messages->at(i);
    if (!m.is_object()) throw BadRequest(at + " must be an object with role and content");
    const Json* role = m.find("role");
    if (!role || !role->is_string()) throw BadRequest(at + ".role is required");
    const std::string& r = role->as_string();
    if (r != "system" && r != "developer" && r != "user" && r != "assistant" && r != "tool") {
      throw BadRequest(at + ".role '" + r +
                       "' is not one of system, developer, user, assistant, tool");
    }
    const Json* content = m.find("content");
    if (content && content->is_array()) {
      m["content"] = text_of_parts(*content, at + ".content");
    } else if (content && !content->is_string() && !content->is_null()) {
      throw BadRequest(at + ".content must be a string or a list of text parts");
    } else if (!content && r != "assistant") {
      throw BadRequest(at + ".content is required");
    }
    out.push_back(std::move(m));
  }
  return out;
}

// transformers' continue_final_message: the rendered chat ends where the final message's content
// does, so the model continues it.
std::string cut_after_final_message(const std::string& rendered, const Json& messages) {
  const Json* content = messages.at(messages.size() - 1).find("content");
  const std::string final = content && content->is_string() ? content->as_string() : "";
  if (auto at = rendered.rfind(final); !final.empty() && at != std::string::npos) {
    return rendered.substr(0, at + final.size());
  }
  const size_t b = final.find_first_not_of(" \t\n\r"), e = final.find_last_not_of(" \t\n\r");
  const std::string stripped = b == std::string::npos ? "" : final.substr(b, e - b + 1);
  auto at = rendered.rfind(stripped);
  if (stripped.empty() || at == std::string::npos) {
    throw BadRequest(
        "continue_final_message: the final message does not appear in the chat the template "
        "renders");
  }
  return rendered.substr(0, at + stripped.size());
}

std::string render(const Tokenizer& tokenizer, const Json& body, const Json& messages) {
  const bool continue_final = bool_field(body, "continue_final_message", false);
  const bool generation_prompt = bool_field(body, "add_generation_prompt", !continue_final);
  if (continue_final && generation_prompt) {
    throw BadRequest("continue_final_message and add_generation_prompt cannot both be true");
  }
  Json tools = nullptr;
  if (const Json* t = body.find("tools"); t && !t->is_null()) {
    if (!t->is_array()) throw BadRequest("tools must be a list of tool definitions");
    if (t->size() > 0) tools = *t;
  }
  Json kwargs = Json::object();
  if (const Json* kw = body.find("chat_template_kwargs"); kw && !kw->is_null()) {
    if (!kw->is_object()) throw BadRequest("chat_template_kwargs must be an object");
    kwargs = *kw;
  }
  std::string text;
  try {
    text = tokenizer.apply_chat_template(messages, tools, generation_prompt, kwargs);
  } catch (const Error& e) {
    const std::string why = e.what();
    if (why.find("no chat template") != std::string::npos) {
      throw BadRequest(
          "this model has no chat template, so /v1/chat/completions cannot render messages; "
          "send a rendered prompt to /v1/completions (" +
          why + ")");
    }
    throw BadRequest("messages: the model's chat template failed: " + why);
  }
  return continue_final ? cut_after_final_message(text, messages) : text;
}

}  // namespace

Json parse_body(std::string_view text) {
  Json body;
  try {
    body = Json::parse(text, "request body");
  } catch (const Error& e) {
    throw BadRequest(e.what());
  }
  if (!body.is_object()) throw BadRequest("the request body must be a JSON object");
  return body;
}

Json parse_body(const httplib::Request& req) { return parse_body(std::string_view(req.body)); }

bool bool_field(const Json& body, std::string_view key, bool fallback) {
  const Json* v = body.find(key);
  if (!v || v->is_null()) return fallback;
  if (!v->is_bool()) throw BadRequest(std::string(key) + " must be true or false");
  return v->as_bool();
}

void send_json(httplib::Response& res, const Json& body, int status) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  const char* type = status == 400   ? "BadRequestError"
                     : status == 404 ? "NotFoundError"
                     : status == 411 ? "LengthRequiredError"
                     : status == 413 ? "RequestEntityTooLargeError"
                     : status == 414 ? "RequestURITooLongError"
                     : status == 503 ? "ServiceUnavailableError"
                     : status < 500  ? "BadRequestError"
                                     : "InternalServerError";
  Json error =
      Json::Object{{"message", message}, {"type", type}, {"param", nullptr}, {"code", status}};
  send_json(res, Json::Object{{"error", error}}, status);
}

SamplingParams sampling_params_from(const Json& f, int64_t default_max_tokens) {
  SamplingParams p;
  p.max_new_tokens = default_max_tokens;
  p.no_stop_trim = false;
  p.skip_special_tokens = true;
  auto num = [](const Json& v) { return v.as_double(); };
  auto integer = [](const Json& v) { return v.as_int(); };
  auto boolean = [](const Json& v) { return v.as_bool(); };
  if (present(f, "max_completion_tokens")) {
    p.max_new_tokens = field(f, "max_completion_tokens", integer);
    if (p.max_new_tokens < 1) throw BadRequest("max_completion_tokens must be at least 1");
  } else if (present(f, "max_tokens")) {
    p.max_new_tokens = field(f, "max_tokens", integer);
  }
  if (present(f, "min_tokens")) p.min_new_tokens = field(f, "min_tokens", integer);
  if (present(f, "temperature")) p.temperature = field(f, "temperature", num);
  if (present(f, "top_p")) p.top_p = field(f, "top_p", num);
  if (present(f, "top_k")) p.top_k = field(f, "top_k", integer);
  if (p.top_k == 0) p.top_k = -1;  // vLLM: 0 or -1 disables top-k
  if (present(f, "repetition_penalty")) {
    p.repetition_penalty = field(f, "repetition_penalty", num);
  }
  if (present(f, "seed")) p.seed = field(f, "seed", integer);
  if (present(f, "skip_special_tokens")) {
    p.skip_special_tokens = field(f, "skip_special_tokens", boolean);
  }
  if (present(f, "include_stop_str_in_output")) {
    p.no_stop_trim = field(f, "include_stop_str_in_output", boolean);
  }
  if (const Json* stop = present(f, "stop")) {
    if (stop->is_string()) {
      p.stop.push_back(stop->as_string());
    } else {
      field(f, "stop", [&](const Json& v) {
        for (const auto& s : v.as_array()) p.stop.push_back(s.as_string());
        return 0;
      });
    }
  }
  if (present(f, "stop_token_ids")) {
    field(f, "stop_token_ids", [&](const Json& v) {
      for (const auto& id : v.as_array())
        p.stop_token_ids.push_back(static_cast<int32_t>(id.as_int()));
      return 0;
    });
  }
  if (p.max_new_tokens < 1) throw BadRequest("max_tokens must be at least 1");
  if (p.min_new_tokens < 0 || p.min_new_tokens > p.max_new_tokens) {
    throw BadRequest("min_tokens must be in [0, max_tokens]");
  }
  if (p.temperature < 0) throw BadRequest("temperature must be non-negative");
  if (!(p.top_p > 0 && p.top_p <= 1)) throw BadRequest("top_p must be in (0, 1]");
  if (p.top_k < -1) throw BadRequest("top_k must be -1 (disable), or at least 1");
  for (const char* key : {"min_p", "ignore_eos"}) {  // the engine reads these from `extra`
    if (const Json* v = present(f, key)) p.extra[key] = *v;
  }
  // vLLM's default --max-logprobs: at most 20 alternatives per position.
  if (present(f, "logprobs")) {
    const int64_t n = field(f, "logprobs", integer);
    if (n < 0 || n > 20) throw BadRequest("logprobs must be an integer in [0, 20]");
  }
  return p;
}

std::optional<int64_t> prompt_logprobs_from(const Json& fields, bool stream) {
  const Json* v = fields.find("prompt_logprobs");
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_int() || v->as_int() < 0 || v->as_int() > 20)
    throw BadRequest("prompt_logprobs must be an integer in [0, 20]");
  if (stream) throw BadRequest("`prompt_logprobs` are not available when `stream=True`.");
  return v->as_int();
}

int64_t choices_per_prompt(const Json& body) {
  const Json* n = body.find("n");
  if (!n || n->is_null()) return 1;
  if (!n->is_int() || n->as_int() < 1 || n->as_int() > kMaxChoices) {
    throw BadRequest("n must be an integer in [1, " + std::to_string(kMaxChoices) + "]");
  }
  return n->as_int();
}

SamplingParams params_of_choice(SamplingParams params, int64_t choice) {
  if (params.seed) *params.seed += choice;
  return params;
}

std::vector<int32_t> token_ids_from(const Json& value, const std::string& name, int64_t vocab) {
  if (!value.is_array() || value.size() == 0) {
    throw BadRequest(name + " must be a non-empty list of token ids");
  }
  std::vector<int32_t> ids;
  for (const auto& v : value.as_array()) {
    if (!v.is_int() || v.as_int() < 0 || v.as_int() >= vocab) {
      throw BadRequest(name + " holds " + v.dump() + ", not a token id in [0, " +
                       std::to_string(vocab) + ")");
    }
    ids.push_back(static_cast<int32_t>(v.as_int()));
  }
  return ids;
}

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

void check_prompt_bytes(const Tokenizer& tokenizer, int64_t max_model_len, size_t bytes,
                        std::string_view what) {
  const int64_t context = max_model_len;
  if (context <= 0) return;
  const size_t per_token = max_token_bytes(tokenizer);
  const size_t at_least = (bytes + per_token - 1) / per_token;
  if (at_least <= static_cast<size_t>(context)) return;
  throw BadRequest("This model's maximum context length is " + std::to_string(context) +
                   " tokens. However, your " + std::string(what) + " (" + std::to_string(bytes) +
                   " bytes) holds at least " + std::to_string(at_least) +
                   " tokens. Please reduce the length of the " + std::string(what) + ".");
}

std::vector<std::vector<int32_t>> completion_prompts(const Tokenizer& tokenizer,
                                                     int64_t max_model_len, const Json& body) {
  const Json* prompt = body.find("prompt");
  if (!prompt || prompt->is_null()) throw BadRequest("prompt is required");
  const int64_t vocab = tokenizer.vocab_size();
  bool add_special = true;
  if (const Json* a = body.find("add_special_tokens"); a && a->is_bool())
    add_special = a->as_bool();
  auto encode = [&](const Json& text) {
    check_prompt_bytes(tokenizer, max_model_len, text.as_string().size(), "prompt");
    auto ids = tokenizer.encode(text.as_string(), add_special);
    if (ids.empty()) throw BadRequest("prompt encodes to no tokens");
    return ids;
  };
  if (prompt->is_string()) return {encode(*prompt)};
  if (!prompt->is_array() || prompt->size() == 0) {
    throw BadRequest("prompt must be a string, a list of token ids, or a list of either");
  }
  const Json& first = prompt->at(size_t{0});
  if (first.is_int()) return {token_ids_from(*prompt, "prompt", vocab)};
  std::vector<std::vector<int32_t>> out;
  for (const auto& p : prompt->as_array()) {
    if (p.is_string()) {
      out.push_back(encode(p));
    } else {
      out.push_back(token_ids_from(p, "prompt", vocab));
    }
  }
  return out;
}

Json chat_messages(const Json& body) { return messages_of(body); }

std::vector<int32_t> chat_prompt(const Tokenizer& tokenizer, int64_t max_model_len,
                                 const Json& body) {
  const Json messages = messages_of(body);
  const std::string rendered = render(tokenizer, body, messages);
  check_prompt_bytes(tokenizer, max_model_len, rendered.size(), "messages");
  auto ids = tokenizer.encode(rendered, bool_field(body, "add_special_tokens", false));
  if (ids.empty()) throw BadRequest("messages render to no tokens");
  return ids;
}

}  // namespace vime::serve
