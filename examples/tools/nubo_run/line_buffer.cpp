#include "line_buffer.hpp"

namespace nubo::run {

std::string LineBuffer::feed(std::string_view bytes) {
  std::string out;
  while (!bytes.empty()) {
    const auto nl = bytes.find('\n');
    const std::size_t room = kMaxLine - partial_.size();
    if (nl == std::string_view::npos || nl > room) {
      // No end of line yet: keep what fits; a line at the limit is cut and marked.
      const std::size_t take = std::min(bytes.size(), room);
      partial_.append(bytes.substr(0, take));
      bytes.remove_prefix(take);
      if (partial_.size() == kMaxLine) {
        out += prefix_ + partial_ + " [line cut at 64 KiB]\n";
        partial_.clear();
      }
      continue;
    }
    out += prefix_;
    out += partial_;
    out.append(bytes.substr(0, nl + 1));
    partial_.clear();
    bytes.remove_prefix(nl + 1);
  }
  return out;
}

std::string LineBuffer::finish() {
  if (partial_.empty()) return {};
  std::string out = prefix_ + partial_ + "\n";
  partial_.clear();
  return out;
}

}  // namespace nubo::run
