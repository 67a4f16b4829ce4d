// What every nubo command line shares, so that the tools behave alike:
//  - `--version`;
//  - exit status 2 for any malformed command line (CLI11's own codes, 105 to 115, read like a
//    failed rank's or a tool's own status);
//  - number checks that refuse NaN and infinities, which pass CLI11's range checks (NaN
//    compares false with every bound) and would then disable what they set;
//  - duration, size and rate checks that refuse empty and zero values where they mean nothing.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "nubo/env.hpp"
#include "nubo/error.hpp"
#include "nubo/units.hpp"
#include "nubo/version.h"

namespace nubo_cli {

constexpr int kExitUsage = 2;

#define NUBO_CLI_TEXT(x) #x
#define NUBO_CLI_VERSION(a, b, c) NUBO_CLI_TEXT(a) "." NUBO_CLI_TEXT(b) "." NUBO_CLI_TEXT(c)

// "--version" prints "nubo-run 0.1.0 (C ABI 1)".
inline void add_version(CLI::App& app, const std::string& tool) {
  app.set_version_flag(
      "--version",
      tool + " " + NUBO_CLI_VERSION(NUBO_VERSION_MAJOR, NUBO_VERSION_MINOR, NUBO_VERSION_PATCH) +
          " (C ABI " + std::to_string(NUBO_ABI_VERSION) + ")");
}

// A count with its noun, as a summary line says it: "1 file", "3 files", "2 entries".
inline std::string count_of(unsigned long long n, const char* one, const char* many = nullptr) {
  return std::to_string(n) + " " +
         (n == 1 ? std::string(one)
          : many ? std::string(many)
                 : std::string(one) + "s");
}

// "<tool>: <message>" on stderr, escaped: names in it may come from an archive, a peer or a
// server, and must not reach the terminal as control characters.
inline void print_error(const char* tool, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", tool, nubo::printable(message).c_str());
}

// Parses the command line, then checks the environment: -1 to go on, else the status to exit
// with (0 after --help or --version, kExitUsage after an error, which is printed). A malformed
// NUBO_* variable is a usage error as a malformed flag is, found before any work.
inline int parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  try {
    nubo::check_environment();
    return -1;
  } catch (const nubo::Error& e) {
    const std::string tool = argc > 0 ? argv[0] : "nubo";
    print_error(tool.substr(tool.rfind('/') + 1).c_str(), e.what());
    return kExitUsage;
  }
}

// A finite number in [min, max] (shown in --help as `shown`): CLI::Range's job, with NaN and
// infinities refused.
inline CLI::Validator Range(double min, double max, std::string shown = {}) {
  if (shown.empty())
    shown = "NUMBER in [" + CLI::detail::to_string(min) + " - " + CLI::detail::to_string(max) + "]";
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(v))
          return "'" + text + "' is not a finite number";
        if (v < min || v > max)
          return "Value " + text + " not in range [" + CLI::detail::to_string(min) + " - " +
                 CLI::detail::to_string(max) + "]";
        return {};
      },
      shown);
}
// Text that must say something: an empty value would silently mean the default.
inline const CLI::Validator NonEmpty(
    [](std::string& text) -> std::string {
      return text.empty() ? "is empty: give a value, or leave the option out for its default" : "";
    },
    "TEXT");
inline const CLI::Validator PositiveNumber = Range(1e-300, 1e300, "POSITIVE");
inline const CLI::Validator NonNegativeNumber = Range(0, 1e300, "NONNEGATIVE");
inline const CLI::Validator Finite = Range(-1e300, 1e300, "NUMBER");

// A duration, size or rate as nubo/units.hpp reads them (the tool parses it again when it
// runs): refused at once, with the reason, when malformed, empty, or zero where `positive`.
inline CLI::Validator Units(double (*parse)(std::string_view, std::string_view), bool positive,
                            const std::string& shown) {
  return CLI::Validator(
      [parse, positive](std::string& text) -> std::string {
        try {
          if (parse(text, "") <= 0 && positive) return "'" + text + "' must be more than 0";
          return {};
        } catch (const std::exception& e) {
          std::string why = e.what();  // ": '' is empty: use ..." (CLI11 names the flag)
          return why.rfind(": ", 0) == 0 ? why.substr(2) : why;
        }
      },
      shown);
}
inline double bytes_as_double(std::string_view text, std::string_view what) {
  return static_cast<double>(nubo::parse_bytes(text, what));
}
inline const CLI::Validator PositiveDuration = Units(nubo::parse_duration, true, "DURATION > 0");
inline const CLI::Validator Duration = Units(nubo::parse_duration, false, "DURATION");
inline const CLI::Validator PositiveSize = Units(bytes_as_double, true, "SIZE > 0");
inline const CLI::Validator PositiveRate = Units(nubo::parse_rate, true, "RATE > 0");
inline const CLI::Validator PositiveCount = Units(nubo::parse_count, true, "COUNT > 0");

}  // namespace nubo_cli
