#include "load_driver.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "vime/json.hpp"

namespace vime::tools {
namespace {

using Clock = std::chrono::steady_clock;

enum class Kind { kValid, kAbortEarly, kAbortMidBody, kBad };

struct Outcome {
  int status = 0;  // 0: no answer
  std::string body;
  std::string error;
};

int connect_local(int port, double timeout_s) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{static_cast<time_t>(timeout_s), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads the whole answer (the request said Connection: close) and splits status and body.
Outcome read_answer(int fd) {
  Outcome o;
  std::string raw;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0) {
      o.error = std::string("recv: ") + std::strerror(errno);
      break;
    }
    if (n == 0) break;
    raw.append(buf, static_cast<size_t>(n));
    // Stop at the end of a Content-Length body: the server may keep the socket open.
    const size_t head_end = raw.find("\r\n\r\n");
    if (head_end == std::string::npos) continue;
    std::string head = raw.substr(0, head_end);
    std::transform(head.begin(), head.end(), head.begin(), ::tolower);
    const size_t cl = head.find("content-length:");
    if (cl != std::string::npos &&
        raw.size() - head_end - 4 >= std::stoull(head.substr(cl + 15, head.find("\r\n", cl) - cl)))
      break;
  }
  if (raw.rfind("HTTP/1.", 0) != 0 || raw.size() < 12) {
    if (o.error.empty()) o.error = raw.empty() ? "no answer" : "not an HTTP answer";
    return o;
  }
  o.status = std::atoi(raw.c_str() + 9);
  const size_t head_end = raw.find("\r\n\r\n");
  if (head_end != std::string::npos) o.body = raw.substr(head_end + 4);
  return o;
}

std::string http_post(const std::string& path, const std::string& body,
                      const std::string& extra_headers = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
         "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n" + extra_headers + "\r\n" + body;
}

std::string random_text(std::mt19937_64& rng, size_t length) {
  static const char kAlphabet[] = "0123456789+-*= abcdefghij?";
  std::string s(length, ' ');
  for (auto& c : s) c = kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  return s;
}

std::string valid_completion(std::mt19937_64& rng, int max_tokens) {
  Json body = Json::object();
  body["prompt"] = random_text(rng, 4 + rng() % 40);
  body["max_tokens"] = int64_t(1 + rng() % max_tokens);
  body["temperature"] = (rng() % 2) ? 0.0 : 1.0;
  return body.dump();
}

// One malformed request: the raw bytes and what it is.
std::pair<std::string, std::string> bad_request(std::mt19937_64& rng, const LoadOptions& o) {
  switch (rng() % 12) {
    case 0:
      return {http_post("/v1/completions", R"({"prompt": "1+1=", "max_tokens": )"),
              "truncated JSON"};
    case 1:
      return {http_post("/v1/completions", "[1, 2, 3]"), "a JSON array body"};
    case 2:
      return {http_post("/v1/completions", R"({"prompt": 5})"), "prompt of the wrong type"};
    case 3:
      return {http_post("/v1/completions", R"({"prompt": "x", "max_tokens": "many"})"),
              "max_tokens of the wrong type"};
    case 4:
      return {http_post("/v1/completions", R"({"prompt": [2147483647]})"),
              "a token id outside the vocabulary"};
    case 5: {
      // Far longer than the context, under the size limit: refused before tokenizing.
      Json body = Json::object();
      body["prompt"] = random_text(rng, static_cast<size_t>(o.max_request_bytes / 2));
      return {http_post("/v1/completions", body.dump()), "a prompt longer than the context"};
    }
    case 6: {
      std::string big(static_cast<size_t>(o.max_request_bytes + 1 + rng() % 4096), 'a');
      return {http_post("/v1/completions", big), "a body over --max-request-bytes"};
    }
    case 7:
      return {
          "POST /v1/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
          "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
          "a chunked body"};
    case 8:
      return {"GARBAGE \x01\x02 NOT HTTP\r\n\r\n", "a broken request line"};
    case 9:
      return {http_post("/v1/nope", "{}"), "an unknown route"};
    case 10:
      return {http_post("/v1/completions", R"({"prompt": "x", "n": 100000})"), "n out of range"};
    default:
      return {http_post("/v1/chat/completions", R"({"messages": "not a list"})"),
              "chat messages of the wrong type"};
  }
}

// vLLM's error body: {"error": {"message": str, "type": str, "code": status}}; FastAPI's
// {"detail": str} for routes and methods that do not exist.
bool vllm_error_shape(const Outcome& o) {
  try {
    const Json body = Json::parse(o.body, "answer");
    if (const Json* d = body.find("detail"); d && (o.status == 404 || o.status == 405))
      return d->is_string();
    const Json* e = body.find("error");
    if (!e || !e->is_object()) return false;
    const Json* m = e->find("message");
    const Json* t = e->find("type");
    const Json* c = e->find("code");
    return m && m->is_string() && t && t->is_string() && c && c->is_int() &&
           c->as_int() == o.status;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

double LoadReport::percentile_ms(double p) const {
  if (valid_latency_ms.empty()) return 0;
  std::vector<double> v = valid_latency_ms;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p / 100.0 * (v.size() - 1) + 0.5));
  return v[i];
}

std::string LoadReport::summary() const {
  std::ostringstream s;
  s << sent << " requests in " << wall_s << " s: valid " << valid_ok << " ok / " << valid_failed
    << " failed; bad " << bad_ok << " answered 4xx in vLLM's shape / " << bad_failed
    << " not; aborted by the client " << aborted << "; latency of valid ones p50 "
    << percentile_ms(50) << " ms, p99 " << percentile_ms(99) << " ms; statuses";
  for (const auto& [status, n] : status_counts) s << " " << status << "x" << n;
  for (const auto& f : failures) s << "\n  " << f;
  return s.str();
}

int64_t rss_kib(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  return 0;
}

LoadReport run_load(const LoadOptions& o, const std::function<void()>& between) {
  LoadReport report;
  std::mutex mutex;
  std::atomic<int> next{0};
  const int checkpoint = std::max(1, o.requests / 10);
  auto record = [&](auto&& f) {
    std::lock_guard<std::mutex> lock(mutex);
    f();
  };
  auto fail = [&](const std::string& what) {
    record([&] {
      if (report.failures.size() < 10) report.failures.push_back(what);
    });
  };
  auto worker = [&](int w) {
    std::mt19937_64 rng(o.seed * 1000003 + static_cast<uint64_t>(w));
    std::uniform_real_distribution<double> u(0, 1);
    for (int i; (i = next.fetch_add(1)) < o.requests;) {
      if (between && i % checkpoint == 0) between();
      const double r = u(rng);
      Kind kind = r < o.malformed_fraction                          ? Kind::kBad
                  : r < o.malformed_fraction + o.abort_fraction / 2 ? Kind::kAbortEarly
                  : r < o.malformed_fraction + o.abort_fraction     ? Kind::kAbortMidBody
                                                                    : Kind::kValid;
      std::string bytes, what = "a valid completion";
      if (kind == Kind::kBad) {
        std::tie(bytes, what) = bad_request(rng, o);
      } else {
        bytes = http_post("/v1/completions", valid_completion(rng, o.max_tokens));
      }
      const auto start = Clock::now();
      const int fd = connect_local(o.port, o.timeout_s);
      record([&] { ++report.sent; });
      if (fd < 0) {
        fail("request " + std::to_string(i) + " (" + what + "): cannot connect");
        record([&] { kind == Kind::kBad ? ++report.bad_failed : ++report.valid_failed; });
        continue;
      }
      if (kind == Kind::kAbortMidBody) {
        send_all(fd, std::string_view(bytes).substr(0, bytes.size() - 1 - rng() % 8));
        ::close(fd);
        record([&] { ++report.aborted; });
        continue;
      }
      const bool sent = send_all(fd, bytes);
      if (kind == Kind::kAbortEarly) {
        std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 20));
        ::close(fd);
        record([&] { ++report.aborted; });
        continue;
      }
      const Outcome answer = read_answer(fd);
      ::close(fd);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      record([&] {
        if (answer.status) ++report.status_counts[answer.status];
      });
      const std::string described = "request " + std::to_string(i) + " (" + what + "): " +
                                    (answer.status ? "HTTP " + std::to_string(answer.status) + " " +
                                                         answer.body.substr(0, 160)
                                                   : answer.error + (sent ? "" : " (send failed)"));
      if (kind == Kind::kValid) {
        const bool ok =
            answer.status == 200 && answer.body.find("\"choices\"") != std::string::npos;
        record([&] {
          if (ok) {
            ++report.valid_ok;
            report.valid_latency_ms.push_back(ms);
          } else {
            ++report.valid_failed;
          }
        });
        if (!ok) fail(described);
      } else {
        const bool ok = answer.status >= 400 && answer.status < 500 && vllm_error_shape(answer);
        record([&] { ok ? ++report.bad_ok : ++report.bad_failed; });
        if (!ok) fail(described);
      }
    }
  };
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < o.concurrency; ++w) threads.emplace_back(worker, w);
  for (auto& t : threads) t.join();
  report.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

LoadReport fuzz_requests(int port, int requests, uint64_t seed, int concurrency) {
  static const std::vector<std::pair<std::string, std::string>> kSeeds = {
      {"/v1/completions",
       R"({"prompt": "12+34=", "max_tokens": 4, "temperature": 0.5, "top_p": 0.9, "stop": ["\n"], "logprobs": 1, "n": 2, "seed": 3})"},
      {"/v1/completions", R"({"prompt": [1, 2, 3], "max_tokens": 2, "return_token_ids": true})"},
      {"/v1/chat/completions",
       R"({"messages": [{"role": "user", "content": "1+1?"}], "max_tokens": 3, "logprobs": true, "top_logprobs": 2})"},
      {"/tokenize", R"({"prompt": "1+2=3", "add_special_tokens": true})"},
      {"/detokenize", R"({"tokens": [1, 2, 3]})"},
      {"/inference/v1/generate",
       R"({"token_ids": [1, 2, 3], "sampling_params": {"max_tokens": 2, "temperature": 0}})"}};
  static const char* kWords[] = {"{",
                                 "}",
                                 "[",
                                 "]",
                                 "\"",
                                 ":",
                                 ",",
                                 "null",
                                 "true",
                                 "-1",
                                 "1e999",
                                 "9223372036854775808",
                                 "\\u0000",
                                 "\"n\"",
                                 "\"max_tokens\"",
                                 "\"prompt\"",
                                 "\"messages\"",
                                 "0.0",
                                 "[[]]",
                                 "{}"};
  LoadReport report;
  std::mutex mutex;
  std::atomic<int> next{0};
  auto worker = [&](int w) {
    std::mt19937_64 rng(seed * 7919 + static_cast<uint64_t>(w));
    for (int i; (i = next.fetch_add(1)) < requests;) {
      const auto& [path, seed_body] = kSeeds[rng() % kSeeds.size()];
      std::string body = seed_body;
      for (int e = 0, n = 1 + static_cast<int>(rng() % 4); e < n; ++e) {
        const size_t at = body.empty() ? 0 : rng() % body.size();
        switch (rng() % 5) {
          case 0:
            if (!body.empty()) body[at] ^= static_cast<char>(1 << (rng() % 8));
            break;
          case 1:
            body.erase(at, 1 + rng() % 16);
            break;
          case 2:
            body.insert(at, kWords[rng() % (sizeof(kWords) / sizeof(*kWords))]);
            break;
          case 3:
            body.insert(at, 1, static_cast<char>(rng()));
            break;
          default:
            body.resize(at);
            break;
        }
      }
      std::string bytes = http_post(path, body);
      if (rng() % 16 == 0) {  // the framing: a header or the request line broken too
        const size_t at = rng() % std::min<size_t>(bytes.size(), 120);
        bytes[at] = "\r\n: \x00x9"[rng() % 7];
      }
      Outcome answer;
      // Short: a broken Content-Length may leave the server waiting for bytes that never come.
      if (const int fd = connect_local(port, 3); fd >= 0) {
        send_all(fd, bytes);
        answer = read_answer(fd);
        ::close(fd);
      } else {
        answer.error = "cannot connect";
      }
      // Broken framing (request line, headers) only has to leave the server up (checked after
      // the run); a fuzzed body must always get 200 or a 4xx in vLLM's shape.
      const bool framing_intact = bytes == http_post(path, body);
      const bool ok = !framing_intact || answer.status == 200 ||
                      (answer.status >= 400 && answer.status < 500 && vllm_error_shape(answer));
      std::lock_guard<std::mutex> lock(mutex);
      ++report.sent;
      if (answer.status) ++report.status_counts[answer.status];
      ok ? ++report.bad_ok : ++report.bad_failed;
      if (!ok && report.failures.size() < 10)
        report.failures.push_back(
            path + " " + body.substr(0, 200) + " -> " +
            (answer.status ? std::to_string(answer.status) + " " + answer.body.substr(0, 200)
                           : answer.error));
    }
  };
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < concurrency; ++w) threads.emplace_back(worker, w);
  for (auto& t : threads) t.join();
  report.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

namespace {

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

Outcome get(int port, const std::string& path) {
  const int fd = connect_local(port, 5);
  if (fd < 0) return {0, "", "cannot connect"};
  send_all(fd, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  Outcome o = read_answer(fd);
  ::close(fd);
  return o;
}

}  // namespace

std::string ServeLoadResult::summary() const {
  if (!error.empty()) return "serve_load: " + error;
  std::ostringstream s;
  s << report.summary() << "\nserver RSS: " << rss_before_kib / 1024 << " MiB after warm-up, peak "
    << rss_peak_kib / 1024 << " MiB, " << rss_after_kib / 1024 << " MiB after (growth "
    << (rss_after_kib - rss_before_kib) / 1024
    << " MiB); healthy after: " << (alive_after ? "yes" : "NO")
    << "; exit after SIGTERM: " << exit_status;
  if (fuzz.sent > 0) {
    s << "\nfuzzed requests: " << fuzz.sent << " in " << fuzz.wall_s << " s, " << fuzz.bad_ok
      << " answered 200 or a 4xx in vLLM's shape, " << fuzz.bad_failed << " not; statuses";
    for (const auto& [status, n] : fuzz.status_counts) s << " " << status << "x" << n;
    for (const auto& f : fuzz.failures) s << "\n  " << f;
  }
  return s.str();
}

ServeLoadResult run_serve_load(const std::string& vime_bin, const std::string& model_dir,
                               LoadOptions options, const std::string& log) {
  ServeLoadResult result;
  options.port = free_local_port();
  const std::string port = std::to_string(options.port);
  const std::string limit = std::to_string(options.max_request_bytes);
  const pid_t pid = ::fork();
  if (pid == 0) {
    FILE* out = std::freopen(log.c_str(), "w", stdout);
    (void)out;
    ::dup2(::fileno(stdout), 2);
    ::execl(vime_bin.c_str(), vime_bin.c_str(), "serve", model_dir.c_str(), "--port", port.c_str(),
            "--max-request-bytes", limit.c_str(), "--max-model-len", "256", nullptr);
    ::_exit(127);
  }
  bool up = false;
  for (int i = 0; i < 600 && !up; ++i) {
    up = get(options.port, "/health").status == 200;
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!up) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    result.error = "vime serve did not come up (see " + log + ")";
    return result;
  }
  LoadOptions warm = options;
  warm.requests = 32;
  warm.abort_fraction = 0;
  warm.malformed_fraction = 0;
  run_load(warm);
  result.rss_before_kib = result.rss_peak_kib = rss_kib(pid);
  std::mutex mutex;
  result.report = run_load(options, [&] {
    const int64_t rss = rss_kib(pid);
    std::lock_guard<std::mutex> lock(mutex);
    result.rss_peak_kib = std::max(result.rss_peak_kib, rss);
  });
  if (options.fuzz_requests > 0)
    result.fuzz = fuzz_requests(options.port, options.fuzz_requests, options.seed);
  result.rss_after_kib = rss_kib(pid);
  result.rss_peak_kib = std::max(result.rss_peak_kib, result.rss_after_kib);
  result.alive_after = get(options.port, "/health").status == 200;
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_status = status;
  return result;
}

}  // namespace vime::tools
