// The interruption watcher through the C ABI: a handle around nubo::InterruptionWatcher whose
// callback is handed the notice as a C struct.
#include "nubo/interruption.hpp"

#include <cmath>
#include <memory>

#include "generated/results.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "text_out.hpp"

struct nubo_interruption_watcher {
  std::unique_ptr<nubo::InterruptionWatcher> watcher;
};

extern "C" {

NUBO_C_API nubo_status nubo_interruption_watcher_create(nubo_interruption_callback on_notice,
                                                        void* user, double poll_seconds,
                                                        nubo_interruption_watcher** out) {
  return nubo::capi::guard("nubo_interruption_watcher_create", [&] {
    nubo::capi::require(out, "out");
    *out = nullptr;
    if (on_notice == nullptr)
      throw nubo::Error(nubo::Errc::invalid_argument, "on_notice is NULL: nothing to call");
    if (!(poll_seconds > 0) || !std::isfinite(poll_seconds))
      throw nubo::Error(nubo::Errc::invalid_argument,
                        "poll_seconds must be a number of seconds above 0");
    auto h = std::make_unique<nubo_interruption_watcher>();
    h->watcher = std::make_unique<nubo::InterruptionWatcher>(
        [on_notice, user](const nubo::InterruptionNotice& n) {
          nubo::capi::Texts texts;  // none made: the notice's own strings, valid for the call
          const nubo_interruption_notice c = nubo::capi::to_nubo_interruption_notice(n, texts);
          on_notice(&c, user);
        },
        poll_seconds);
    *out = h.release();
  });
}

NUBO_C_API void nubo_interruption_watcher_free(nubo_interruption_watcher* watcher) {
  delete watcher;
}

NUBO_C_API nubo_status nubo_interruption_watcher_cloud(const nubo_interruption_watcher* watcher,
                                                       char* buf, size_t capacity, size_t* needed) {
  return nubo::capi::guard("nubo_interruption_watcher_cloud", [&] {
    nubo::capi::require(watcher, "watcher");
    nubo::capi::copy_text_out(watcher->watcher->cloud(), "the cloud's name", buf, capacity, needed);
  });
}

}  // extern "C"
