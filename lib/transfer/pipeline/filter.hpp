// --exclude and --include, as rsync reads them: an entry that matches an exclude pattern is left
// out (a directory with everything below it) unless it matches an include pattern.
//  - A pattern without '/' matches the entry's name at any depth ("*.tmp", "__pycache__").
//  - A pattern with '/' matches the path in the archive, at any depth unless it starts with '/'
//    (then from the top: "/data/raw").
//  - A trailing '/' matches directories only ("logs/").
//  - '*' and '?' do not cross '/', "[a-z]" is a class (fnmatch(3) with FNM_PATHNAME).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nubo::transfer {

class PathFilter {
 public:
  PathFilter() = default;
  // Error(invalid_argument) naming a pattern that is empty or has an unclosed '['.
  PathFilter(const std::vector<std::string>& exclude, const std::vector<std::string>& include);

  bool empty() const { return exclude_.empty(); }
  // Whether the entry at archive path `path` is left out.
  bool excluded(std::string_view path, bool is_directory) const;

 private:
  struct Pattern {
    std::string glob;  // without its leading or trailing '/'
    bool anchored = false, directories_only = false, whole_path = false;
    bool matches(std::string_view path, bool is_directory) const;
  };
  static Pattern parse(const std::string& text, const char* option);
  std::vector<Pattern> exclude_, include_;
};

}  // namespace nubo::transfer
