// INI files as the AWS CLI and boto write them (~/.aws/config, ~/.aws/credentials, ~/.boto):
// "[section]" headers, "key = value" lines, '#' and ';' comments. An indented line under a
// "key =" with no value belongs to that key's block ("s3 =" then "  addressing_style = path")
// and is stored as "key.sub".
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace nubo::ini {

using Section = std::map<std::string, std::string>;
using Sections = std::map<std::string, Section>;

// The file's sections; empty when it does not exist. Error(invalid_argument) naming the file
// and line for a line that is none of the above, or a file over 1 MiB (no profile file is).
Sections read_file(const std::string& path, std::string_view what);

// The environment variable's value; empty when it is not set.
std::string env(const char* name);

}  // namespace nubo::ini
