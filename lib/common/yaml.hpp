// YAML that nubo generates (SkyPilot tasks, Kubernetes manifests): one writer through which every
// value passes, so that no value from outside (a region, an instance name, a tag, a command) can
// end its line, open a key of its own or become anything but the string it was. Keys are the
// writer's caller's own constants; values are always quoted scalars (double-quoted, escaped to
// ASCII) or, for text of several lines, literal blocks with an explicit indentation, used only
// when the text can be one exactly. The output is read the same by YAML 1.1 (PyYAML, which
// SkyPilot uses) and YAML 1.2 readers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nubo::yaml {

// `value` as a YAML double-quoted scalar: ", \ and every character outside printable ASCII
// escaped (\n, \t, \x1b, \u2028, \U0001F600). Error(invalid_argument) naming `what` when `value`
// is not UTF-8 (YAML text is Unicode: bytes that are not cannot be written as they were).
std::string quoted(std::string_view value, std::string_view what = "a YAML value");

// A block mapping, written in order. Each call names its key (a constant of the caller: letters,
// digits, '_', '-', '.', '/'), at the depth of the mappings begun and not ended.
class Writer {
 public:
  // "# text": every line of `text` a comment line, its characters outside printable ASCII
  // escaped (a comment cannot be ended by what it holds).
  void comment(std::string_view text);
  void string(std::string_view key, std::string_view value);
  // Text of several lines (a script): a literal block when it can be one exactly, else quoted.
  void text(std::string_view key, std::string_view value);
  void integer(std::string_view key, long long value);
  void boolean(std::string_view key, bool value);
  // key: and a mapping below it, until end().
  void begin(std::string_view key);
  void end();
  // A list of strings under `key`.
  void strings(std::string_view key, const std::vector<std::string>& values);
  // A list of mappings under `key`: item() before each mapping's keys, end() after each, and
  // end() after the list.
  void items(std::string_view key);
  void item();

  const std::string& str() const { return out_; }

 private:
  void put_key(std::string_view key);
  std::string indent() const { return std::string(2 * depth_, ' '); }

  std::string out_;
  int depth_ = 0;
  bool dash_ = false;  // the next key opens an item of a list: "- key:"
};

}  // namespace nubo::yaml
