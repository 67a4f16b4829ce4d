// The key options of the commands that read encrypted archives and objects: --key (a key file, or
// kms:KEY) and --kms-region, which lets KMS be asked in a region other than the configured one.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace nubo_xfer {

struct ReadKey {
  std::string key, kms_region;
};

void add_read_key(CLI::App* command, ReadKey& k, const std::string& key_help);
// --key's help for the commands that read an archive (unpack, verify, list, cat).
inline constexpr const char* kArchiveKeyHelp =
    "the key file of an encrypted archive (one under a KMS key needs none, or kms:KEY)";
// The key spec the library takes (nubo/transfer.hpp's key_file): --key as given, or
// kms-region:REGION; Error(invalid_argument) when --kms-region contradicts --key.
std::string key_spec(const ReadKey& k);

}  // namespace nubo_xfer
