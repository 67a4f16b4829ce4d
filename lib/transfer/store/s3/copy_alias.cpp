// nubo::s3::copy, the S3-named copy kept until the next ABI break: transfer::copy with the S3
// options in their member.
#include "nubo/s3.hpp"

namespace nubo::s3 {

CopySummary copy(const std::string& from, const std::string& to, const CopyOptions& options) {
  transfer::CopyOptions o;
  o.streams = options.streams;
  o.part_size = options.part_size;
  o.keep_partial = options.keep_partial;
  o.sync = options.sync;
  o.exclude = options.exclude;
  o.include = options.include;
  o.journal_dir = options.journal_dir;
  o.progress = options.progress;
  o.rate = options.rate;
  o.key_file = options.key_file;
  o.s3 = {options.profile, options.server_side_encryption, options.kms_key_id, {}};
  return transfer::copy(from, to, o);
}

}  // namespace nubo::s3
