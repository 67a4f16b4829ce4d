#include "key_option.hpp"

#include "nubo/error.hpp"

namespace nubo_xfer {

void add_read_key(CLI::App* command, ReadKey& k, const std::string& key_help) {
  command->add_option("--key", k.key, key_help);
  command->add_option("--kms-region", k.kms_region,
                      "let KMS be asked in REGION for archives and objects under a KMS key of "
                      "that region (default: the configured region only, AWS_REGION)");
}

std::string key_spec(const ReadKey& k) {
  if (k.kms_region.empty()) return k.key;
  if (k.key.empty()) return "kms-region:" + k.kms_region;
  // A key ARN names its region already: --kms-region may only repeat it.
  const std::string arn_in_region = ":kms:" + k.kms_region + ":";
  if (k.key.starts_with("kms:arn:") && k.key.find(arn_in_region) != std::string::npos) return k.key;
  throw nubo::Error(nubo::Errc::invalid_argument,
                    "--kms-region " + k.kms_region + " with --key " + k.key +
                        ": give one of them (a KMS key's ARN names its region)");
}

}  // namespace nubo_xfer
