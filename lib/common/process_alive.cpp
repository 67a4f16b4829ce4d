#include "common/process_alive.hpp"

#include <fstream>
#include <sstream>
#include <string>

namespace nubo::proc {

std::uint64_t start_time(long pid) {
  if (pid <= 0) return 0;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return 0;
  // "pid (comm) state ppid ..." where comm may hold spaces and parentheses: fields count from
  // the last ')'. The state is field 3, the start time field 22.
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 1));
  std::string state;
  fields >> state;
  if (state == "Z" || state == "X" || state == "x") return 0;
  std::string skip;
  for (int field = 4; field < 22; ++field) fields >> skip;
  std::uint64_t started = 0;
  fields >> started;
  return fields ? started : 0;
}

bool alive(long pid, std::uint64_t started) {
  return started != 0 && start_time(pid) == started;
}

}  // namespace nubo::proc
