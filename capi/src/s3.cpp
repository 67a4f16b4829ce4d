// nubo_s3_copy through the C ABI: options, the progress callback and the summary.
#include "nubo/s3.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "sized_struct.hpp"
#include "transfer_convert.hpp"

namespace {

using nubo::Errc;
using nubo::Error;

nubo_s3_copy_options default_copy() {
  const nubo::s3::CopyOptions d;
  nubo_s3_copy_options o{};
  o.struct_size = sizeof o;
  o.streams = d.streams;
  o.sync = d.sync ? 1 : 0;
  return o;
}

std::string text_or_empty(const char* s) {
  return s == nullptr ? std::string() : std::string(s);
}

}  // namespace

extern "C" {

NUBO_C_API nubo_status nubo_s3_copy_options_init(nubo_s3_copy_options* options,
                                                 size_t struct_size) {
  return nubo::capi::guard("nubo_s3_copy_options_init", [&] {
    nubo::capi::require(options, "options");
    nubo::capi::init_sized(default_copy(), options, struct_size, "nubo_s3_copy_options");
  });
}

NUBO_C_API nubo_status nubo_s3_copy(const char* from, const char* to,
                                    const nubo_s3_copy_options* options,
                                    nubo_s3_copy_summary* summary) {
  return nubo::capi::guard("nubo_s3_copy", [&] {
    nubo::capi::require(from, "from");
    nubo::capi::require(to, "to");
    nubo::capi::check_out_size(summary, "summary", "nubo_s3_copy_summary");
    auto o = default_copy();
    if (options) o = nubo::capi::read_sized(*options, o, "options", "nubo_s3_copy_options_init()");
    nubo::s3::CopyOptions c;
    c.streams = o.streams;
    c.part_size = o.part_size;
    c.keep_partial = o.keep_partial != 0;
    c.sync = o.sync != 0;
    c.profile = text_or_empty(o.profile);
    c.server_side_encryption = text_or_empty(o.server_side_encryption);
    c.kms_key_id = text_or_empty(o.kms_key_id);
    c.exclude = nubo::capi::to_strings(o.exclude, o.exclude_count, "options->exclude");
    c.include = nubo::capi::to_strings(o.include, o.include_count, "options->include");
    c.progress = nubo::capi::wrap_progress(o.progress, o.progress_user);
    c.rate = o.rate;
    c.key_file = text_or_empty(o.key_file);
    const auto s = nubo::s3::copy(from, to, c);
    if (summary == nullptr) return;
    nubo_s3_copy_summary out{};
    out.files = s.files;
    out.bytes = s.bytes;
    out.bytes_sent = s.bytes_sent;
    out.bytes_resumed = s.bytes_resumed;
    out.parts = s.parts;
    out.seconds = s.seconds;
    nubo::capi::write_sized(out, summary, "summary", "nubo_s3_copy_summary");
  });
}

}  // extern "C"
