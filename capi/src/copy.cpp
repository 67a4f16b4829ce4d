// nubo_transfer_copy through the C ABI (and nubo_s3_copy, its S3-named form): options with the
// S3 extension, the progress callback and the summary.
#include "nubo/copy.hpp"
#include "generated/results.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "sized_struct.hpp"
#include "transfer_convert.hpp"

namespace {

nubo_transfer_copy_options default_copy() {
  const nubo::transfer::CopyOptions d;
  nubo_transfer_copy_options o{};
  o.struct_size = sizeof o;
  o.streams = d.streams;
  o.sync = d.sync ? 1 : 0;
  return o;
}

nubo_transfer_s3_options default_s3() {
  nubo_transfer_s3_options o{};
  o.struct_size = sizeof o;
  return o;
}

nubo_s3_copy_options default_s3_copy() {
  const auto c = default_copy();
  nubo_s3_copy_options o{};
  o.struct_size = sizeof o;
  o.streams = c.streams;
  o.sync = c.sync;
  return o;
}

std::string text_or_empty(const char* s) {
  return s == nullptr ? std::string() : std::string(s);
}

// Copies, and writes the summary (either struct, made by `to_c`) when asked for.
template <typename Summary>
void copy_with(const char* from, const char* to, const nubo_transfer_copy_options& o,
               const nubo_transfer_s3_options& s3, Summary* summary, const char* summary_type,
               Summary (*to_c)(const nubo::transfer::CopySummary&)) {
  nubo::capi::require(from, "from");
  nubo::capi::require(to, "to");
  nubo::capi::check_out_size(summary, "summary", summary_type);
  nubo::transfer::CopyOptions c;
  c.streams = o.streams;
  c.part_size = o.part_size;
  c.keep_partial = o.keep_partial != 0;
  c.sync = o.sync != 0;
  c.exclude = nubo::capi::to_strings(o.exclude, o.exclude_count, "options->exclude");
  c.include = nubo::capi::to_strings(o.include, o.include_count, "options->include");
  c.progress = nubo::capi::wrap_progress(o.progress, o.progress_user);
  c.rate = o.rate;
  c.key_file = text_or_empty(o.key_file);
  c.journal_dir = text_or_empty(o.journal_dir);
  c.s3 = {text_or_empty(s3.profile), text_or_empty(s3.server_side_encryption),
          text_or_empty(s3.kms_key_id)};
  const auto s = nubo::transfer::copy(from, to, c);
  if (summary != nullptr) nubo::capi::write_sized(to_c(s), summary, "summary", summary_type);
}

}  // namespace

extern "C" {

NUBO_C_API nubo_status nubo_transfer_copy_options_init(nubo_transfer_copy_options* options,
                                                       size_t struct_size) {
  return nubo::capi::guard("nubo_transfer_copy_options_init", [&] {
    nubo::capi::require(options, "options");
    nubo::capi::init_sized(default_copy(), options, struct_size, "nubo_transfer_copy_options");
  });
}

NUBO_C_API nubo_status nubo_transfer_s3_options_init(nubo_transfer_s3_options* options,
                                                     size_t struct_size) {
  return nubo::capi::guard("nubo_transfer_s3_options_init", [&] {
    nubo::capi::require(options, "options");
    nubo::capi::init_sized(default_s3(), options, struct_size, "nubo_transfer_s3_options");
  });
}

NUBO_C_API nubo_status nubo_transfer_copy(const char* from, const char* to,
                                          const nubo_transfer_copy_options* options,
                                          nubo_transfer_copy_summary* summary) {
  return nubo::capi::guard("nubo_transfer_copy", [&] {
    auto o = default_copy();
    if (options)
      o = nubo::capi::read_sized(*options, o, "options", "nubo_transfer_copy_options_init()");
    auto s3 = default_s3();
    if (o.s3)
      s3 = nubo::capi::read_sized(*o.s3, s3, "options->s3", "nubo_transfer_s3_options_init()");
    copy_with(from, to, o, s3, summary, "nubo_transfer_copy_summary",
              nubo::capi::to_nubo_transfer_copy_summary);
  });
}

NUBO_C_API int nubo_transfer_is_store_url(const char* text) {
  return text != nullptr && nubo::transfer::is_store_url(text) ? 1 : 0;
}

NUBO_C_API nubo_status nubo_s3_copy_options_init(nubo_s3_copy_options* options,
                                                 size_t struct_size) {
  return nubo::capi::guard("nubo_s3_copy_options_init", [&] {
    nubo::capi::require(options, "options");
    nubo::capi::init_sized(default_s3_copy(), options, struct_size, "nubo_s3_copy_options");
  });
}

NUBO_C_API nubo_status nubo_s3_copy(const char* from, const char* to,
                                    const nubo_s3_copy_options* options,
                                    nubo_s3_copy_summary* summary) {
  return nubo::capi::guard("nubo_s3_copy", [&] {
    auto s = default_s3_copy();
    if (options) s = nubo::capi::read_sized(*options, s, "options", "nubo_s3_copy_options_init()");
    auto o = default_copy();
    o.streams = s.streams;
    o.part_size = s.part_size;
    o.keep_partial = s.keep_partial;
    o.sync = s.sync;
    o.exclude = s.exclude;
    o.exclude_count = s.exclude_count;
    o.include = s.include;
    o.include_count = s.include_count;
    o.progress = s.progress;
    o.progress_user = s.progress_user;
    o.rate = s.rate;
    o.key_file = s.key_file;
    auto s3 = default_s3();
    s3.profile = s.profile;
    s3.server_side_encryption = s.server_side_encryption;
    s3.kms_key_id = s.kms_key_id;
    copy_with(from, to, o, s3, summary, "nubo_s3_copy_summary",
              nubo::capi::to_nubo_s3_copy_summary);
  });
}

}  // extern "C"
