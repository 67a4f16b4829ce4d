// The S3-named copy, kept until the next ABI break (docs/abi.md): nubo::transfer::copy
// (nubo/copy.hpp) does the same for every store, with the S3 options in its `s3` member.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nubo/copy.hpp"
#include "nubo/export.hpp"
#include "nubo/transfer.hpp"

namespace nubo::s3 {

// transfer::CopyOptions with the S3 options among the others.
struct CopyOptions {
  int streams = 4;
  std::uint64_t part_size = 0;
  bool keep_partial = false;
  bool sync = true;
  std::string profile;
  std::string server_side_encryption, kms_key_id;
  std::vector<std::string> exclude, include;
  std::string journal_dir;
  transfer::ProgressFn progress;
  double rate = 0;
  std::string key_file;
};

using CopySummary = transfer::CopySummary;

// transfer::copy for s3:// URLs.
NUBO_API CopySummary copy(const std::string& from, const std::string& to,
                          const CopyOptions& options = {});

}  // namespace nubo::s3
