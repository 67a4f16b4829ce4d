#include "read_commands.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "archive_output.hpp"
#include "key_option.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "nubo/units.hpp"
#include "stop_signals.hpp"

namespace nubo_xfer {
namespace {

namespace xfer = nubo::transfer;

std::string mode_string(const xfer::Entry& e) {
  std::string s = e.kind == xfer::EntryKind::directory ? "d"
                  : e.kind == xfer::EntryKind::symlink ? "l"
                                                       : "-";
  const char* rwx = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i) s += (e.mode >> (8 - i)) & 1 ? rwx[i] : '-';
  return s;
}

std::string time_string(std::int64_t ns) {
  std::time_t t = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

// -v of list and cat: what reading the archive cost, on stderr (archives in a store are read by
// range).
void report_fetched(const xfer::Reader& reader, const std::string& archive) {
  std::fprintf(stderr, "nubo-xfer: read %s of %s over the network\n",
               nubo::format_bytes(static_cast<double>(reader.bytes_fetched()), 2).c_str(),
               archive.c_str());
}

int list(const std::string& archive, const std::string& key_file, bool long_format, bool verbose,
         const Common& c) {
  xfer::Reader reader(archive, key_file);
  const auto& entries = reader.entries();
  if (verbose) report_fetched(reader, archive);
  if (c.json) {
    auto out = nlohmann::json::array();
    for (const auto& e : entries) {
      nlohmann::json j = {{"path", e.path},         {"kind", xfer::entry_kind_name(e.kind)},
                          {"size", e.size},         {"mode", e.mode},
                          {"mtime_ns", e.mtime_ns}, {"stored_size", e.stored_size},
                          {"chunks", e.chunks}};
      if (!e.hash.empty()) j["xxh3_128"] = e.hash;
      if (!e.link_target.empty()) j["link_target"] = e.link_target;
      out.push_back(j);
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  // Names as the archive holds them may hold anything but '/' and NUL: escaped, one a line.
  if (long_format)
    std::printf("%-10s %14s %12s %-16s %s\n", "MODE", "SIZE", "STORED", "MODIFIED", "PATH");
  for (const auto& e : entries) {
    const auto name = nubo::printable(e.path);
    if (long_format) {
      std::printf("%s %14llu %12llu %s %s", mode_string(e).c_str(),
                  static_cast<unsigned long long>(e.size),
                  static_cast<unsigned long long>(e.stored_size), time_string(e.mtime_ns).c_str(),
                  name.c_str());
      if (!e.link_target.empty()) std::printf(" -> %s", nubo::printable(e.link_target).c_str());
      std::printf("\n");
    } else {
      std::printf("%s\n", name.c_str());
    }
  }
  return 0;
}

// The entries a mistyped path most likely meant: files whose path ends in "/<path>" (a name
// given without its folders), or the path without a leading "./" or "/"; at most three.
std::string near_misses(const xfer::Reader& reader, std::string path) {
  while (path.rfind("./", 0) == 0) path.erase(0, 2);
  while (!path.empty() && path.front() == '/') path.erase(0, 1);
  std::string found;
  int count = 0;
  for (const auto& e : reader.entries()) {
    const auto& p = e.path;
    const bool tail = p.size() > path.size() &&
                      p.compare(p.size() - path.size(), path.size(), path) == 0 &&
                      p[p.size() - path.size() - 1] == '/';
    if (path.empty() || (p != path && !tail)) continue;
    found += (count ? " or '" : "'") + nubo::printable(p) + "'";
    if (++count == 3) break;
  }
  return found;
}

int cat(const std::string& archive, const std::string& key_file, const std::string& path,
        bool verbose) {
  xfer::Reader reader(archive, key_file);
  const auto* e = reader.find(path);
  if (!e) {
    const auto near = near_misses(reader, path);
    throw nubo::Error(nubo::Errc::not_found,
                      archive + ": no entry '" + path + "'" +
                          (near.empty() ? std::string("; `list` shows the entries")
                                        : "; did you mean " + near +
                                              "? (entries are named from the archive's root)"));
  }
  if (e->kind != xfer::EntryKind::file) {
    throw nubo::Error(nubo::Errc::invalid_argument,
                      archive + ": '" + path + "' is a " +
                          std::string(xfer::entry_kind_name(e->kind)) + ", not a file: cat " +
                          "writes one file's content");
  }
  std::vector<std::byte> buffer(reader.chunk_size());
  for (std::uint64_t at = 0; at < e->size;) {
    if (nubo_cli::stop_requested) throw nubo::Error(nubo::Errc::cancelled, "interrupted");
    auto n = reader.read(path, at, buffer);
    if (n == 0) break;
    for (std::size_t done = 0; done < n;) {
      auto w = ::write(STDOUT_FILENO, buffer.data() + done, n - done);
      if (w < 0) {
        if (errno == EINTR) continue;
        throw nubo::Error(nubo::Errc::io,
                          std::string("writing to stdout failed: ") + std::strerror(errno));
      }
      done += static_cast<std::size_t>(w);
    }
    at += n;
  }
  if (verbose) report_fetched(reader, archive);
  return 0;
}

struct ReadArgs {
  std::string archive, path;
  bool long_format = false, verbose = false;
  ReadKey read_key;
  Common common;
};

}  // namespace

nubo_cli::Command list_command(CLI::App& app) {
  auto a = std::make_shared<ReadArgs>();
  auto* cmd = app.add_subcommand("list", "list the entries of an archive");
  cmd->add_option("archive", a->archive, "the archive")->required();
  cmd->add_flag("-l,--long", a->long_format, "mode, size, stored size, time, path");
  cmd->add_flag("-v,--verbose", a->verbose, "say on stderr how many bytes were read");
  add_read_key(cmd, a->read_key, kArchiveKeyHelp);
  add_common(cmd, a->common, false);
  return {[cmd] { return cmd->parsed(); },
          [a] {
            return list(a->archive, key_spec(a->read_key), a->long_format, a->verbose, a->common);
          },
          true};
}

nubo_cli::Command cat_command(CLI::App& app) {
  auto a = std::make_shared<ReadArgs>();
  auto* cmd = app.add_subcommand("cat", "write one file of an archive to stdout");
  cmd->add_option("archive", a->archive, "the archive")->required();
  cmd->add_option("path", a->path, "the file's path in the archive")->required();
  cmd->add_flag("-v,--verbose", a->verbose, "say on stderr how many bytes were read");
  add_read_key(cmd, a->read_key, kArchiveKeyHelp);
  return {[cmd] { return cmd->parsed(); },
          [a] { return cat(a->archive, key_spec(a->read_key), a->path, a->verbose); }, true};
}

}  // namespace nubo_xfer
