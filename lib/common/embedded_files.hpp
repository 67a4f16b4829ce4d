// A folder of data files compiled into the library (cmake/embed_files.cmake), each found by its
// path relative to that folder.
#pragma once

#include <span>
#include <string_view>

namespace nubo::embedded {

struct File {
  std::string_view path;  // "skypilot/aws.csv"
  std::string_view data;
};

}  // namespace nubo::embedded
