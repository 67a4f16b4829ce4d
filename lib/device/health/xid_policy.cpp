// The XID table: what each critical XID means and what to do about it, after NVIDIA's XID
// catalog (docs.nvidia.com/deploy/xid-errors) and the actions cluster operators take; a policy
// file overrides any row, as k8s-device-plugin users ask for.
#include "common/small_file.hpp"
#include "common/text.hpp"
#include "common/utf8.hpp"
#include "nubo/error.hpp"
#include "nubo/health.hpp"

namespace nubo::device {

std::string_view health_status_name(HealthStatus s) noexcept {
  switch (s) {
    case HealthStatus::ok:
      return "ok";
    case HealthStatus::warn:
      return "warn";
    case HealthStatus::fail:
      return "fail";
  }
  return "?";
}

std::string_view action_name(Action a) noexcept {
  switch (a) {
    case Action::none:
      return "none";
    case Action::restart_application:
      return "restart-application";
    case Action::reset_gpu:
      return "reset-gpu";
    case Action::drain_node:
      return "drain-node";
    case Action::replace_gpu:
      return "replace-gpu";
  }
  return "?";
}

std::vector<XidRule> xid_table() {
  using S = HealthStatus;
  using A = Action;
  return {
      {13, S::warn, A::restart_application, "graphics engine exception (an application fault)"},
      {31, S::warn, A::restart_application, "GPU memory page fault (an application fault)"},
      {43, S::warn, A::restart_application, "the GPU stopped the application's channel"},
      {48, S::fail, A::drain_node, "double-bit ECC error"},
      {63, S::warn, A::reset_gpu,
       "a row remap or page retirement was recorded; a reset applies it"},
      {64, S::fail, A::replace_gpu, "a row remap failed"},
      {74, S::fail, A::reset_gpu, "NVLink error"},
      {79, S::fail, A::drain_node, "the GPU has fallen off the bus"},
      {92, S::warn, A::none, "high single-bit ECC error rate"},
      {94, S::warn, A::restart_application, "contained ECC error (the application was stopped)"},
      {95, S::fail, A::reset_gpu, "uncontained ECC error"},
      {119, S::fail, A::reset_gpu, "GSP timeout"},
      {154, S::fail, A::reset_gpu, "the GPU needs a reset to recover"},
  };
}

namespace {

HealthStatus parse_status(std::string_view s, const std::string& where) {
  if (s == "ok") return HealthStatus::ok;
  if (s == "warn") return HealthStatus::warn;
  if (s == "fail") return HealthStatus::fail;
  throw Error(Errc::invalid_argument,
              where + ": status '" + std::string(s) + "': expected ok, warn or fail");
}

Action parse_action(std::string_view s, const std::string& where) {
  for (Action a : {Action::none, Action::restart_application, Action::reset_gpu, Action::drain_node,
                   Action::replace_gpu})
    if (s == action_name(a)) return a;
  throw Error(Errc::invalid_argument,
              where + ": action '" + std::string(s) +
                  "': expected none, restart-application, reset-gpu, drain-node or replace-gpu");
}

}  // namespace

std::vector<XidRule> xid_table(const std::string& policy_file) {
  auto table = xid_table();
  if (policy_file.empty()) return table;
  // A regular file of at most 1 MiB (10,000 short lines): /dev/zero once grew to 2 GB here, and
  // a FIFO hung the check.
  const auto file = files::read_small_file(policy_file, 1 << 20, "XID policy");
  int number = 0;
  for (const auto line : text::split(file.bytes, '\n')) {
    ++number;
    const std::string where = "XID policy " + policy_file + ":" + std::to_string(number);
    if (number > 10000) throw Error(Errc::invalid_argument, where + ": too many lines");
    const auto body = text::trim(line.substr(0, line.find('#')));
    if (body.empty()) continue;
    const auto fields = text::split_whitespace(body);
    if (fields.size() < 3)
      throw Error(Errc::invalid_argument,
                  where + ": expected 'XID STATUS ACTION [meaning]', e.g. '79 fail drain-node'");
    XidRule rule;
    rule.xid = static_cast<int>(text::parse_int(fields[0], where + ": XID", 1, 100000));
    rule.status = parse_status(fields[1], where);
    rule.action = parse_action(fields[2], where);
    const auto rest = static_cast<std::size_t>(fields[2].data() - body.data()) + fields[2].size();
    rule.meaning = std::string(text::trim(body.substr(rest)));
    utf8::check_plain(rule.meaning, where + ": the meaning", 1024);  // it is printed
    bool replaced = false;
    for (auto& r : table) {
      if (r.xid != rule.xid) continue;
      if (rule.meaning.empty()) rule.meaning = r.meaning;
      r = rule;
      replaced = true;
    }
    if (!replaced) table.push_back(rule);
  }
  return table;
}

}  // namespace nubo::device
