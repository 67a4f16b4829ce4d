#include "transfer/net/drop_report.hpp"

#include "common/text.hpp"
#include "nubo/units.hpp"

namespace nubo::transfer::net {

void DropReport::note(const std::string& why, const std::string& address,
                      const std::string& example) {
  ++total_;
  ++by_reason_[why];
  if (!example.empty()) examples_.try_emplace(why, example);
  if (addresses_.size() < kMaxAddresses) addresses_.insert(address);
}

std::optional<std::string> DropReport::due(Clock::time_point now, bool final) {
  if (total_ == 0 || (!final && now - since_ < period_)) {
    if (total_ == 0) since_ = now;
    return std::nullopt;
  }
  const auto count = [](std::uint64_t n) { return text::group_digits(std::to_string(n)); };
  std::string line = "dropped " + count(total_) + " connection" + (total_ == 1 ? "" : "s") +
                     " from " + (addresses_.size() >= kMaxAddresses ? "at least " : "") +
                     count(addresses_.size()) + " address" + (addresses_.size() == 1 ? "" : "es") +
                     " in the last " +
                     format_duration(std::chrono::duration<double>(now - since_).count()) +
                     " before they authenticated:";
  const char* sep = " ";
  for (const auto& [why, n] : by_reason_) {
    line += sep + count(n) + " " + why;
    if (auto e = examples_.find(why); e != examples_.end()) line += " (e.g. " + e->second + ")";
    sep = "; ";
  }
  by_reason_.clear();
  examples_.clear();
  addresses_.clear();
  total_ = 0;
  since_ = now;
  return line;
}

}  // namespace nubo::transfer::net
