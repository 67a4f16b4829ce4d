#include "parallel/rendezvous/rendezvous_url.hpp"

#include <cctype>

#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::parallel {
namespace {

constexpr std::size_t kMaxUrl = 4096;
constexpr std::size_t kMaxJob = 128;

[[noreturn]] void bad(std::string_view what, std::string_view url, const std::string& problem) {
  throw Error(Errc::invalid_argument, std::string(what) + "='" + std::string(url.substr(0, 200)) +
                                          "' is not a valid " + "rendezvous: " + problem +
                                          "; use file:///shared/dir, tcp://host:port or "
                                          "redis://host:port/job");
}

bool job_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

bool host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == ':';
}

// "host[:port]" (or "[v6][:port]") into r.host and r.port; a port is required when
// `port_required` (tcp: there is no default everyone would agree on).
void parse_authority(std::string_view url, std::string_view authority, std::string_view what,
                     bool port_required, RendezvousUrl& r) {
  if (authority.find('@') != std::string_view::npos) {
    bad(what, url, "credentials in the location are not supported");
  }
  std::string_view host;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {  // [IPv6]:port
    auto close = authority.find(']');
    if (close == std::string_view::npos) bad(what, url, "an IPv6 address lacks its ']'");
    host = authority.substr(1, close - 1);
    auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') bad(what, url, "expected ':port' after the IPv6 address");
      port = after.substr(1);
      if (port.empty()) bad(what, url, "the port is empty");
    }
  } else {
    auto colon = authority.rfind(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) bad(what, url, "the port is empty");
    }
    if (host.find(':') != std::string_view::npos) {
      bad(what, url, "write an IPv6 address in brackets, e.g. tcp://[::1]:29500");
    }
  }
  if (host.empty()) bad(what, url, "the host is missing");
  for (char c : host) {
    if (!host_char(c)) bad(what, url, "the host contains '" + std::string(1, c) + "'");
  }
  if (port.empty() && port_required) bad(what, url, "the port is missing (tcp://host:port)");
  if (!port.empty()) {
    try {
      r.port = static_cast<int>(text::parse_int(port, "port", 1, 65535));
    } catch (const Error& e) {
      bad(what, url, e.what());
    }
  }
  r.host = std::string(host);
}

RendezvousUrl parse_redis(std::string_view url, std::string_view rest, std::string_view what) {
  RendezvousUrl r;
  r.kind = RendezvousUrl::Kind::redis;
  auto slash = rest.find('/');
  std::string_view job = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  parse_authority(url, rest.substr(0, slash), what, false, r);
  if (job.size() > kMaxJob) bad(what, url, "the job name is longer than 128 characters");
  for (char c : job) {
    if (!job_char(c)) {
      bad(what, url,
          "the job name may hold letters, digits, '-', '_' and '.', not '" + std::string(1, c) +
              "'");
    }
  }
  r.job = std::string(job);
  return r;
}

RendezvousUrl parse_tcp(std::string_view url, std::string_view rest, std::string_view what) {
  RendezvousUrl r;
  r.kind = RendezvousUrl::Kind::tcp;
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos)
    bad(what, url, "a tcp location is only tcp://host:port");
  parse_authority(url, rest, what, true, r);
  return r;
}

}  // namespace

RendezvousUrl parse_rendezvous(std::string_view url, std::string_view what) {
  if (url.size() > kMaxUrl) bad(what, url, "it is longer than 4096 characters");
  for (char c : url) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      bad(what, url, "it contains a control character");
    }
  }
  auto sep = url.find("://");
  if (sep == std::string_view::npos) bad(what, url, "it has no scheme");
  auto scheme = text::lower(url.substr(0, sep));
  auto rest = url.substr(sep + 3);
  RendezvousUrl r;
  if (scheme == "file") {
    if (rest.empty() || rest.front() != '/') {
      bad(what, url, "a file location needs an absolute path (three slashes: file:///dir)");
    }
    r.kind = RendezvousUrl::Kind::file;
    r.path = std::string(rest);
    while (r.path.size() > 1 && r.path.back() == '/') r.path.pop_back();
  } else if (scheme == "redis") {
    r = parse_redis(url, rest, what);
  } else if (scheme == "tcp") {
    r = parse_tcp(url, rest, what);
  } else {
    bad(what, url, "the scheme must be file, tcp or redis, not '" + scheme + "'");
  }
  r.text = std::string(url);
  return r;
}

}  // namespace nubo::parallel
