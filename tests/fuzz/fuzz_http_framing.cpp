// `vime serve`'s HTTP framing: each input is sent as raw bytes over a TCP connection to an
// in-process cpp-httplib server set up as `vime serve` sets its own up (add_request_framing:
// body-size limit, chunked-body refusal, API key, error handlers) with the three generation routes
// running their request-body parsers (no engine). The server must answer every input with a
// status line (or close the connection); an error answer is a 4xx in vLLM's or FastAPI's error
// shape, never a 5xx (an exception that is no vime::Error escaped a route).
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "fuzz_harness.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/serve/request_body.hpp"
#include "vime/serve/request_limits.hpp"
#include "vime/serve/server.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

namespace {

using namespace vime::serve;

struct FramingServer {
  std::unique_ptr<vime::tokenizer::HfTokenizer> tokenizer =
      vime::tokenizer::HfTokenizer::from_directory(VIME_FUZZ_TOKENIZER_DIR);
  ServeOptions options;
  std::atomic<bool> stopping{false};
  httplib::Server http;
  std::thread thread;
  int port = -1;

  FramingServer() {
    options.api_key = "fuzz";
    options.max_model_len = 4096;
    options.max_request_bytes = 16 << 10;  // small, so inputs reach the 413 path
    max_token_bytes(*tokenizer);
    http.new_task_queue = [] { return new httplib::ThreadPool(2); };
    http.set_read_timeout(1, 0);
    http.set_keep_alive_timeout(1);
    add_request_framing(http, options, stopping);
    const vime::Tokenizer& tok = *tokenizer;
    const int64_t context = options.max_model_len;
    http.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
    http.Post("/v1/completions",
              [&tok, context](const httplib::Request& req, httplib::Response& res) {
                const vime::Json body = parse_body(req);
                const auto prompts = completion_prompts(tok, context, body);
                (void)sampling_params_from(body);
                send_json(res, vime::Json::Object{{"prompts", int64_t(prompts.size())}});
              });
    http.Post("/v1/chat/completions",
              [&tok, context](const httplib::Request& req, httplib::Response& res) {
                const vime::Json body = parse_body(req);
                const auto prompt = chat_prompt(tok, context, body);
                send_json(res, vime::Json::Object{{"tokens", int64_t(prompt.size())}});
              });
    http.Post(
        "/inference/v1/generate", [&tok](const httplib::Request& req, httplib::Response& res) {
          const vime::Json body = parse_body(req);
          const vime::Json* ids = body.find("token_ids");
          if (!ids) throw BadRequest("token_ids is required");
          send_json(
              res,
              vime::Json::Object{
                  {"tokens", int64_t(token_ids_from(*ids, "token_ids", tok.vocab_size()).size())}});
        });
    port = http.bind_to_any_port("127.0.0.1");
    if (port <= 0) {
      std::fprintf(stderr, "fuzz_http_framing: cannot listen on 127.0.0.1\n");
      std::abort();
    }
    thread = std::thread([this] { http.listen_after_bind(); });
  }
};

FramingServer& server() {
  static auto* s = new FramingServer;  // serves until the process exits
  return *s;
}

struct Exchange {
  std::string answer;
  // An answer sent before the request's body was read (401, 411, 413) leaves that body unread;
  // closing with unread input, the server's kernel resets the connection, and the reset may drop
  // the tail of the answer on its way (cpp-httplib has no lingering close). Only its status line
  // is then sure to arrive.
  bool reset = false;
};

// Sends `input`, half-closes, and returns all the server wrote back.
Exchange exchange(int port, std::string_view input) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) __builtin_trap();
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    std::perror("fuzz_http_framing: connect");  // the server is gone
    __builtin_trap();
  }
  for (size_t sent = 0; sent < input.size();) {
    const ssize_t n = ::send(fd, input.data() + sent, input.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server answered early (413) and closed
    sent += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  Exchange out;
  char buffer[4096];
  ssize_t n;
  while ((n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0) out.answer.append(buffer, n);
  out.reset = n < 0 && errno == ECONNRESET;
  ::close(fd);
  return out;
}

// The first response of `out`: a status line, and for an error a JSON body with "error" (vLLM) or
// "detail" (FastAPI's 404/405).
void check_response(const Exchange& exchanged) {
  const std::string& out = exchanged.answer;
  if (out.empty()) return;  // closed without an answer (e.g. no request line at all)
  int status = 0;
  if (std::sscanf(out.c_str(), "HTTP/1.1 %d", &status) != 1) __builtin_trap();
  if (status >= 500) {
    std::fprintf(stderr, "fuzz_http_framing: answered %d:\n%s\n", status, out.c_str());
    __builtin_trap();
  }
  if (status < 400 || exchanged.reset) return;
  const size_t head_end = out.find("\r\n\r\n");
  if (head_end == std::string::npos) __builtin_trap();
  const std::string head = out.substr(0, head_end);
  // cpp-httplib applies a request's Range header to error answers too (a 206-style slice of the
  // error body under the 4xx status): not vLLM's behaviour, left as cpp-httplib does it.
  if (head.find("Content-Range: ") != std::string::npos) return;
  const size_t at = head.find("Content-Length: ");
  if (at == std::string::npos) __builtin_trap();
  const size_t length = std::stoul(head.substr(at + 16));
  const std::string body = out.substr(head_end + 4, length);
  // cpp-httplib answers a malformed request (400) and closes with the rest of the input unread;
  // the answer's body may then not arrive whole. What arrives whole must be an error body.
  if (body.size() < length) return;
  vime::Json json;
  try {
    json = vime::Json::parse(body, "error body");
  } catch (const vime::Error&) {
    std::fprintf(stderr, "fuzz_http_framing: a %d answer that is no JSON:\n%s\n", status,
                 out.c_str());
    __builtin_trap();
  }
  if (!json.is_object() || !(json.contains("error") || json.contains("detail"))) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)server();  // loads Qwen3's tokenizer and starts listening once (seconds under ASan)
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int port = server().port;
  check_response(exchange(port, std::string_view(reinterpret_cast<const char*>(data), size)));
  return 0;
}

std::vector<std::string> fuzz_dictionary() {
  return {"POST ",
          "GET ",
          "PUT ",
          "HEAD ",
          "OPTIONS ",
          " HTTP/1.1\r\n",
          " HTTP/1.0\r\n",
          "/v1/completions",
          "/v1/chat/completions",
          "/inference/v1/generate",
          "/health",
          "\r\n",
          "\r\n\r\n",
          "Host: 127.0.0.1\r\n",
          "Content-Length: ",
          "Content-Length: 0\r\n",
          "Content-Length: 18446744073709551616\r\n",
          "Content-Length: -1\r\n",
          "Transfer-Encoding: chunked\r\n",
          "Authorization: Bearer fuzz\r\n",
          "Authorization: Bearer x\r\n",
          "Content-Type: application/json\r\n",
          "Connection: close\r\n",
          "Connection: keep-alive\r\n",
          "Expect: 100-continue\r\n",
          "Range: bytes=0-1\r\n",
          "0\r\n\r\n",
          "ffffffff\r\n",
          "%00",
          "%",
          "?a=b&c",
          "{\"prompt\": \"hi\"}",
          "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}",
          "{\"token_ids\": [1, 2]}"};
}
