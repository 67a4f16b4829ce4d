#include "transfer/net/token.hpp"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "common/env.hpp"
#include "common/log.hpp"
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
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error(Errc::invalid_argument, "token file '" + path + "' cannot be read");
  if (st.st_mode & 077)
    throw Error(Errc::invalid_argument,
                "token file '" + path + "' is accessible to other users: chmod 600 it");
  if (st.st_size > 4096)
    throw Error(Errc::invalid_argument, "token file '" + path + "' is larger than 4 KiB");
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  auto token = ss.str();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  if (!f || token.empty())
    throw Error(Errc::invalid_argument, "token file '" + path + "' is empty");
  return token;
}

}  // namespace nubo::net
