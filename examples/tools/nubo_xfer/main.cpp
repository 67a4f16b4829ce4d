// nubo-xfer: compressed, resumable archives (docs/transfer.md).
//
//   nubo-xfer pack SRC... -o OUT.nubo   files and directories into an archive
//   nubo-xfer unpack ARCHIVE -C DIR     an archive into a directory
//   nubo-xfer list ARCHIVE              its entries (-l: with sizes; --json)
//   nubo-xfer verify ARCHIVE            every checksum, nothing written
//   nubo-xfer cat ARCHIVE PATH          one file to stdout
//   nubo-xfer serve --dest DIR          receive sends (docs/net.md)
//   nubo-xfer send SRC... HOST:PORT     send files to a serve, resumably
//   nubo-xfer cp SRC DST                files and trees to and from s3://, gs://, file:// stores
//
// Interrupted (Ctrl-C, kill -9, power loss), pack and unpack resume when run again with the same
// arguments. Exit status, as rclone splits them: 0 done, 1 error (fatal: retrying will not
// help), 2 bad usage, 3 damaged or refused data, 5 temporary (the peer was unreachable, busy or
// the connection was lost: run the same command again), 130 interrupted (run it again to
// resume).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "chunks_json.hpp"
#include "cli.hpp"
#include "codec_help.hpp"
#include "cp_command.hpp"
#include "key_option.hpp"
#include "net_commands.hpp"
#include "nubo/copy.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "nubo/units.hpp"
#include "progress_bar.hpp"
#include "selection.hpp"
#include "stop_signals.hpp"

namespace {

namespace xfer = nubo::transfer;
using nubo_xfer::ProgressBar;

constexpr int kExitError = 1;
using nubo_cli::kExitUsage;
constexpr int kExitCorrupt = 3;
constexpr int kExitRetry = 5;
constexpr int kExitInterrupted = 130;

// The first interrupt stops the work at its next step (a send first delivers what it has
// queued, for at most 5 s), and ends the program kStopGrace later if the work has not ended; a
// second one ends it at once. Either way what was verified stays verified, and the same command
// resumes. Commands that only read end at once.
constexpr auto kStopGrace = std::chrono::seconds(10);

// Options shared by the subcommands, as given on the command line.
struct Common {
  int threads = 0;
  std::string memory = "64M";
  bool json = false;
  bool quiet = false;
};

void add_common(CLI::App* cmd, Common& c, bool pipeline) {
  if (pipeline) {
    cmd->add_option("--threads", c.threads, "compression/decompression threads (0: every core)")
        ->check(nubo_cli::Range(0, 1024));
    cmd->add_option("--memory", c.memory, "memory for buffers in flight, e.g. 64M (default)");
    cmd->add_flag("--quiet,-q", c.quiet, "no progress display");
  }
  cmd->add_flag("--json", c.json, "print a JSON summary on stdout");
}

nlohmann::json summary_json(const std::string& operation, const xfer::Summary& s) {
  double ratio =
      s.bytes > 0 ? static_cast<double>(s.bytes_stored) / static_cast<double>(s.bytes) : 0;
  return {{"operation", operation},
          {"files", s.files},
          {"directories", s.directories},
          {"symlinks", s.symlinks},
          {"bytes", s.bytes},
          {"bytes_stored", s.bytes_stored},
          {"bytes_skipped", s.bytes_skipped},
          {"ratio", ratio},
          {"chunks", nubo_xfer::chunks_json("total", s.chunks, s.chunks_by_codec)},
          {"seconds", s.seconds},
          {"rate", s.seconds > 0 ? static_cast<double>(s.bytes) / s.seconds : 0},
          {"resumed", s.resumed},
          {"up_to_date", s.up_to_date},
          {"bytes_transferred", s.bytes_transferred},
          {"network_wait_seconds", s.network_wait_seconds}};
}

void report(const std::string& operation, const xfer::Summary& s, const Common& c) {
  if (c.json) {
    std::cout << summary_json(operation, s).dump(2) << "\n";
    return;
  }
  if (c.quiet) return;
  auto moved = s.bytes - std::min(s.bytes, s.bytes_skipped);
  std::fprintf(
      stderr, "nubo-xfer: %s %llu files, %s -> %s (ratio %.3f) in %.2f s, %s/s", operation.c_str(),
      static_cast<unsigned long long>(s.files),
      nubo::format_bytes(static_cast<double>(s.bytes), 2).c_str(),
      nubo::format_bytes(static_cast<double>(s.bytes_stored), 2).c_str(),
      s.bytes ? static_cast<double>(s.bytes_stored) / static_cast<double>(s.bytes) : 0.0, s.seconds,
      nubo::format_bytes(s.seconds > 0 ? static_cast<double>(moved) / s.seconds : 0, 2).c_str());
  // Skipped bytes are either work an interrupted attempt did (resumed) or files found intact:
  // "already done" would read as the latter's being redone work, which it is not.
  if (s.bytes_skipped > 0) {
    std::fprintf(stderr,
                 s.resumed ? ", %s resumed from an interrupted attempt"
                           : ", %s already in place (verified, kept)",
                 nubo::format_bytes(static_cast<double>(s.bytes_skipped), 2).c_str());
  }
  if (s.bytes_transferred > 0) {
    std::fprintf(stderr, ", %s %s the network (%.2f s waited on it)",
                 nubo::format_bytes(static_cast<double>(s.bytes_transferred), 2).c_str(),
                 operation == "packed" ? "over" : "fetched over", s.network_wait_seconds);
  }
  std::fprintf(stderr, "\n");
}

// An archive already at `output` is kept unless -f: one that is not what packing the sources
// makes now is refused, naming how. One that is means the work is done (pack's skip_unchanged
// then says up_to_date), as rsync: a rerun after a pack completed exits 0.
void refuse_other_archive(const std::string& output, const std::vector<std::string>& sources,
                          const xfer::PackOptions& o) {
  std::string why;
  try {
    why = xfer::archive_difference(output, sources, o);
  } catch (const nubo::Error& e) {
    if (e.code() == nubo::Errc::not_found) return;  // none there: an interrupted pack resumes
    // Anything but damage (a malformed URL, missing credentials, an unreachable store) is
    // itself the error, not a sign of another archive there.
    if (e.code() != nubo::Errc::corrupt) throw;
    why = std::string("it is not a complete archive (") + e.what() + ")";
  }
  if (!why.empty())
    throw nubo::Error(nubo::Errc::invalid_argument, output + " already exists and differs from " +
                                                        "the sources: " + why +
                                                        "; pass -f to overwrite it");
}

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nubo-xfer: compressed, resumable archives"};
  app.require_subcommand(1);
  Common common;

  std::vector<std::string> sources;
  std::string output, codec, chunk_size = "4M", target_rate = "0";
  int level = 0;
  bool no_resume = false, no_sync = false, force = false;
  auto* pack = app.add_subcommand("pack", "pack files and directories into an archive");
  pack->add_option("sources", sources, "files and directories to pack")->required();
  pack->add_option("-o,--output", output,
                   "the archive to write, e.g. data.nubo, s3://B/data.nubo, gs://..., file:///... "
                   "(-: stdout)")
      ->required();
  pack->add_option("--codec", codec,
                   nubo_xfer::codec_option_help("zstd", "auto with --target-rate"));
  pack->add_option("--level", level, nubo_xfer::level_option_help());
  pack->add_option("--chunk-size", chunk_size, "bytes per chunk, 4K to 64M (default 4M)");
  pack->add_option("--target-rate", target_rate,
                   "bytes/s the output can take, for auto, e.g. 100M (default: measured)");
  pack->add_flag("--no-resume", no_resume, "start over instead of resuming an interrupted pack");
  pack->add_flag("--no-sync", no_sync, "skip fdatasync (faster, not safe against power loss)");
  pack->add_flag("-f,--force", force, "overwrite an existing archive");
  std::string key_file;
  pack->add_option("--encrypt", key_file,
                   "encrypt with the key in this file (AES-256-GCM; nubo-xfer keygen makes one), "
                   "or kms:KEY for a key from AWS KMS (a key id, alias/NAME or ARN)");
  bool keep_partial = false;
  pack->add_flag("--keep-partial", keep_partial,
                 "-o to a store: a cancel (Ctrl-C) keeps the upload for a rerun instead of "
                 "aborting it");
  nubo_xfer::Selection selection;
  nubo_xfer::add_selection(pack, selection);
  add_common(pack, common, true);

  std::string archive, directory = ".";
  auto* unpack = app.add_subcommand("unpack", "unpack an archive into a directory");
  unpack->add_option("archive", archive, "the archive")->required();
  unpack->add_option("-C,--directory", directory, "where to unpack (default: .)");
  unpack->add_flag("--no-resume", no_resume, "redo everything an interrupted unpack did");
  unpack->add_flag("--no-sync", no_sync, "skip fdatasync before each rename");
  bool preserve_special_modes = false;
  unpack->add_flag("--preserve-special-modes", preserve_special_modes,
                   "keep setuid, setgid and sticky bits (dropped by default)");
  const char* key_help =
      "the key file of an encrypted archive (one under a KMS key needs none, or kms:KEY)";
  nubo_xfer::ReadKey read_key;
  nubo_xfer::add_read_key(unpack, read_key, key_help);
  add_common(unpack, common, true);

  bool long_format = false;
  auto* list_cmd = app.add_subcommand("list", "list the entries of an archive");
  list_cmd->add_option("archive", archive, "the archive")->required();
  list_cmd->add_flag("-l,--long", long_format, "mode, size, stored size, time, path");
  bool verbose = false;
  list_cmd->add_flag("-v,--verbose", verbose, "say on stderr how many bytes were read");
  nubo_xfer::add_read_key(list_cmd, read_key, key_help);
  add_common(list_cmd, common, false);

  auto* verify = app.add_subcommand("verify", "check every checksum of an archive");
  verify->add_option("archive", archive, "the archive")->required();
  nubo_xfer::add_read_key(verify, read_key, key_help);
  add_common(verify, common, true);

  std::string path;
  auto* cat_cmd = app.add_subcommand("cat", "write one file of an archive to stdout");
  cat_cmd->add_option("archive", archive, "the archive")->required();
  cat_cmd->add_option("path", path, "the file's path in the archive")->required();
  cat_cmd->add_flag("-v,--verbose", verbose, "say on stderr how many bytes were read");
  nubo_xfer::add_read_key(cat_cmd, read_key, key_help);

  std::string new_key;
  auto* keygen = app.add_subcommand("keygen", "write a new random key file for --encrypt");
  keygen->add_option("file", new_key, "the key file to create (never replaced)")->required();
  keygen->add_flag("--quiet,-q", common.quiet, "no reminder to keep a copy");

  std::vector<std::string> policy_places, policy_ops;
  auto* policy = app.add_subcommand(
      "policy", "print the IAM policy some operations need on a bucket and prefix, and no more");
  policy->add_option("place", policy_places, "s3://BUCKET/PREFIX, one or more")->required();
  policy
      ->add_option("--ops", policy_ops,
                   "pack, unpack (list, cat, verify), cp, sync, checkpoint, kms:KEY-ARN (SSE-KMS)")
      ->delimiter(',')
      ->required();

  auto net = nubo_xfer::add_net_commands(app);  // send, serve (docs/net.md)
  auto cp = nubo_xfer::add_cp_command(app);     // cp to and from object storage (docs/s3.md)
  auto sync_cmd = nubo_xfer::add_sync_command(app);

  nubo_cli::add_version(app, "nubo-xfer");
  if (const int status = nubo_cli::parse(app, argc, argv); status >= 0) return status;

  const bool only_reads =
      list_cmd->parsed() || cat_cmd->parsed() || keygen->parsed() || policy->parsed();
  nubo_cli::handle_stop_signals(kExitInterrupted,
                                only_reads ? std::chrono::milliseconds(0) : kStopGrace);
  std::optional<ProgressBar> bar;
  try {
    std::uint64_t memory = nubo::parse_bytes(common.memory, "--memory");
    if (net->parsed()) return nubo_xfer::run_net_command(*net);
    if (cp->app->parsed()) return nubo_xfer::run_cp(*cp);
    if (sync_cmd->app->parsed()) return nubo_xfer::run_sync(*sync_cmd);
    if (policy->parsed()) {
      std::fputs(xfer::access_policy(policy_places, policy_ops).c_str(), stdout);
      return 0;
    }
    if (pack->parsed() && selection.dry_run) {
      return nubo_xfer::dry_run(sources, selection, "pack", common.json);
    } else if (pack->parsed()) {
      if (output == "-" && (common.json || (!force && ::isatty(STDOUT_FILENO))))
        throw nubo::Error(nubo::Errc::invalid_argument,
                          common.json ? "-o - writes the archive to stdout: --json cannot go there"
                                      : "not writing an archive to a terminal (-f to force)");
      xfer::PackOptions o;
      // zstd unless a rate to keep up with is given: then auto trades ratio for speed.
      if (codec.empty()) codec = target_rate != "0" ? "auto" : "zstd";
      o.codec = xfer::parse_codec(codec);
      o.level = level;
      o.chunk_size = nubo::parse_bytes(chunk_size, "--chunk-size");
      o.target_rate = nubo::parse_rate(target_rate, "--target-rate");
      o.threads = common.threads;
      o.memory_limit = memory;
      o.resume = !no_resume;
      o.sync = !no_sync;
      o.exclude = selection.exclude;
      o.include = selection.include;
      o.key_file = key_file;
      o.keep_partial = keep_partial;
      o.skip_unchanged = !force;
      if (output != "-" && !force) refuse_other_archive(output, sources, o);
      bar.emplace("packed", common.quiet);
      o.progress = [&](const xfer::Progress& p) { return (*bar)(p); };
      auto s = xfer::pack(sources, output, o);
      bar->finish();
      if (s.up_to_date && !common.json && !common.quiet)
        std::fprintf(stderr, "nubo-xfer: %s is up to date with its sources: nothing to do\n",
                     output.c_str());
      else
        report("packed", s, common);
    } else if (unpack->parsed()) {
      xfer::UnpackOptions o;
      o.threads = common.threads;
      o.memory_limit = memory;
      o.resume = !no_resume;
      o.sync = !no_sync;
      o.preserve_special_modes = preserve_special_modes;
      o.key_file = nubo_xfer::key_spec(read_key);
      bar.emplace("unpacked", common.quiet);
      o.progress = [&](const xfer::Progress& p) { return (*bar)(p); };
      auto s = xfer::unpack(archive, directory, o);
      bar->finish();
      report("unpacked", s, common);
    } else if (verify->parsed()) {
      xfer::VerifyOptions o;
      o.threads = common.threads;
      o.memory_limit = memory;
      o.key_file = nubo_xfer::key_spec(read_key);
      bar.emplace("verified", common.quiet);
      o.progress = [&](const xfer::Progress& p) { return (*bar)(p); };
      auto s = xfer::verify(archive, o);
      bar->finish();
      report("verified", s, common);
      if (!common.json && !common.quiet)
        std::fprintf(stderr, "nubo-xfer: %s is intact\n", archive.c_str());
    } else if (list_cmd->parsed()) {
      return list(archive, nubo_xfer::key_spec(read_key), long_format, verbose, common);
    } else if (cat_cmd->parsed()) {
      return cat(archive, nubo_xfer::key_spec(read_key), path, verbose);
    } else if (keygen->parsed()) {
      xfer::keygen(new_key);
      if (!common.quiet)
        std::fprintf(stderr,
                     "nubo-xfer: wrote a new key to %s: keep a copy; without it the "
                     "archives encrypted with it cannot be read\n",
                     new_key.c_str());
    }
    return 0;
  } catch (const nubo::Error& e) {
    if (bar) bar->finish();
    if (e.code() == nubo::Errc::cancelled) {
      std::fprintf(stderr, "nubo-xfer: interrupted; run the same command again to resume\n");
      return kExitInterrupted;
    }
    nubo_cli::print_error("nubo-xfer", e.what());
    switch (e.code()) {
      case nubo::Errc::invalid_argument:
        return kExitUsage;
      case nubo::Errc::corrupt:
        return kExitCorrupt;
      case nubo::Errc::unavailable:
      case nubo::Errc::timeout:
        return kExitRetry;
      default:
        return kExitError;
    }
  }
}
