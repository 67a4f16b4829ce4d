// nubo-train: trains an MLP classifier on Fashion-MNIST, data-parallel on the chosen devices,
// with checkpoints that survive spot interruptions (docs/train.md).
//
//   nubo-train --epochs 10 --hidden 256,128                 # all GPUs, else the CPU
//   nubo-train --devices cpu:2 --checkpoint ckpt             # continues from ckpt when there
//   nubo-run --nproc 2 nubo-train --devices cpu              # two processes
//
// Exit status: 0 done, 1 error, 2 bad usage, 75 stopped by SIGTERM after checkpointing (run
// the same command again to continue).
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include "cli.hpp"
#include "nubo/interruption.hpp"

#include "devices.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"
#include "nubo/train.hpp"

namespace {

constexpr int kExitStopped = 75;  // EX_TEMPFAIL: interrupted, resumable

std::atomic<nubo::DataParallelTrainer*> g_trainer{nullptr};
volatile std::sig_atomic_t g_term = 0;

extern "C" void on_sigterm(int) {
  g_term = 1;
  if (auto* t = g_trainer.load()) t->request_stop();  // sets an atomic flag, nothing more
}

// --checkpoint-every: a number of steps, a duration or auto; zero of either would never
// checkpoint (leave the option out for no periodic checkpoints).
const CLI::Validator CheckpointEvery(
    [](std::string& text) -> std::string {
      if (text == "auto") return "";
      if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
        if (text.find_first_not_of('0') == std::string::npos)
          return "0 steps would never checkpoint: leave the option out for none";
        return text.size() > 18 ? "more steps than any run takes" : "";
      }
      return nubo_cli::PositiveDuration(text);
    },
    "STEPS|DURATION|auto");

std::vector<std::size_t> parse_hidden(const std::string& text) {
  std::vector<std::size_t> out;
  std::size_t at = 0;
  while (!text.empty() && at <= text.size()) {
    std::size_t comma = text.find(',', at);
    std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (item.empty() || item.size() > 7 ||
        item.find_first_not_of("0123456789") != std::string::npos)
      throw nubo::Error(nubo::Errc::invalid_argument,
                        "--hidden '" + text + "': expected widths like 256,128");
    out.push_back(std::stoul(item));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

std::string eta_text(double s) {
  if (s < 0) return "?";
  char buf[32];
  auto t = static_cast<long>(s + 0.5);
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, t / 60 % 60);
  else
    std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nubo-train: data-parallel MLP training on Fashion-MNIST"};
  std::string devices, hidden = "256,128", checkpoint_dir, checkpoint_every, mtbi, profile_path,
                       instance, pricing = "on-demand", data_dir = nubo::kFashionMnistDir,
                       optimizer = "sgd", schedule = "cosine";
  int epochs = 10, zero = 0, accumulate = 1;
  std::string precision = "f32", grad_compression = "none";
  bool error_feedback = false;
  std::size_t batch = 128, subset = 0;
  double lr = 0.05, bucket_mb = 25, clip = 0;
  std::uint64_t seed = 1;
  bool resume = false, fresh = false, strict_resume = false, autotune = false, quiet = false,
       sync_checkpoints = false;
  // --help shows each option's default after it ("--epochs INT=10"); empty ones show nothing.
  app.option_defaults()->always_capture_default();
  app.add_option("--devices", devices,
                 "cpu, cpu:N, sim:N or cuda:I[,J...] (default: all GPUs, else cpu)")
      ->check(nubo_cli::NonEmpty);
  app.add_option("--epochs", epochs, "Epochs in all (a resumed run continues to this many)")
      ->check(nubo_cli::Range(1, 100000));
  app.add_option("--batch", batch, "Global batch: samples per step, all workers together")
      ->check(nubo_cli::Range(1, 1048576));
  app.add_option("--lr", lr, "Learning rate")->check(nubo_cli::PositiveNumber);
  app.add_option("--optimizer", optimizer, "sgd (momentum 0.9) or adam")
      ->check(CLI::IsMember({"sgd", "adam"}));
  app.add_option("--schedule", schedule,
                 "Learning rate: cosine (decays to 0 by the last epoch) or constant")
      ->check(CLI::IsMember({"cosine", "constant"}));
  app.add_option("--hidden", hidden, "Hidden layer widths, e.g. 256,128");
  app.add_option("--seed", seed, "Seed of the initial parameters and the shuffle")
      ->check(nubo_cli::Range(0, 18446744073709551615.0, "0 to 2^64 - 1"));
  app.add_option("--checkpoint", checkpoint_dir, "Directory for checkpoints");
  app.add_option("--checkpoint-every", checkpoint_every,
                 "Checkpoint every N steps, every duration (30s, 10m), or auto: Daly's interval "
                 "from the measured write time and --mtbi")
      ->check(CheckpointEvery);
  app.add_option("--mtbi", mtbi,
                 "Mean time between interruptions for --checkpoint-every auto (default: the "
                 "--instance provider's spot figure, else the catalog's default provider's)");
  app.add_flag("--resume", resume,
               "Continue from the newest good checkpoint in --checkpoint (the default with "
               "--checkpoint)");
  app.add_flag("--fresh", fresh, "Start afresh even when --checkpoint holds checkpoints");
  app.add_flag("--sync-checkpoints", sync_checkpoints,
               "Stop training while each checkpoint is written (by default it is copied in "
               "memory and written in the background)");
  app.add_flag("--strict-resume", strict_resume,
               "Refuse a checkpoint written by another team (device kind or worker count)");
  app.add_option("--profile", profile_path, "Write the run's profile (JSON) here");
  auto* instance_option =
      app.add_option("--instance", instance, "Show the live cost of this cloud instance");
  app.add_option("--pricing", pricing,
                 "on-demand, spot, reserved-1y or reserved-3y (with --instance)")
      ->needs(instance_option);
  app.add_option("--data", data_dir, "Fashion-MNIST directory (gzipped IDX files)");
  app.add_option("--subset", subset, "Train on the first N rows only (0: all)")
      ->check(nubo_cli::Range(0, 1e12, "0 or more"));
  app.add_option("--bucket-mb", bucket_mb,
                 "Gradient bucket size in MiB (2^20 bytes; 0: no buckets)")
      ->check(nubo_cli::Range(0.0, 4096.0));
  app.add_flag("--autotune", autotune, "Tune the bucket size (cached; NUBO_AUTOTUNE=0 disables)");
  app.add_option("--zero", zero,
                 "Shard across the workers: 0 nothing (replicated), 1 the optimizer state, 2 "
                 "the gradients too, 3 the parameters too")
      ->check(nubo_cli::Range(0, 3));
  app.add_option("--precision", precision,
                 "f32, bf16 or fp16: parameters, gradients and GEMMs (fp32 master weights; "
                 "fp16 with dynamic loss scaling)")
      ->check(CLI::IsMember({"f32", "fp32", "bf16", "fp16", "f16"}));
  app.add_option("--grad-compression", grad_compression,
                 "none, bf16 or fp16: f32 gradients carried in 16 bits between the workers")
      ->check(CLI::IsMember({"none", "bf16", "fp16", "f16"}));
  app.add_flag("--error-feedback", error_feedback,
               "With --grad-compression: each worker's rounding error added to its next step");
  app.add_option("--accumulate", accumulate,
                 "Micro-batches per step, their gradients summed without communication")
      ->check(nubo_cli::Range(1, 4096));
  app.add_option("--clip", clip, "Clip the gradients to this global L2 norm (0: no clipping)")
      ->check(nubo_cli::NonNegativeNumber);
  app.add_flag("--quiet", quiet, "Only the final lines");
  nubo_cli::add_version(app, "nubo-train");
  if (const int status = nubo_cli::parse(app, argc, argv); status >= 0) return status;

  try {
    const bool leader = nubo::JobSpec::from_env().rank == 0;
    if (resume && checkpoint_dir.empty())
      throw nubo::Error(nubo::Errc::invalid_argument, "--resume needs --checkpoint DIR");
    if (resume && fresh)
      throw nubo::Error(nubo::Errc::invalid_argument, "--resume and --fresh contradict each other");
    // A restarted job needs no other flag: with checkpoints, it continues from the newest.
    resume = !checkpoint_dir.empty() && !fresh;
    std::shared_ptr<nubo::InMemoryDataset> train = nubo::load_fashion_mnist("train", data_dir);
    if (subset > 0) train = train->head(subset);
    nubo::TrainerOptions o;
    o.layers.push_back(784);
    for (auto w : parse_hidden(hidden)) o.layers.push_back(w);
    o.layers.push_back(10);
    o.optimizer = optimizer == "adam" ? nubo::Optimizer::adam : nubo::Optimizer::sgd;
    o.lr = static_cast<float>(lr);
    o.global_batch = batch;
    if (schedule == "cosine")
      o.lr_decay_steps = static_cast<std::uint64_t>(epochs) * ((train->size() + batch - 1) / batch);
    o.seed = seed;
    o.bucket_bytes = static_cast<std::size_t>(bucket_mb * 1024 * 1024);
    o.autotune = autotune;
    o.zero_stage = zero;
    o.precision = nubo::parse_dtype(precision);
    o.grad_compression =
        grad_compression == "none" ? nubo::DType::f32 : nubo::parse_dtype(grad_compression);
    o.error_feedback = error_feedback;
    o.accumulate = accumulate;
    o.max_grad_norm = static_cast<float>(clip);
    o.checkpoint_dir = checkpoint_dir;
    o.strict_resume = strict_resume;
    o.fresh = !resume;
    o.async_checkpoints = !sync_checkpoints;
    if (!mtbi.empty() && checkpoint_every != "auto")
      throw nubo::Error(nubo::Errc::invalid_argument, "--mtbi goes with --checkpoint-every auto");
    if (checkpoint_every == "auto") {
      o.checkpoint_auto = true;
      if (!mtbi.empty()) {
        o.mtbi_s = nubo::parse_duration(mtbi, "--mtbi");
      } else {
        const auto catalog = nubo::cost::Catalog::builtin();
        o.mtbi_s =
            catalog.provider(instance.empty() ? "" : catalog.get(instance).provider).spot_mtbi_h *
            3600;
      }
      if (!(o.mtbi_s > 0))
        throw nubo::Error(nubo::Errc::invalid_argument, "--mtbi: must be longer than 0");
    } else if (!checkpoint_every.empty()) {
      if (checkpoint_every.find_first_not_of("0123456789") == std::string::npos)
        o.checkpoint_every = std::stoull(checkpoint_every);
      else
        o.checkpoint_seconds = nubo::parse_duration(checkpoint_every, "--checkpoint-every");
    }
    std::optional<nubo::cost::CostMeter> meter;
    if (!instance.empty())
      meter = nubo::cost::CostMeter::for_instance(nubo::cost::Catalog::builtin(), instance,
                                                  nubo::cost::parse_pricing(pricing));

    auto test = nubo::load_fashion_mnist("test", data_dir);
    nubo::Team team = make_team(devices);
    auto started = std::chrono::steady_clock::now();
    nubo::DataParallelTrainer trainer(team, o, train);
    g_trainer = &trainer;
    std::signal(SIGTERM, on_sigterm);
    // A spot machine's notice comes before its SIGTERM (2 minutes on AWS, 30 s on GCP): the
    // final checkpoint starts at once.
    std::atomic<bool> noticed{false};
    std::chrono::steady_clock::time_point noticed_at;
    nubo::InterruptionWatcher watcher([&](const nubo::InterruptionNotice& n) {
      noticed_at = std::chrono::steady_clock::now();
      noticed = true;
      std::fprintf(
          stderr, "nubo-train: interruption notice from %s (%s%s): checkpointing now\n",
          n.cloud.c_str(), n.action.c_str(),
          n.seconds_left >= 0
              ? (", " + std::to_string(static_cast<long>(n.seconds_left)) + " s left").c_str()
              : "");
      trainer.request_stop();
    });
    if (resume && leader) {
      const auto& from = trainer.resumed_from();
      std::printf("%s\n", from.empty() ? "no checkpoint to resume from: starting afresh"
                                       : ("resumed from " + from + " at step " +
                                          std::to_string(trainer.steps_done()))
                                             .c_str());
    }
    if (leader) {
      std::printf("%d worker(s) on %s, %zu parameters, %zu bucket(s), %zu training rows\n",
                  team.size(), team.worker(0).device().name.c_str(), trainer.parameter_count(),
                  trainer.bucket_count(), train->size());
      if (zero > 0 || o.precision != nubo::DType::f32 || o.grad_compression != nubo::DType::f32 ||
          accumulate > 1)
        std::printf("ZeRO stage %d, %s%s, %d micro-batch(es) a step\n", zero,
                    std::string(nubo::dtype_name(o.precision)).c_str(),
                    o.grad_compression == nubo::DType::f32
                        ? ""
                        : (", gradients as " + std::string(nubo::dtype_name(o.grad_compression)) +
                           (error_feedback ? " with error feedback" : ""))
                              .c_str(),
                    accumulate);
      if (!quiet) std::printf("%s", team.describe().c_str());
    }
    std::fflush(stdout);

    auto last_print = std::chrono::steady_clock::now() - std::chrono::hours(1);
    double shown_interval = 0;
    // --checkpoint-every auto: each interval the trainer plans, once, with what it rests on.
    auto show_interval = [&](double interval) {
      if (leader && o.checkpoint_auto && interval != shown_interval) {
        shown_interval = interval;
        const auto prof = trainer.profile();
        std::printf(
            "checkpoint interval %s (Daly: %s to write one, an interruption every %s on "
            "average; expected waste %.1f%%)\n",
            nubo::format_duration(shown_interval).c_str(),
            nubo::format_duration(prof.checkpoint_time_s).c_str(),
            nubo::format_duration(o.mtbi_s).c_str(), prof.checkpoint_expected_waste * 100);
        std::fflush(stdout);
      }
    };
    auto progress = [&](const nubo::TrainProgress& p) {
      auto now = std::chrono::steady_clock::now();
      show_interval(p.checkpoint_interval_s);
      bool epoch_end = p.step % p.steps_per_epoch == 0;
      if (!leader || quiet || (!epoch_end && now - last_print < std::chrono::seconds(2)))
        return true;
      last_print = now;
      std::string cost;
      if (meter) {
        meter->update(std::chrono::duration<double>(now - started).count(),
                      static_cast<double>(p.step) / static_cast<double>(p.total_steps));
        cost = "  " + meter->line();
      }
      std::printf("epoch %d/%d  step %llu/%llu  loss %.4f  acc %.4f  %.0f samples/s  ETA %s%s\n",
                  p.epoch + 1, p.epochs, static_cast<unsigned long long>(p.step),
                  static_cast<unsigned long long>(p.total_steps), p.loss, p.accuracy,
                  p.samples_per_s, eta_text(p.eta_s).c_str(), cost.c_str());
      std::fflush(stdout);
      return true;
    };
    nubo::FitResult r;
    try {
      r = trainer.fit(epochs, progress);
    } catch (const std::exception&) {
      // Where it stopped, against the "resumed from ... at step" of the next attempt: the work
      // a failure cost.
      std::fprintf(stderr, "nubo-train: failed at step %llu\n",
                   static_cast<unsigned long long>(trainer.steps_done()));
      throw;
    }
    g_trainer = nullptr;
    // A short run may end before its first background write did, and planned from it.
    show_interval(trainer.profile().checkpoint_interval_s);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!profile_path.empty() && leader) {
      std::ofstream f(profile_path);
      f << nubo::profile_json(trainer.profile()) << "\n";
      if (!f) throw nubo::Error(nubo::Errc::io, profile_path + ": cannot write the profile");
    }
    if (r == nubo::FitResult::stopped) {
      if (leader && noticed)
        std::printf(
            "checkpoint durable %.2f s after the interruption notice\n",
            std::chrono::duration<double>(std::chrono::steady_clock::now() - noticed_at).count());
      if (leader)
        std::printf("stopped at step %llu (%s)%s; run the same command again to continue\n",
                    static_cast<unsigned long long>(trainer.steps_done()),
                    noticed ? "interruption notice" : "SIGTERM",
                    checkpoint_dir.empty() ? "" : ", checkpoint written");
      std::fflush(stdout);
      return kExitStopped;
    }
    auto e = trainer.evaluate(*test);
    if (leader) {
      if (const auto prof = trainer.profile(); !checkpoint_dir.empty() && !quiet)
        std::printf("checkpoints: %.3f s to write each, training stalled %.4f s per checkpoint\n",
                    prof.checkpoint_time_s, prof.checkpoint_stall_s);
      std::printf("test accuracy %.4f  test loss %.4f  wall time %.1f s\n", e.accuracy, e.loss,
                  wall);
      if (meter) std::printf("cost: %s\n", meter->line().c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    nubo_cli::print_error("nubo-train", e.what());
    return 1;
  }
}
