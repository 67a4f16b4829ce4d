#include "transfer/net/token.hpp"

#include "common/env.hpp"
#include "common/log.hpp"
#include "common/small_file.hpp"
#include "nubo/error.hpp"
#include "nubo/net.hpp"

namespace nubo::transfer::net {

std::string resolve_token(const std::string& given) {
  std::string token = given.empty() ? env::token().value_or("") : given;
  if (token.empty())
    throw Error(Errc::invalid_argument,
                "no token: give --token-file FILE (a secret shared with the other side) or set "
                "NUBO_TOKEN");
  if (token.size() < 16)
    log::warn("the token is shorter than 16 bytes: a longer random one is harder to guess");
  return token;
}

}  // namespace nubo::transfer::net

namespace nubo::net {

std::string read_token_file(const std::string& path) {
  // A missing or unreadable token file is a usage error, as a malformed one is.
  auto file = [&] {
    try {
      return files::read_small_file(path, 4096, "token file");
    } catch (const Error& e) {
      throw Error(Errc::invalid_argument, e.what());
    }
  }();
  if (file.mode & 077)
    throw Error(Errc::invalid_argument,
                "token file '" + path + "' is accessible to other users: chmod 600 it");
  auto& token = file.bytes;
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  if (token.empty()) throw Error(Errc::invalid_argument, "token file '" + path + "' is empty");
  return token;
}

}  // namespace nubo::net
