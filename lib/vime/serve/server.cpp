#include "vime/serve/server.hpp"

#include <httplib.h>
#include <sys/socket.h>

#include <thread>

#include "vime/serve/request_limits.hpp"
#include "vime/serve/serve_context.hpp"

namespace vime::serve {

struct Server::Impl {
  Impl(engine::NativeEngine& engine, Model& model, const Tokenizer& tokenizer, ServeOptions options)
      : ctx(engine, model, tokenizer, std::move(options)) {}
  ServeContext ctx;
  httplib::Server http;
  std::thread thread;
  bool stopped = false;
  int listen_fd = -1;
};

Server::Server(engine::NativeEngine& engine, Model& model, const Tokenizer& tokenizer,
               ServeOptions options)
    : impl_(std::make_unique<Impl>(engine, model, tokenizer, std::move(options))) {
  auto& http = impl_->http;
  auto& ctx = impl_->ctx;
  const int threads = ctx.options.threads;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // SO_REUSEADDR, not httplib's SO_REUSEPORT (a second server on the port must fail to bind);
  // the socket is kept to raise httplib's listen backlog of 5 (see start()).
  http.set_socket_options([impl = impl_.get()](int fd) {
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    impl->listen_fd = fd;
  });
  add_request_framing(http, ctx.options, ctx.stopping);
  max_token_bytes(ctx.tokenizer);  // at startup, not in the first long request
  add_info_routes(http, ctx);
  add_completion_routes(http, ctx);
  add_chat_routes(http, ctx);
  add_generate_routes(http, ctx);
  add_tokenize_routes(http, ctx);
  add_control_routes(http, ctx);
  add_sleep_routes(http, ctx);
  add_weight_routes(http, ctx);
}

Server::~Server() { stop(); }

int Server::start() {
  const auto& o = impl_->ctx.options;
  if (o.port == 0) {
    port_ = impl_->http.bind_to_any_port(o.host);
  } else {
    port_ = impl_->http.bind_to_port(o.host, o.port) ? o.port : -1;
  }
  if (port_ <= 0) {
    throw Error("--host/--port: cannot listen on " + o.host + ":" + std::to_string(o.port) +
                " (address in use or not local)");
  }
  // httplib listens with a backlog of 5: a burst of clients overflows it and the dropped
  // handshakes stall past the server's read timeout. listen() again raises it (Linux).
  if (impl_->listen_fd >= 0) ::listen(impl_->listen_fd, SOMAXCONN);
  impl_->thread = std::thread([this] { impl_->http.listen_after_bind(); });
  return port_;
}

void Server::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->ctx.stopping = true;
  // Handlers block in generate(): end them first, so the pool can join. Paused requests are
  // queued in the engine and end with "abort" too.
  impl_->ctx.engine.abort_all();
  impl_->http.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::string Server::url() const {
  return "http://" + impl_->ctx.options.host + ":" + std::to_string(port_);
}

}  // namespace vime::serve
