#include "cp_command.hpp"

#include <cstdio>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "nubo/copy.hpp"
#include "nubo/error.hpp"
#include "nubo/units.hpp"
#include "progress_bar.hpp"

namespace nubo_xfer {

namespace {

// The options cp and sync share (a sync's copies are cp's).
void add_copy_options(CpCommand& c) {
  c.app->add_option("--streams", c.streams, "parts in flight (default 4)")
      ->check(nubo_cli::Range(1, 64));
  c.app->add_option("--part-size", c.part_size, "bytes per part, 5M to 5G (default: adapted)");
  c.app->add_option("--rate", c.rate,
                    "bytes/s over all parts together, e.g. 100M (default: no limit)");
  c.app->add_flag("--keep-partial", c.keep_partial,
                  "keep a cancelled upload resumable instead of aborting it");
  c.app->add_option("--profile", c.profile, "the AWS profile (default: AWS_PROFILE, default)");
  c.app->add_option("--source-profile", c.source_profile,
                    "between two stores: the source's profile (default: --profile)");
  c.app->add_option("--dest-profile", c.dest_profile,
                    "between two stores: the destination's profile (default: --profile)");
  c.app->add_option("--sse", c.sse, "server-side encryption: AES256 or aws:kms");
  c.app->add_option("--sse-kms-key-id", c.kms_key_id, "the KMS key for --sse aws:kms");
  c.app->add_option("--exclude", c.selection.exclude, "leave out what matches (uploads)");
  c.app->add_option("--include", c.selection.include, "keep what an --exclude would drop");
  c.app->add_flag("--no-sync", c.no_sync, "skip fdatasync of downloads before their rename");
  auto* links = c.app->add_flag("--links,-l", c.links,
                                "store symlinks as links (restored by a download or sync with "
                                "--links) instead of following them");
  auto* no_follow =
      c.app->add_flag("--no-follow", c.no_follow, "leave symlinks out (counted in the summary)");
  links->excludes(no_follow);
  c.app->add_flag("--follow-outside", c.follow_outside,
                  "follow symlinks that lead outside the tree too (skipped by default)");
  c.app->add_flag("--json", c.json, "print a JSON summary on stdout");
  c.app->add_flag("--quiet,-q", c.quiet, "no progress display");
}

nubo::transfer::CopyOptions copy_options(const CpCommand& c) {
  nubo::transfer::CopyOptions o;
  o.streams = c.streams;
  o.part_size = nubo::parse_bytes(c.part_size, "--part-size");
  o.rate = nubo::parse_rate(c.rate, "--rate");
  o.keep_partial = c.keep_partial;
  o.sync = !c.no_sync;
  o.s3 = {c.dest_profile.empty() ? c.profile : c.dest_profile, c.sse, c.kms_key_id,
          c.source_profile.empty() ? c.profile : c.source_profile};
  o.exclude = c.selection.exclude;
  o.include = c.selection.include;
  o.symlinks = c.links       ? nubo::transfer::Symlinks::store
               : c.no_follow ? nubo::transfer::Symlinks::skip
                             : nubo::transfer::Symlinks::follow;
  o.follow_outside = c.follow_outside;
  return o;
}

// ", 2 symlinks followed, 1 skipped": what happened to links, when any were met.
template <class Summary>
std::string links_text(const Summary& s) {
  if (s.links_followed + s.links_stored + s.links_skipped == 0) return {};
  return ", symlinks: " + std::to_string(s.links_followed) + " followed, " +
         std::to_string(s.links_stored) + " stored as links, " + std::to_string(s.links_skipped) +
         " skipped";
}

template <class Summary>
void add_links_json(nlohmann::json& j, const Summary& s) {
  j["links_followed"] = s.links_followed;
  j["links_stored"] = s.links_stored;
  j["links_skipped"] = s.links_skipped;
}

std::shared_ptr<CpCommand> add_cp_command(CLI::App& app) {
  auto c = std::make_shared<CpCommand>();
  c->app = app.add_subcommand(
      "cp",
      "copy a file or a tree to, from or between object stores (s3://, gs://, file://), resumably");
  c->app
      ->add_option("from", c->from,
                   "a local path, or s3://BUCKET/KEY, gs://BUCKET/KEY, file:///PATH")
      ->required();
  c->app->add_option("to", c->to, "a local path, or a store URL (KEY or PREFIX/)")->required();
  add_copy_options(*c);
  c->app->add_option("--encrypt", c->encrypt,
                     "encrypt uploads with the key in this file (nubo-xfer keygen makes one), or "
                     "kms:KEY for a key from AWS KMS");
  add_read_key(c->app, c->read_key,
               "the key file of encrypted objects (downloads; those under a KMS key need none)");
  return c;
}

std::shared_ptr<CpCommand> add_sync_command(CLI::App& app) {
  auto c = std::make_shared<CpCommand>();
  c->app = app.add_subcommand(
      "sync",
      "copy what is new or changed (by size and checksum) from one place to another: a "
      "local directory or a store PREFIX/, at least one a store");
  c->app
      ->add_option("from", c->from,
                   "a local directory, or s3://BUCKET/PREFIX/ (and gs://, file://)")
      ->required();
  c->app->add_option("to", c->to, "a local directory, or a store PREFIX/")->required();
  add_copy_options(*c);
  c->app->add_flag("--delete", c->delete_extra,
                   "delete at the destination what the source does not have, after the copies");
  c->app->add_flag("--dry-run,-n", c->dry_run, "say what would change, and change nothing");
  c->app->add_flag("--allow-empty-source", c->allow_empty_source,
                   "let --delete empty the destination when the source holds nothing (refused "
                   "by default: a missing prefix or a typo would delete everything)");
  c->app
      ->add_option("--max-delete", c->max_delete,
                   "refuse, before any change, a sync that would delete more than N files")
      ->check(CLI::Range(std::int64_t{0}, std::numeric_limits<std::int64_t>::max()));
  c->app->add_option("--backup-dir", c->backup_dir,
                     "move what is deleted or replaced here first, under the same path (a "
                     "folder beside a local destination, a prefix of its bucket for a store)");
  return c;
}

int run_sync(CpCommand& c) {
  nubo::transfer::SyncOptions o;
  o.copy = copy_options(c);
  o.delete_extra = c.delete_extra;
  o.dry_run = c.dry_run;
  o.allow_empty_source = c.allow_empty_source;
  o.max_delete = c.max_delete;
  o.backup_dir = c.backup_dir;
  const auto s = nubo::transfer::sync(c.from, c.to, o);
  if (c.json) {
    nlohmann::json j{{"operation", c.dry_run ? "sync (dry run)" : "synced"},
                     {"copied", s.copied},
                     {"unchanged", s.unchanged},
                     {"deleted", s.deleted},
                     {"bytes_copied", s.bytes_copied},
                     {"bytes_sent", s.bytes_sent},
                     {"bytes_server_side", s.bytes_server_side},
                     {"backed_up", s.backed_up},
                     {"changes", s.changes},
                     {"seconds", s.seconds}};
    add_links_json(j, s);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  if (c.dry_run)
    for (const auto& change : s.changes) std::printf("(dry run) %s\n", change.c_str());
  if (!c.quiet)
    std::fprintf(stderr, "nubo-xfer: %s %s (%s), %llu unchanged, %llu deleted%s, in %.2f s\n",
                 c.dry_run ? "would copy" : "copied", nubo_cli::count_of(s.copied, "file").c_str(),
                 nubo::format_bytes(static_cast<double>(s.bytes_copied), 2).c_str(),
                 static_cast<unsigned long long>(s.unchanged),
                 static_cast<unsigned long long>(s.deleted), links_text(s).c_str(), s.seconds);
  return 0;
}

int run_cp(CpCommand& c) {
  auto o = copy_options(c);
  const bool download = nubo::transfer::is_store_url(c.from);
  const bool between = download && nubo::transfer::is_store_url(c.to);  // the library says why
  if (download && !between && !c.encrypt.empty())
    throw nubo::Error(nubo::Errc::invalid_argument,
                      "--encrypt is for uploads; a download of an encrypted object takes --key");
  if (!download && (!c.read_key.key.empty() || !c.read_key.kms_region.empty()))
    throw nubo::Error(
        nubo::Errc::invalid_argument,
        "--key and --kms-region are for downloads; an upload is encrypted with --encrypt "
        "KEYFILE or kms:KEY");
  o.key_file = download && c.encrypt.empty() ? key_spec(c.read_key) : c.encrypt;
  ProgressBar bar("copied", c.quiet || c.json);
  o.progress = [&](const nubo::transfer::Progress& p) { return bar(p); };
  nubo::transfer::CopySummary s;
  try {
    s = nubo::transfer::copy(c.from, c.to, o);
  } catch (...) {
    bar.finish();
    throw;
  }
  bar.finish();
  if (c.json) {
    nlohmann::json j{{"operation", "copied"},
                     {"files", s.files},
                     {"bytes", s.bytes},
                     {"bytes_sent", s.bytes_sent},
                     {"bytes_resumed", s.bytes_resumed},
                     {"bytes_server_side", s.bytes_server_side},
                     {"parts", s.parts},
                     {"seconds", s.seconds}};
    add_links_json(j, s);
    std::cout << j.dump(2) << "\n";
  } else if (!c.quiet) {
    std::fprintf(stderr, "nubo-xfer: copied %s%s, %s in %.2f s (%s moved, %s resumed%s)\n",
                 nubo_cli::count_of(s.files, "file").c_str(), links_text(s).c_str(),
                 nubo::format_bytes(static_cast<double>(s.bytes), 2).c_str(), s.seconds,
                 nubo::format_bytes(static_cast<double>(s.bytes_sent), 2).c_str(),
                 nubo::format_bytes(static_cast<double>(s.bytes_resumed), 2).c_str(),
                 s.bytes_server_side == 0
                     ? ""
                     : (", " + nubo::format_bytes(static_cast<double>(s.bytes_server_side), 2) +
                        " copied by the store itself")
                           .c_str());
  }
  return 0;
}

}  // namespace

nubo_cli::Command cp_command(CLI::App& app) {
  auto c = add_cp_command(app);
  return {[c] { return c->app->parsed(); }, [c] { return run_cp(*c); }};
}

nubo_cli::Command sync_command(CLI::App& app) {
  auto c = add_sync_command(app);
  return {[c] { return c->app->parsed(); }, [c] { return run_sync(*c); }};
}

}  // namespace nubo_xfer
