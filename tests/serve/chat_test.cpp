// /v1/chat/completions and stream=true over real HTTP on 127.0.0.1: an in-process `vime serve`
// around a NativeEngine on the tiny CPU model with the real Qwen3 tokenizer and its chat template.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "serve/served_engine.hpp"
#include "vime/json.hpp"

using vime::Json;

namespace {

const vime::Tokenizer& qwen() { return vime::test::served_tokenizer(); }

httplib::Client client_of(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(120, 0);
  return c;
}

Json post(int port, const std::string& path, const Json& body, int expect = 200) {
  auto res = client_of(port).Post(path.c_str(), body.dump(), "application/json");
  REQUIRE(res);
  CAPTURE(path, body.dump(), res->body);
  REQUIRE(res->status == expect);
  return Json::parse(res->body);
}

// The `data:` payloads of an event stream, in order ("[DONE]" as it is).
std::vector<std::string> events_of(const std::string& body) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < body.size()) {
    const size_t end = body.find("\n\n", at);
    REQUIRE(end != std::string::npos);  // every event ends with a blank line
    const std::string event = body.substr(at, end - at);
    REQUIRE(event.rfind("data: ", 0) == 0);
    out.push_back(event.substr(6));
    at = end + 2;
  }
  return out;
}

// A streamed request: its JSON chunks, after checking the stream's framing and [DONE] at the end.
std::vector<Json> stream(int port, const std::string& path, const Json& body) {
  auto res = client_of(port).Post(path.c_str(), body.dump(), "application/json");
  REQUIRE(res);
  CAPTURE(res->body);
  REQUIRE(res->status == 200);
  CHECK(res->get_header_value("Content-Type").rfind("text/event-stream", 0) == 0);
  const auto events = events_of(res->body);
  REQUIRE(!events.empty());
  CHECK(events.back() == "[DONE]");
  std::vector<Json> chunks;
  for (size_t i = 0; i + 1 < events.size(); ++i) chunks.push_back(Json::parse(events[i]));
  return chunks;
}

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

Json messages() {
  return Json::Array{
      Json::Object{{"role", "system"}, {"content", "You are terse."}},
      Json::Object{{"role", "user"},
                   {"content", Json::Array{Json::Object{{"type", "text"}, {"text", "What is"}},
                                           Json::Object{{"type", "text"}, {"text", "2 + 2?"}}}}}};
}

// What /tokenize makes of a chat (the same template the chat route must use).
std::vector<int32_t> tokenized(int port, Json body) {
  std::vector<int32_t> ids;
  const Json r = post(port, "/tokenize", body);
  for (const auto& v : r.at("tokens").as_array()) ids.push_back(static_cast<int32_t>(v.as_int()));
  return ids;
}

const Json& first_choice(const Json& r) { return r.at("choices").at(size_t{0}); }

}  // namespace

TEST_CASE("chat: the prompt is the chat template's and greedy output equals /v1/completions",
          "[serve_chat]") {
  vime::test::ServedEngine s;
  const Json chat = Json::Object{
      {"model", "tiny-qwen3"}, {"messages", messages()}, {"max_tokens", 12}, {"temperature", 0.0}};
  const Json r = post(s.port, "/v1/chat/completions", chat);
  // The text parts join with a newline, as vLLM hands them to a string-content template.
  const Json plain = Json::Array{messages().at(size_t{0}),
                                 Json::Object{{"role", "user"}, {"content", "What is\n2 + 2?"}}};
  const std::string rendered = qwen().apply_chat_template(plain, nullptr, true, Json::object());
  const auto prompt =
      tokenized(s.port, Json::Object{{"prompt", rendered}, {"add_special_tokens", false}});
  CHECK(prompt == tokenized(s.port, Json::Object{{"messages", plain}}));
  CHECK(r.at("id").as_string().rfind("chatcmpl-", 0) == 0);
  CHECK(r.at("object").as_string() == "chat.completion");
  CHECK(r.at("model").as_string() == "tiny-qwen3");
  CHECK(r.at("created").as_int() > 0);
  REQUIRE(r.at("choices").size() == 1);
  const Json& c = first_choice(r);
  CHECK(c.at("index").as_int() == 0);
  CHECK(c.at("message").at("role").as_string() == "assistant");
  CHECK(c.at("logprobs").is_null());
  const Json& usage = r.at("usage");
  CHECK(usage.at("prompt_tokens").as_int() == static_cast<int64_t>(prompt.size()));
  CHECK(usage.at("total_tokens").as_int() ==
        usage.at("prompt_tokens").as_int() + usage.at("completion_tokens").as_int());

  const Json completion = post(s.port, "/v1/completions",
                               Json::Object{{"prompt", prompt},
                                            {"max_tokens", 12},
                                            {"temperature", 0.0},
                                            {"return_token_ids", true}});
  const Json& cc = first_choice(completion);
  CHECK(c.at("message").at("content").as_string() == cc.at("text").as_string());
  CHECK(c.at("finish_reason").as_string() == cc.at("finish_reason").as_string());
  CHECK(usage.at("completion_tokens").as_int() == static_cast<int64_t>(cc.at("token_ids").size()));

  SECTION("max_completion_tokens, tools and chat_template_kwargs reach the engine and template") {
    const Json tool =
        Json::Object{{"type", "function"},
                     {"function", Json::Object{{"name", "add"},
                                               {"description", "Adds two numbers"},
                                               {"parameters", Json::Object{{"type", "object"}}}}}};
    Json body = chat;
    body["max_completion_tokens"] = 3;
    body["tools"] = Json::Array{tool};
    body["chat_template_kwargs"] = Json::Object{{"enable_thinking", false}};
    const Json t = post(s.port, "/v1/chat/completions", body);
    const auto expected = tokenized(
        s.port, Json::Object{{"messages", plain},
                             {"tools", Json::Array{tool}},
                             {"chat_template_kwargs", Json::Object{{"enable_thinking", false}}}});
    CHECK(expected.size() > prompt.size() + 10);  // the tool schema and the empty think block
    CHECK(t.at("usage").at("prompt_tokens").as_int() == static_cast<int64_t>(expected.size()));
    CHECK(t.at("usage").at("completion_tokens").as_int() == 3);
    CHECK(first_choice(t).at("finish_reason").as_string() == "length");
  }
  SECTION("continue_final_message ends the prompt inside the assistant's message") {
    Json history = plain;
    history.push_back(Json::Object{{"role", "assistant"}, {"content", "The answer is"}});
    const std::string full = qwen().apply_chat_template(history, nullptr, false, Json::object());
    const std::string cut = full.substr(0, full.rfind("The answer is") + 13);
    REQUIRE(cut.size() < full.size());
    const Json t = post(s.port, "/v1/chat/completions",
                        Json::Object{{"messages", history},
                                     {"add_generation_prompt", false},
                                     {"continue_final_message", true},
                                     {"max_tokens", 2}});
    CHECK(t.at("usage").at("prompt_tokens").as_int() ==
          static_cast<int64_t>(qwen().encode(cut).size()));
  }
}

TEST_CASE("chat: logprobs come in the chat format", "[serve_chat]") {
  vime::test::ServedEngine s;
  Json body = Json::Object{{"messages", messages()},
                           {"max_tokens", 6},
                           {"temperature", 0.0},
                           {"logprobs", true},
                           {"top_logprobs", 2}};
  const Json r = post(s.port, "/v1/chat/completions", body);
  const Json& content = first_choice(r).at("logprobs").at("content");
  REQUIRE(content.size() == 6);
  std::string text;
  for (const auto& entry : content.as_array()) {
    const std::string token = entry.at("token").as_string();
    text += token;
    CHECK(entry.at("logprob").as_double() <= 0.0);
    REQUIRE(entry.at("bytes").size() == token.size());
    for (size_t i = 0; i < token.size(); ++i)
      CHECK(entry.at("bytes").at(i).as_int() == static_cast<unsigned char>(token[i]));
    // Greedy: the sampled token heads the 2 most likely ones, the second is no likelier.
    const Json& top = entry.at("top_logprobs");
    REQUIRE(top.size() == 2);
    CHECK(top.at(size_t{0}).at("token").as_string() == token);
    CHECK(top.at(size_t{0}).at("logprob").as_double() == entry.at("logprob").as_double());
    CHECK(top.at(size_t{1}).at("token").as_string() != token);
    CHECK(top.at(size_t{1}).at("logprob").as_double() <= entry.at("logprob").as_double());
    CHECK(top.at(size_t{1}).at("bytes").size() == top.at(size_t{1}).at("token").as_string().size());
  }
  if (valid_utf8(text)) CHECK(text == first_choice(r).at("message").at("content").as_string());
  body["top_logprobs"] = 0;
  const Json none = post(s.port, "/v1/chat/completions", body);
  CHECK(first_choice(none).at("logprobs").at("content").at(size_t{0}).at("top_logprobs").size() ==
        0);
}

TEST_CASE("chat: n choices of one conversation, seeded ones differ and repeat", "[serve_chat]") {
  vime::test::ServedEngine s;
  const Json body = Json::Object{
      {"messages", messages()}, {"n", 3}, {"max_tokens", 8}, {"temperature", 1.0}, {"seed", 11}};
  const Json r = post(s.port, "/v1/chat/completions", body);
  const auto& choices = r.at("choices").as_array();
  REQUIRE(choices.size() == 3);
  for (size_t j = 0; j < 3; ++j) CHECK(choices[j].at("index").as_int() == int64_t(j));
  CHECK(choices[0].at("message") != choices[1].at("message"));
  CHECK(choices[1].at("message") != choices[2].at("message"));
  CHECK(post(s.port, "/v1/chat/completions", body).at("choices") == r.at("choices"));
  const Json single =
      post(s.port, "/v1/chat/completions",
           Json::Object{
               {"messages", messages()}, {"max_tokens", 8}, {"temperature", 1.0}, {"seed", 11}});
  CHECK(first_choice(single).at("message") == choices[0].at("message"));  // choice 0: seed 11
  CHECK(r.at("usage").at("prompt_tokens") == single.at("usage").at("prompt_tokens"));
}

TEST_CASE("chat: stream=true sends role, content deltas, finish_reason, usage and [DONE]",
          "[serve_chat]") {
  vime::test::ServedEngine s;
  Json body = Json::Object{{"messages", messages()}, {"max_tokens", 24}, {"temperature", 0.0}};
  const Json whole = post(s.port, "/v1/chat/completions", body);
  const std::string expected = first_choice(whole).at("message").at("content").as_string();
  CHECK(whole.at("usage").at("prompt_tokens_details").at("cached_tokens").as_int() == 0);

  // The same prompt again finds its prefix cached (counted in usage); reset, so that the stream's
  // usage and log-probs equal the first answer's exactly.
  const Json again = post(s.port, "/v1/chat/completions", body);
  CHECK(again.at("usage").at("prompt_tokens_details").at("cached_tokens").as_int() ==
        whole.at("usage").at("prompt_tokens").as_int() - 1);
  CHECK(first_choice(again).at("message").at("content").as_string() == expected);
  s.engine.reset_prefix_cache();
  body["stream"] = true;
  body["stream_options"] = Json::Object{{"include_usage", true}};
  const auto chunks = stream(s.port, "/v1/chat/completions", body);
  REQUIRE(chunks.size() >= 3);  // role, content..., usage
  const std::string id = chunks[0].at("id").as_string();
  CHECK(id.rfind("chatcmpl-", 0) == 0);
  const Json& role = first_choice(chunks[0]).at("delta");
  CHECK(role.at("role").as_string() == "assistant");
  std::string text;
  for (size_t i = 0; i + 1 < chunks.size(); ++i) {
    const Json& chunk = chunks[i];
    CHECK(chunk.at("object").as_string() == "chat.completion.chunk");
    CHECK(chunk.at("id").as_string() == id);
    CHECK(chunk.at("usage").is_null());
    const Json& choice = first_choice(chunk);
    if (const Json* content = choice.at("delta").find("content")) {
      CHECK(valid_utf8(content->as_string()));
      text += content->as_string();
    }
    const bool last = i + 2 == chunks.size();
    CHECK(choice.at("finish_reason").is_null() == !last);
    if (last) {
      CHECK(choice.at("finish_reason").as_string() ==
            first_choice(whole).at("finish_reason").as_string());
    }
  }
  CHECK(text == expected);
  const Json& usage_chunk = chunks.back();
  CHECK(usage_chunk.at("choices").size() == 0);
  CHECK(usage_chunk.at("usage") == whole.at("usage"));

  SECTION("text that could start a stop string is held back, cut at whole characters") {
    // The greedy output holds multi-byte characters: holding back 24 bytes cuts inside some.
    Json held = body;
    held["stop"] = Json::Array{Json("<a stop string never met>")};
    std::string streamed;
    size_t deltas = 0;
    for (const auto& chunk : stream(s.port, "/v1/chat/completions", held)) {
      if (chunk.at("choices").size() == 0) continue;
      if (const Json* content = first_choice(chunk).at("delta").find("content")) {
        CHECK(valid_utf8(content->as_string()));
        streamed += content->as_string();
        deltas += !content->as_string().empty();
      }
    }
    CHECK(streamed == expected);
    CHECK(deltas > 2);
  }
  SECTION("a stop string never leaks into the stream") {
    const auto ids = qwen().encode(expected);
    std::string stop;  // a piece of the greedy output from its middle, whole characters
    for (size_t i = ids.size() / 2; i + 1 < ids.size() && stop.empty(); ++i) {
      std::string piece = qwen().decode(std::vector<int32_t>{ids[i], ids[i + 1]});
      const size_t at = expected.find(piece);
      if (valid_utf8(piece) && piece.size() >= 2 && at != std::string::npos && at > 0) stop = piece;
    }
    REQUIRE(!stop.empty());
    Json stopped = Json::Object{{"messages", messages()},
                                {"max_tokens", 24},
                                {"temperature", 0.0},
                                {"stop", Json::Array{Json(stop)}}};
    const Json w = post(s.port, "/v1/chat/completions", stopped);
    CHECK(first_choice(w).at("finish_reason").as_string() == "stop");
    CHECK(first_choice(w).at("stop_reason").as_string() == stop);
    stopped["stream"] = true;
    std::string streamed;
    const auto parts = stream(s.port, "/v1/chat/completions", stopped);
    for (const auto& chunk : parts) {
      if (const Json* content = first_choice(chunk).at("delta").find("content"))
        streamed += content->as_string();
    }
    CHECK(streamed == first_choice(w).at("message").at("content").as_string());
    CHECK(first_choice(parts.back()).at("finish_reason").as_string() == "stop");
  }
}

TEST_CASE("chat: NativeEngine::submit's hook sees each token as sampled and can abort",
          "[serve_chat]") {
  vime::engine::NativeEngine engine(vime::test::served_model(), &qwen(), {});
  const auto prompt = qwen().encode("Once upon a time");
  std::vector<int32_t> seen;
  std::vector<float> log_probs;
  std::vector<std::string> reasons;
  auto done = engine.submit(vime::test::make_request(prompt, 7),
                            [&](int32_t id, float lp, const char* reason) {
                              seen.push_back(id);
                              log_probs.push_back(lp);
                              reasons.push_back(reason ? reason : "");
                              return true;
                            });
  const auto r = done.get();
  CHECK(seen == r.output_ids);
  CHECK(log_probs == r.output_log_probs);
  REQUIRE(reasons.size() == 7);
  CHECK(reasons.back() == "length");
  CHECK(std::count(reasons.begin(), reasons.end(), "") == 6);

  int calls = 0;
  auto request = vime::test::make_request(prompt, 50);
  request.sampling_params.extra["ignore_eos"] = true;
  const auto aborted = engine
                           .submit(request,
                                   [&](int32_t, float, const char*) {
                                     return ++calls < 3;  // the client leaves at the third token
                                   })
                           .get();
  CHECK(aborted.finish_reason == "abort");
  CHECK(aborted.output_ids.size() == 3);
  CHECK(calls == 3);
}

TEST_CASE("chat: /v1/completions streams text_completion chunks with logprobs", "[serve_chat]") {
  vime::test::ServedEngine s;
  Json body = Json::Object{{"prompt", qwen().encode("Once upon a time")},
                           {"max_tokens", 10},
                           {"temperature", 0.0},
                           {"logprobs", 0},
                           {"return_tokens_as_token_ids", true}};
  const Json whole = post(s.port, "/v1/completions", body);
  s.engine.reset_prefix_cache();  // the stream prefills as the first request did: equal log-probs
  body["stream"] = true;
  body["stream_options"] = Json::Object{{"include_usage", true}};
  const auto chunks = stream(s.port, "/v1/completions", body);
  REQUIRE(chunks.size() >= 2);
  std::string text;
  Json tokens = Json::array(), logprobs = Json::array(), offsets = Json::array();
  for (size_t i = 0; i + 1 < chunks.size(); ++i) {
    CHECK(chunks[i].at("object").as_string() == "text_completion");
    const Json& c = first_choice(chunks[i]);
    text += c.at("text").as_string();
    for (const auto& t : c.at("logprobs").at("tokens").as_array()) tokens.push_back(t);
    for (const auto& l : c.at("logprobs").at("token_logprobs").as_array()) logprobs.push_back(l);
    for (const auto& o : c.at("logprobs").at("text_offset").as_array()) offsets.push_back(o);
    CHECK(c.at("finish_reason").is_null() == (i + 2 < chunks.size()));
  }
  const Json& w = first_choice(whole);
  CHECK(text == w.at("text").as_string());
  CHECK(tokens == w.at("logprobs").at("tokens"));
  CHECK(logprobs == w.at("logprobs").at("token_logprobs"));
  CHECK(offsets == w.at("logprobs").at("text_offset"));
  CHECK(first_choice(chunks[chunks.size() - 2]).at("finish_reason").as_string() == "length");
  CHECK(chunks.back().at("usage") == whole.at("usage"));
  CHECK(chunks.back().at("choices").size() == 0);
}

TEST_CASE("chat: a client that disconnects mid-stream aborts its request", "[serve_chat]") {
  vime::test::ServedEngine s;
  const std::string body = Json(Json::Object{{"messages", messages()},
                                             {"max_tokens", 900},
                                             {"ignore_eos", true},
                                             {"stream", true}})
                               .dump();
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(s.port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  const std::string request =
      "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  REQUIRE(::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size()));
  std::string received;
  char buffer[4096];
  size_t events = 0;
  while (events < 4) {  // the role chunk and three content chunks
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    REQUIRE(n > 0);
    received.append(buffer, static_cast<size_t>(n));
    events = 0;
    for (size_t at = received.find("data: "); at != std::string::npos;
         at = received.find("data: ", at + 1))
      ++events;
  }
  CHECK(received.find("text/event-stream") != std::string::npos);
  CHECK(s.engine.stats().running == 1);  // the chunks came while it still decodes
  ::close(fd);

  for (int i = 0; i < 2000 && s.engine.stats().running + s.engine.stats().queued > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(s.engine.stats().running == 0);
  CHECK(s.engine.stats().generated_tokens < 900);
  auto metrics = client_of(s.port).Get("/metrics");
  REQUIRE(metrics);
  CHECK_THAT(metrics->body, Catch::Contains("finished_reason=\"abort\"} 1\n"));
  const Json next = post(s.port, "/v1/chat/completions",
                         Json::Object{{"messages", messages()}, {"max_tokens", 3}});
  CHECK(first_choice(next).at("finish_reason").as_string() == "length");
}

TEST_CASE("chat: bad requests are 400 naming what is wrong", "[serve_chat]") {
  vime::test::ServedEngine s;
  const Json user = Json::Object{{"role", "user"}, {"content", "hi"}};
  const std::vector<std::pair<Json, std::string>> cases = {
      {Json::Object{{"max_tokens", 3}}, "messages is required"},
      {Json::Object{{"messages", "hi"}}, "messages must be"},
      {Json::Object{{"messages", Json::array()}}, "messages must be"},
      {Json::Object{{"messages", Json::Array{Json::Object{{"role", "robot"}, {"content", "x"}}}}},
       "messages[0].role 'robot'"},
      {Json::Object{{"messages", Json::Array{Json::Object{{"content", "x"}}}}},
       "messages[0].role is required"},
      {Json::Object{
           {"messages",
            Json::Array{Json::Object{
                {"role", "user"}, {"content", Json::Array{Json::Object{{"type", "image_url"}}}}}}}},
       "'image_url'"},
      {Json::Object{{"messages", Json::Array{user}}, {"n", 0}}, "n must be an integer"},
      {Json::Object{{"messages", Json::Array{user}}, {"n", 2}, {"stream", true}}, "one choice"},
      {Json::Object{{"messages", Json::Array{user}}, {"top_logprobs", 2}}, "top_logprobs"},
      {Json::Object{{"messages", Json::Array{user}}, {"max_completion_tokens", 0}},
       "max_completion_tokens"},
      {Json::Object{{"messages", Json::Array{user}}, {"stream_options", Json::object()}},
       "stream_options"},
      {Json::Object{{"messages", Json::Array{user}},
                    {"add_generation_prompt", true},
                    {"continue_final_message", true}},
       "continue_final_message"},
  };
  for (const auto& [body, why] : cases) {
    const Json e = post(s.port, "/v1/chat/completions", body, 400).at("error");
    CHECK(e.at("type").as_string() == "BadRequestError");
    CHECK_THAT(e.at("message").as_string(), Catch::Contains(why));
  }
  // Streaming requests are checked before the stream starts.
  const Json e = post(
      s.port, "/v1/chat/completions",
      Json::Object{{"messages", Json::Array{Json::Object{{"role", "x"}}}}, {"stream", true}}, 400);
  CHECK_THAT(e.at("error").at("message").as_string(), Catch::Contains("role"));
  const Json batched =
      post(s.port, "/v1/completions",
           Json::Object{{"prompt", Json::Array{Json("a"), Json("b")}}, {"stream", true}}, 400);
  CHECK_THAT(batched.at("error").at("message").as_string(), Catch::Contains("one prompt"));

  SECTION("a model without a chat template") {
    const auto& gpt2 = vime::test::real_tokenizer("gpt2");
    vime::engine::NativeEngine engine(vime::test::served_model(), &gpt2, {});
    vime::serve::Server server(engine, vime::test::served_model(), gpt2,
                               vime::test::ServedEngine::options(""));
    const int port = server.start();
    const Json r =
        post(port, "/v1/chat/completions", Json::Object{{"messages", Json::Array{user}}}, 400);
    CHECK_THAT(r.at("error").at("message").as_string(), Catch::Contains("no chat template"));
  }
}
