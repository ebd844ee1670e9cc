#include "vime/engine/vllm_protocol.hpp"

#include <cmath>
#include <limits>

#include "vime/engine/routed_experts.hpp"
#include "vime/error.hpp"

namespace vime::engine {
namespace {

const Json* present(const Json& object, std::string_view key) {
  const Json* v = object.find(key);
  return v && !v->is_null() ? v : nullptr;
}

// Request-level fields, shared by both bodies (sampling_params of /inference/v1/generate are the
// top-level fields of /v1/completions).
void add_sampling_fields(const GenerateRequest& request, Json& out) {
  const SamplingParams& p = request.sampling_params;
  if (p.max_new_tokens > 0) out["max_tokens"] = p.max_new_tokens;
  out["min_tokens"] = p.min_new_tokens;
  out["temperature"] = p.temperature;
  out["top_p"] = p.top_p;
  out["top_k"] = p.top_k;
  out["stop"] = p.stop;
  out["stop_token_ids"] = p.stop_token_ids;
  out["skip_special_tokens"] = p.skip_special_tokens;
  out["include_stop_str_in_output"] = p.no_stop_trim;
  out["spaces_between_special_tokens"] = p.spaces_between_special_tokens;
  out["repetition_penalty"] = p.repetition_penalty;
  if (p.seed) out["seed"] = *p.seed;
  if (request.return_logprob) out["logprobs"] = 0;  // the sampled token's log-prob only
  if (p.extra.is_object()) {
    for (const auto& [key, value] : p.extra.as_object()) out[key] = value;
  }
}

float logprob_of(const Json* value) {
  if (value == nullptr || !value->is_number()) return std::numeric_limits<float>::quiet_NaN();
  return static_cast<float>(value->as_double());
}

std::vector<float> logprobs_of(const Json& choice) {
  std::vector<float> out;
  const Json* logprobs = present(choice, "logprobs");
  if (logprobs == nullptr) return out;
  if (const Json* content = present(*logprobs, "content")) {  // chat format (generate)
    for (const Json& entry : content->as_array()) out.push_back(logprob_of(entry.find("logprob")));
  } else if (const Json* tokens = present(*logprobs, "token_logprobs")) {  // completions
    for (const Json& v : tokens->as_array()) out.push_back(logprob_of(&v));
  }
  return out;
}

// Without choices[].token_ids (return_token_ids unsupported), the "token_id:<id>" labels that
// return_tokens_as_token_ids asks for.
std::vector<int32_t> ids_from_labels(const Json& choice, const std::string& where) {
  const Json* logprobs = present(choice, "logprobs");
  const Json* tokens = logprobs ? present(*logprobs, "tokens") : nullptr;
  if (tokens == nullptr) {
    throw Error(where + ": the response has no choices[0].token_ids (vLLM older than v0.10.2 " +
                "without return_token_ids support?)");
  }
  std::vector<int32_t> ids;
  for (const Json& label : tokens->as_array()) {
    const std::string& s = label.as_string();
    constexpr std::string_view kPrefix = "token_id:";
    if (s.rfind(kPrefix, 0) != 0) throw Error(where + ": token label \"" + s + "\" is no id");
    ids.push_back(static_cast<int32_t>(std::stol(s.substr(kPrefix.size()))));
  }
  return ids;
}

std::string version_string(const Json& v) { return v.is_string() ? v.as_string() : v.dump(); }

}  // namespace

Json vllm_sampling_params(const GenerateRequest& request) {
  Json out = Json::object();
  add_sampling_fields(request, out);
  return out;
}

Json generate_body(const GenerateRequest& request, const std::string& model) {
  Json body = Json::object();
  if (!model.empty()) body["model"] = model;
  body["token_ids"] = request.input_ids;
  body["sampling_params"] = vllm_sampling_params(request);
  return body;
}

Json completions_body(const GenerateRequest& request, const std::string& model) {
  Json body = Json::object();
  if (!model.empty()) body["model"] = model;
  body["prompt"] = request.input_ids;
  add_sampling_fields(request, body);
  body["return_token_ids"] = true;
  body["return_tokens_as_token_ids"] = true;
  return body;
}

std::string map_finish_reason(const Json& finish_reason) {
  if (!finish_reason.is_string()) return "stop";
  const std::string& r = finish_reason.as_string();
  if (r == "length") return "length";
  if (r == "abort" || r == "cancelled") return "abort";
  if (r == "error") return "error";
  return "stop";
}

GenerateResponse parse_generate_response(const Json& body, const std::string& where) {
  try {
    const Json& choices = body.at("choices");
    if (choices.size() == 0) throw Error("\"choices\" is empty");
    const Json& choice = choices.at(size_t{0});
    GenerateResponse r;
    if (const Json* ids = present(choice, "token_ids")) {
      for (const Json& id : ids->as_array())
        r.output_ids.push_back(static_cast<int32_t>(id.as_int()));
    } else {
      r.output_ids = ids_from_labels(choice, where);
    }
    r.output_log_probs = logprobs_of(choice);
    r.output_log_probs.resize(r.output_ids.size(), std::numeric_limits<float>::quiet_NaN());
    r.finish_reason =
        map_finish_reason(choice.find("finish_reason") ? choice.at("finish_reason") : Json());
    if (const Json* usage = present(body, "usage")) {
      if (const Json* p = present(*usage, "prompt_tokens")) r.prompt_tokens = p->as_int();
      if (const Json* details = present(*usage, "prompt_tokens_details")) {
        if (const Json* c = present(*details, "cached_tokens")) r.cached_tokens = c->as_int();
      }
    }
    // vLLM's choices[0].routed_experts; SGLang's meta_info.routed_experts.
    if (const Json* re = present(choice, "routed_experts")) {
      r.routed_experts = decode_routed_experts(*re, where);
    } else if (const Json* meta = present(body, "meta_info")) {
      if (const Json* mre = present(*meta, "routed_experts"))
        r.routed_experts = decode_routed_experts(*mre, where);
    }
    if (const Json* v = present(body, "weight_version")) {
      r.weight_version = version_string(*v);
    } else if (const Json* cv = present(choice, "weight_version")) {
      r.weight_version = version_string(*cv);
    }
    return r;
  } catch (const Error& e) {
    const std::string message = e.what();
    if (message.rfind(where, 0) == 0) throw;
    throw Error(where + ": not a vLLM generation response (" + message + ")");
  }
}

std::string vllm_error_message(const Json& body) {
  if (const Json* error = present(body, "error")) {
    if (error->is_string()) return error->as_string();
    if (const Json* m = present(*error, "message"); m && m->is_string()) return m->as_string();
    return error->dump();
  }
  if (const Json* m = present(body, "message"); m && m->is_string()) return m->as_string();
  if (const Json* d = present(body, "detail")) return d->is_string() ? d->as_string() : d->dump();
  return "";
}

}  // namespace vime::engine
