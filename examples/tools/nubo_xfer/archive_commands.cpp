#include "archive_commands.hpp"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "archive_output.hpp"
#include "codec_help.hpp"
#include "key_option.hpp"
#include "nubo/copy.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "nubo/units.hpp"
#include "progress_bar.hpp"
#include "selection.hpp"

namespace nubo_xfer {
namespace {

namespace xfer = nubo::transfer;

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

struct PackArgs {
  std::vector<std::string> sources;
  std::string output, codec, chunk_size = "4M", target_rate = "0", key_file;
  int level = 0;
  bool no_resume = false, no_sync = false, force = false, keep_partial = false;
  Selection selection;
  Common common;
};

int pack(PackArgs& a) {
  const Common& common = a.common;
  const auto memory = nubo::parse_bytes(common.memory, "--memory");
  if (a.selection.dry_run) return dry_run(a.sources, a.selection, "pack", common.json);
  if (a.output == "-" && (common.json || (!a.force && ::isatty(STDOUT_FILENO))))
    throw nubo::Error(nubo::Errc::invalid_argument,
                      common.json ? "-o - writes the archive to stdout: --json cannot go there"
                                  : "not writing an archive to a terminal (-f to force)");
  xfer::PackOptions o;
  // zstd unless a rate to keep up with is given: then auto trades ratio for speed.
  o.codec = xfer::parse_codec(!a.codec.empty()       ? a.codec
                              : a.target_rate != "0" ? std::string("auto")
                                                     : std::string("zstd"));
  o.level = a.level;
  o.chunk_size = nubo::parse_bytes(a.chunk_size, "--chunk-size");
  o.target_rate = nubo::parse_rate(a.target_rate, "--target-rate");
  o.threads = common.threads;
  o.memory_limit = memory;
  o.resume = !a.no_resume;
  o.sync = !a.no_sync;
  o.exclude = a.selection.exclude;
  o.include = a.selection.include;
  o.key_file = a.key_file;
  o.keep_partial = a.keep_partial;
  o.skip_unchanged = !a.force;
  if (a.output != "-" && !a.force) refuse_other_archive(a.output, a.sources, o);
  ProgressBar bar("packed", common.quiet);  // its line ends when this returns or throws
  o.progress = [&](const xfer::Progress& p) { return bar(p); };
  auto s = xfer::pack(a.sources, a.output, o);
  bar.finish();
  if (s.up_to_date && !common.json && !common.quiet)
    std::fprintf(stderr, "nubo-xfer: %s is up to date with its sources: nothing to do\n",
                 a.output.c_str());
  else
    report("packed", s, common);
  return 0;
}

struct UnpackArgs {
  std::string archive, directory = ".";
  bool no_resume = false, no_sync = false, preserve_special_modes = false;
  ReadKey read_key;
  Common common;
};

int unpack(const UnpackArgs& a) {
  xfer::UnpackOptions o;
  o.threads = a.common.threads;
  o.memory_limit = nubo::parse_bytes(a.common.memory, "--memory");
  o.resume = !a.no_resume;
  o.sync = !a.no_sync;
  o.preserve_special_modes = a.preserve_special_modes;
  o.key_file = key_spec(a.read_key);
  ProgressBar bar("unpacked", a.common.quiet);
  o.progress = [&](const xfer::Progress& p) { return bar(p); };
  auto s = xfer::unpack(a.archive, a.directory, o);
  bar.finish();
  report("unpacked", s, a.common);
  return 0;
}

int verify(const UnpackArgs& a) {
  xfer::VerifyOptions o;
  o.threads = a.common.threads;
  o.memory_limit = nubo::parse_bytes(a.common.memory, "--memory");
  o.key_file = key_spec(a.read_key);
  ProgressBar bar("verified", a.common.quiet);
  o.progress = [&](const xfer::Progress& p) { return bar(p); };
  auto s = xfer::verify(a.archive, o);
  bar.finish();
  report("verified", s, a.common);
  if (!a.common.json && !a.common.quiet)
    std::fprintf(stderr, "nubo-xfer: %s is intact\n", a.archive.c_str());
  return 0;
}

}  // namespace

nubo_cli::Command pack_command(CLI::App& app) {
  auto a = std::make_shared<PackArgs>();
  auto* pack_cmd = app.add_subcommand("pack", "pack files and directories into an archive");
  pack_cmd->add_option("sources", a->sources, "files and directories to pack")->required();
  pack_cmd
      ->add_option("-o,--output", a->output,
                   "the archive to write, e.g. data.nubo, s3://B/data.nubo, gs://..., file:///... "
                   "(-: stdout)")
      ->required();
  pack_cmd->add_option("--codec", a->codec, codec_option_help("zstd", "auto with --target-rate"));
  pack_cmd->add_option("--level", a->level, level_option_help());
  pack_cmd->add_option("--chunk-size", a->chunk_size, "bytes per chunk, 4K to 64M (default 4M)");
  pack_cmd->add_option("--target-rate", a->target_rate,
                       "bytes/s the output can take, for auto, e.g. 100M (default: measured)");
  pack_cmd->add_flag("--no-resume", a->no_resume,
                     "start over instead of resuming an interrupted pack");
  pack_cmd->add_flag("--no-sync", a->no_sync,
                     "skip fdatasync (faster, not safe against power loss)");
  pack_cmd->add_flag("-f,--force", a->force, "overwrite an existing archive");
  pack_cmd->add_option("--encrypt", a->key_file,
                       "encrypt with the key in this file (AES-256-GCM; nubo-xfer keygen makes "
                       "one), or kms:KEY for a key from AWS KMS (a key id, alias/NAME or ARN)");
  pack_cmd->add_flag("--keep-partial", a->keep_partial,
                     "-o to a store: a cancel (Ctrl-C) keeps the upload for a rerun instead of "
                     "aborting it");
  add_selection(pack_cmd, a->selection);
  add_common(pack_cmd, a->common, true);
  return {[pack_cmd] { return pack_cmd->parsed(); }, [a] { return pack(*a); }};
}

nubo_cli::Command unpack_command(CLI::App& app) {
  auto a = std::make_shared<UnpackArgs>();
  auto* cmd = app.add_subcommand("unpack", "unpack an archive into a directory");
  cmd->add_option("archive", a->archive, "the archive")->required();
  cmd->add_option("-C,--directory", a->directory, "where to unpack (default: .)");
  cmd->add_flag("--no-resume", a->no_resume, "redo everything an interrupted unpack did");
  cmd->add_flag("--no-sync", a->no_sync, "skip fdatasync before each rename");
  cmd->add_flag("--preserve-special-modes", a->preserve_special_modes,
                "keep setuid, setgid and sticky bits (dropped by default)");
  add_read_key(cmd, a->read_key, kArchiveKeyHelp);
  add_common(cmd, a->common, true);
  return {[cmd] { return cmd->parsed(); }, [a] { return unpack(*a); }};
}

nubo_cli::Command verify_command(CLI::App& app) {
  auto a = std::make_shared<UnpackArgs>();
  auto* cmd = app.add_subcommand("verify", "check every checksum of an archive");
  cmd->add_option("archive", a->archive, "the archive")->required();
  add_read_key(cmd, a->read_key, kArchiveKeyHelp);
  add_common(cmd, a->common, true);
  return {[cmd] { return cmd->parsed(); }, [a] { return verify(*a); }};
}

nubo_cli::Command keygen_command(CLI::App& app) {
  struct Args {
    std::string file;
    bool quiet = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("keygen", "write a new random key file for --encrypt");
  cmd->add_option("file", a->file, "the key file to create (never replaced)")->required();
  cmd->add_flag("--quiet,-q", a->quiet, "no reminder to keep a copy");
  return {[cmd] { return cmd->parsed(); },
          [a] {
            xfer::keygen(a->file);
            if (!a->quiet)
              std::fprintf(stderr,
                           "nubo-xfer: wrote a new key to %s: keep a copy; without it the "
                           "archives encrypted with it cannot be read\n",
                           a->file.c_str());
            return 0;
          },
          true};
}

nubo_cli::Command policy_command(CLI::App& app) {
  struct Args {
    std::vector<std::string> places, ops;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "policy", "print the IAM policy some operations need on a bucket and prefix, and no more");
  cmd->add_option("place", a->places, "s3://BUCKET/PREFIX, one or more")->required();
  cmd->add_option("--ops", a->ops,
                  "pack, unpack (list, cat, verify), cp, sync, checkpoint, kms:KEY-ARN (SSE-KMS)")
      ->delimiter(',')
      ->required();
  return {[cmd] { return cmd->parsed(); },
          [a] {
            std::fputs(xfer::access_policy(a->places, a->ops).c_str(), stdout);
            return 0;
          },
          true};
}

}  // namespace nubo_xfer
