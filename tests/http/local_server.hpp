// A cpp-httplib server on a free 127.0.0.1 port for HTTP client tests: routes are added to
// `http` before start(); a large worker pool and listen backlog so hundreds of clients connect
// at once (httplib's backlog of 5 would stall a burst of handshakes).
#pragma once

#include <httplib.h>
#include <sys/socket.h>

#include <string>
#include <thread>

namespace vime::test {

class LocalServer {
 public:
  explicit LocalServer(int threads = 16) {
    http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    http.set_socket_options([this](int fd) {
      int yes = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      listen_fd_ = fd;
    });
  }
  ~LocalServer() { stop(); }
  LocalServer(const LocalServer&) = delete;
  LocalServer& operator=(const LocalServer&) = delete;

  int start() {
    port_ = http.bind_to_any_port("127.0.0.1");
    if (listen_fd_ >= 0) ::listen(listen_fd_, SOMAXCONN);
    thread_ = std::thread([this] { http.listen_after_bind(); });
    while (!http.is_running()) std::this_thread::yield();  // stop() before this would be lost
    return port_;
  }
  void stop() {
    http.stop();
    if (thread_.joinable()) thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  httplib::Server http;

 private:
  std::thread thread_;
  int port_ = 0;
  int listen_fd_ = -1;
};

}  // namespace vime::test
