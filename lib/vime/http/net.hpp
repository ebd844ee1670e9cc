// Ports and URLs for the processes vime launches.
#pragma once

#include <string>
#include <string_view>

namespace vime::http {

// A port that is free on `host` now: binds port 0 and reads the port back (another process may
// still take it before the child binds it; callers retry on a failed start).
int free_port(const std::string& host = "127.0.0.1");

// This host's address on the route to `peer`: the source address a connection to it would use (no
// packet is sent), so the address `peer`'s network reaches this host at. Throws vime::Error when
// `peer` does not resolve or there is no route to it.
std::string local_address_toward(const std::string& peer);
// 127.0.0.0/8, ::1 or "localhost".
bool is_loopback(const std::string& host);

// "http://host:port" (IPv6 hosts in brackets).
std::string http_url(const std::string& host, int port);
// "host:port" or a URL -> "http://host:port" without a trailing slash. Throws vime::Error naming
// `what` when there is no port.
std::string normalize_url(std::string_view address, std::string_view what);
// RFC 3986 percent-encoding of everything but unreserved characters (Python's quote(s, safe='')).
std::string percent_encode(std::string_view text);

}  // namespace vime::http
