#include "device/preflight/group_timer.hpp"

#include <atomic>

namespace nubo::detail {
namespace {
std::atomic<AllReduceTimer> g_timer{nullptr};  // constant-initialised: safe before main
}  // namespace

void register_all_reduce_timer(AllReduceTimer timer) {
  g_timer.store(timer);
}

AllReduceTimer all_reduce_timer() {
  return g_timer.load();
}

}  // namespace nubo::detail
