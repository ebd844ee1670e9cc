#include "vime/http/net.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>

#include "vime/error.hpp"

namespace vime::http {

int free_port(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), "0", &hints, &found);
  if (rc != 0) throw Error("cannot find a free port on " + host + ": " + ::gai_strerror(rc));
  int port = 0;
  std::string error = "no address";
  for (addrinfo* a = found; a != nullptr && port == 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port = addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                        : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    } else {
      error = ::strerror(errno);
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (port == 0) throw Error("cannot find a free port on " + host + ": " + error);
  return port;
}

std::string local_address_toward(const std::string& peer) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(peer.c_str(), "9", &hints, &found);
  if (rc != 0) throw Error("cannot resolve " + peer + ": " + ::gai_strerror(rc));
  std::string address;
  std::string error = "no address";
  for (addrinfo* a = found; a != nullptr && address.empty(); a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof(local);
    char text[INET6_ADDRSTRLEN] = {};
    // connect() on a UDP socket only picks the route and the source address.
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
      const void* raw =
          local.ss_family == AF_INET6
              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr)
              : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr);
      if (::inet_ntop(local.ss_family, raw, text, sizeof(text)) != nullptr) address = text;
    } else {
      error = ::strerror(errno);
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (address.empty()) throw Error("no route from this host to " + peer + ": " + error);
  return address;
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.starts_with("127.");
}

std::string http_url(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos && !host.starts_with("[");
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string normalize_url(std::string_view address, std::string_view what) {
  std::string url(address);
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.find("://") == std::string::npos) url = "http://" + url;
  const size_t host_start = url.find("://") + 3;
  const size_t colon = url.rfind(':');
  const size_t bracket = url.rfind(']');
  const bool has_port = colon != std::string::npos && colon > host_start &&
                        (bracket == std::string::npos || colon > bracket) &&
                        colon + 1 < url.size() &&
                        url.find_first_not_of("0123456789", colon + 1) == std::string::npos;
  if (!has_port || url.find('/', host_start) != std::string::npos) {
    throw Error(std::string(what) + ": '" + std::string(address) +
                "' is not host:port (e.g. 10.0.0.5:8000 or http://10.0.0.5:8000)");
  }
  return url;
}

std::string percent_encode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace vime::http
