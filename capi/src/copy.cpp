// nubo_transfer_copy through the C ABI (and nubo_s3_copy, its S3-named form): the options and
// the summary go through their generated conversions (generated/options.hpp, results.hpp).
#include "nubo/copy.hpp"
#include "generated/options.hpp"
#include "generated/results.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "nubo/s3.hpp"
#include "sized_struct.hpp"
#include "text_out.hpp"
#include "transfer_convert.hpp"

namespace {

// The arguments every copy entry point checks before it moves anything.
template <typename Summary>
void check_arguments(const char* from, const char* to, const Summary* summary, const char* type) {
  nubo::capi::require(from, "from");
  nubo::capi::require(to, "to");
  nubo::capi::check_out_size(summary, "summary", type);
}

}  // namespace

namespace nubo::capi {

std::function<void(const std::string&)> wrap_change(nubo_transfer_change_callback callback,
                                                    void* user) {
  if (callback == nullptr) return {};
  return [callback, user](const std::string& change) { callback(change.c_str(), user); };
}

}  // namespace nubo::capi

extern "C" {

NUBO_C_API nubo_status nubo_transfer_copy_options_init(nubo_transfer_copy_options* options,
                                                       size_t struct_size) {
  return nubo::capi::guard("nubo_transfer_copy_options_init", [&] {
    nubo::capi::init_options(nubo::capi::require(options, "options"), struct_size);
  });
}

NUBO_C_API nubo_status nubo_transfer_s3_options_init(nubo_transfer_s3_options* options,
                                                     size_t struct_size) {
  return nubo::capi::guard("nubo_transfer_s3_options_init", [&] {
    nubo::capi::init_options(nubo::capi::require(options, "options"), struct_size);
  });
}

NUBO_C_API nubo_status nubo_transfer_copy(const char* from, const char* to,
                                          const nubo_transfer_copy_options* options,
                                          nubo_transfer_copy_summary* summary) {
  return nubo::capi::guard("nubo_transfer_copy", [&] {
    check_arguments(from, to, summary, "nubo_transfer_copy_summary");
    const auto s = nubo::transfer::copy(from, to, nubo::capi::read_options(options));
    if (summary != nullptr)
      nubo::capi::write_sized(nubo::capi::to_nubo_transfer_copy_summary(s), summary, "summary",
                              "nubo_transfer_copy_summary");
  });
}

NUBO_C_API nubo_status nubo_transfer_sync_options_init(nubo_transfer_sync_options* options,
                                                       size_t struct_size) {
  return nubo::capi::guard("nubo_transfer_sync_options_init", [&] {
    nubo::capi::init_options(nubo::capi::require(options, "options"), struct_size);
  });
}

NUBO_C_API nubo_status nubo_transfer_sync(const char* from, const char* to,
                                          const nubo_transfer_sync_options* options,
                                          nubo_transfer_sync_summary* summary) {
  return nubo::capi::guard("nubo_transfer_sync", [&] {
    check_arguments(from, to, summary, "nubo_transfer_sync_summary");
    const auto s = nubo::transfer::sync(from, to, nubo::capi::read_options(options));
    if (summary != nullptr)
      nubo::capi::write_sized(nubo::capi::to_nubo_transfer_sync_summary(s), summary, "summary",
                              "nubo_transfer_sync_summary");
  });
}

NUBO_C_API nubo_status nubo_transfer_access_policy(const char* const* places, size_t place_count,
                                                   const char* const* operations,
                                                   size_t operation_count, char* buf,
                                                   size_t capacity, size_t* needed) {
  return nubo::capi::guard("nubo_transfer_access_policy", [&] {
    const auto policy = nubo::transfer::access_policy(
        nubo::capi::to_strings(places, place_count, "places"),
        nubo::capi::to_strings(operations, operation_count, "operations"));
    nubo::capi::copy_text_out(policy, "the policy", buf, capacity, needed);
  });
}

NUBO_C_API int nubo_transfer_is_store_url(const char* text) {
  return text != nullptr && nubo::transfer::is_store_url(text) ? 1 : 0;
}

NUBO_C_API nubo_status nubo_s3_copy_options_init(nubo_s3_copy_options* options,
                                                 size_t struct_size) {
  return nubo::capi::guard("nubo_s3_copy_options_init", [&] {
    nubo::capi::init_options(nubo::capi::require(options, "options"), struct_size);
  });
}

NUBO_C_API nubo_status nubo_s3_copy(const char* from, const char* to,
                                    const nubo_s3_copy_options* options,
                                    nubo_s3_copy_summary* summary) {
  return nubo::capi::guard("nubo_s3_copy", [&] {
    check_arguments(from, to, summary, "nubo_s3_copy_summary");
    const auto s = nubo::s3::copy(from, to, nubo::capi::read_options(options));
    if (summary != nullptr)
      nubo::capi::write_sized(nubo::capi::to_nubo_s3_copy_summary(s), summary, "summary",
                              "nubo_s3_copy_summary");
  });
}

}  // extern "C"
