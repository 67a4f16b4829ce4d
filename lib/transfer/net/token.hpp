// The shared token: given by the caller (a --token-file's content), or NUBO_TOKEN.
#pragma once

#include <string>

namespace nubo::transfer::net {

// `given` when not empty, else NUBO_TOKEN; Error(invalid_argument) saying how to give one when
// there is neither.
std::string resolve_token(const std::string& given);

}  // namespace nubo::transfer::net
