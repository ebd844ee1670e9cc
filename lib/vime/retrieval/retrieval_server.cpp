#include "vime/retrieval/retrieval_server.hpp"

#include <httplib.h>
#include <sys/socket.h>

#include <thread>

#include "vime/error.hpp"

namespace vime::retrieval {
namespace {

void send_json(httplib::Response& res, const Json& body, int status = 200) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

}  // namespace

Json retrieve(const Bm25Index& index, const Json& request, const RetrievalServerOptions& options) {
  const Json* queries = request.is_object() ? request.find("queries") : nullptr;
  if (!queries || !queries->is_array()) {
    throw Error("the body must be {\"queries\": [strings], \"topk\": k, \"return_scores\": bool}");
  }
  if (queries->size() > options.max_queries) {
    throw Error("too many queries in one request (" + std::to_string(queries->size()) + " > " +
                std::to_string(options.max_queries) + ")");
  }
  int64_t topk = options.default_topk;
  if (const Json* k = request.find("topk"); k && !k->is_null()) {
    if (!k->is_int() || k->as_int() < 1 || k->as_int() > options.max_topk) {
      throw Error("\"topk\" must be an integer in [1, " + std::to_string(options.max_topk) + "]");
    }
    topk = k->as_int();
  }
  bool with_scores = false;
  if (const Json* s = request.find("return_scores"); s && !s->is_null()) {
    if (!s->is_bool()) throw Error("\"return_scores\" must be true or false");
    with_scores = s->as_bool();
  }
  Json result = Json::array();
  for (const Json& q : queries->as_array()) {
    if (!q.is_string()) throw Error("every query must be a string");
    Json docs = Json::array();
    for (const Hit& hit : index.search(q.as_string(), topk)) {
      Json doc = Json::object();
      doc["id"] = index.doc(hit.doc).id;
      doc["contents"] = index.doc(hit.doc).contents;
      if (with_scores) {
        Json scored = Json::object();
        scored["document"] = std::move(doc);
        scored["score"] = static_cast<double>(hit.score);
        docs.push_back(std::move(scored));
      } else {
        docs.push_back(std::move(doc));
      }
    }
    result.push_back(std::move(docs));
  }
  Json out = Json::object();
  out["result"] = std::move(result);
  return out;
}

struct RetrievalServer::Impl {
  const Bm25Index& index;
  RetrievalServerOptions options;
  httplib::Server http;
  std::thread thread;
  std::atomic<int64_t> served{0};
  int port = 0;
  int listen_fd = -1;
  bool stopped = false;
};

RetrievalServer::RetrievalServer(const Bm25Index& index, RetrievalServerOptions options)
    : impl_(std::make_unique<Impl>(index, std::move(options))) {
  Impl& s = *impl_;
  const int threads = s.options.threads;
  s.http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.http.set_socket_options([&s](int fd) {
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    s.listen_fd = fd;
  });
  s.http.set_payload_max_length(64u << 20);
  s.http.Post("/retrieve", [&s](const httplib::Request& req, httplib::Response& res) {
    Json body;
    try {
      body = Json::parse(req.body, "the request body");
      Json out = retrieve(s.index, body, s.options);
      s.served += static_cast<int64_t>(body.at("queries").size());
      send_json(res, out);
    } catch (const Error& e) {
      send_json(res, Json::Object{{"detail", std::string(e.what())}}, 400);
    }
  });
  s.http.Get("/health", [&s](const httplib::Request&, httplib::Response& res) {
    send_json(res,
              Json::Object{{"status", "ok"}, {"documents", static_cast<int64_t>(s.index.size())}});
  });
}

RetrievalServer::~RetrievalServer() { stop(); }

int RetrievalServer::start() {
  Impl& s = *impl_;
  s.port = s.options.port == 0
               ? s.http.bind_to_any_port(s.options.host)
               : (s.http.bind_to_port(s.options.host, s.options.port) ? s.options.port : -1);
  if (s.port <= 0) {
    throw Error("--host/--port: cannot listen on " + s.options.host + ":" +
                std::to_string(s.options.port) + " (address in use or not local)");
  }
  if (s.listen_fd >= 0) ::listen(s.listen_fd, SOMAXCONN);  // httplib's backlog is 5
  s.thread = std::thread([&s] { s.http.listen_after_bind(); });
  return s.port;
}

void RetrievalServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->http.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::string RetrievalServer::url() const {
  return "http://" + impl_->options.host + ":" + std::to_string(impl_->port);
}

int64_t RetrievalServer::queries_served() const { return impl_->served.load(); }

}  // namespace vime::retrieval
