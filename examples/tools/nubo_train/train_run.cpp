#include "train_run.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "devices.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"
#include "nubo/interruption.hpp"
#include "nubo/train.hpp"

namespace nubo_train {
namespace {

constexpr int kExitStopped = 75;  // EX_TEMPFAIL: interrupted, resumable

std::atomic<nubo::DataParallelTrainer*> g_trainer{nullptr};
volatile std::sig_atomic_t g_term = 0;

extern "C" void on_sigterm(int) {
  g_term = 1;
  if (auto* t = g_trainer.load()) t->request_stop();  // sets an atomic flag, nothing more
}

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

int run_training(TrainFlags f) {
  try {
    const bool leader = nubo::JobSpec::from_env().rank == 0;
    if (f.resume && f.checkpoint_dir.empty())
      throw nubo::Error(nubo::Errc::invalid_argument, "--resume needs --checkpoint DIR");
    if (f.resume && f.fresh)
      throw nubo::Error(nubo::Errc::invalid_argument, "--resume and --fresh contradict each other");
    // A restarted job needs no other flag: with checkpoints, it continues from the newest.
    f.resume = !f.checkpoint_dir.empty() && !f.fresh;
    std::shared_ptr<nubo::InMemoryDataset> train = nubo::load_fashion_mnist("train", f.data_dir);
    if (f.subset > 0) train = train->head(f.subset);
    nubo::TrainerOptions o;
    o.layers.push_back(784);
    for (auto w : parse_hidden(f.hidden)) o.layers.push_back(w);
    o.layers.push_back(10);
    o.optimizer = f.optimizer == "adam" ? nubo::Optimizer::adam : nubo::Optimizer::sgd;
    o.lr = static_cast<float>(f.lr);
    o.global_batch = f.batch;
    if (f.schedule == "cosine")
      o.lr_decay_steps =
          static_cast<std::uint64_t>(f.epochs) * ((train->size() + f.batch - 1) / f.batch);
    o.seed = f.seed;
    o.bucket_bytes = static_cast<std::size_t>(f.bucket_mb * 1024 * 1024);
    o.autotune = f.autotune;
    o.zero_stage = f.zero;
    o.precision = nubo::parse_dtype(f.precision);
    o.grad_compression =
        f.grad_compression == "none" ? nubo::DType::f32 : nubo::parse_dtype(f.grad_compression);
    o.error_feedback = f.error_feedback;
    o.accumulate = f.accumulate;
    o.max_grad_norm = static_cast<float>(f.clip);
    o.checkpoint_dir = f.checkpoint_dir;
    o.strict_resume = f.strict_resume;
    o.fresh = !f.resume;
    o.async_checkpoints = !f.sync_checkpoints;
    if (!f.mtbi.empty() && f.checkpoint_every != "auto")
      throw nubo::Error(nubo::Errc::invalid_argument, "--mtbi goes with --checkpoint-every auto");
    if (f.checkpoint_every == "auto") {
      o.checkpoint_auto = true;
      if (!f.mtbi.empty()) {
        o.mtbi_s = nubo::parse_duration(f.mtbi, "--mtbi");
      } else {
        const auto catalog = nubo::cost::Catalog::builtin();
        o.mtbi_s = catalog.provider(f.instance.empty() ? "" : catalog.get(f.instance).provider)
                       .spot_mtbi_h *
                   3600;
      }
      if (!(o.mtbi_s > 0))
        throw nubo::Error(nubo::Errc::invalid_argument, "--mtbi: must be longer than 0");
    } else if (!f.checkpoint_every.empty()) {
      if (f.checkpoint_every.find_first_not_of("0123456789") == std::string::npos)
        o.checkpoint_every = std::stoull(f.checkpoint_every);
      else
        o.checkpoint_seconds = nubo::parse_duration(f.checkpoint_every, "--checkpoint-every");
    }
    std::optional<nubo::cost::CostMeter> meter;
    if (!f.instance.empty())
      meter = nubo::cost::CostMeter::for_instance(nubo::cost::Catalog::builtin(), f.instance,
                                                  nubo::cost::parse_pricing(f.pricing));

    auto test = nubo::load_fashion_mnist("test", f.data_dir);
    nubo::Team team = make_team(f.devices);
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
    if (f.resume && leader) {
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
      if (f.zero > 0 || o.precision != nubo::DType::f32 || o.grad_compression != nubo::DType::f32 ||
          f.accumulate > 1)
        std::printf("ZeRO stage %d, %s%s, %d micro-batch(es) a step\n", f.zero,
                    std::string(nubo::dtype_name(o.precision)).c_str(),
                    o.grad_compression == nubo::DType::f32
                        ? ""
                        : (", gradients as " + std::string(nubo::dtype_name(o.grad_compression)) +
                           (f.error_feedback ? " with error feedback" : ""))
                              .c_str(),
                    f.accumulate);
      if (!f.quiet) std::printf("%s", team.describe().c_str());
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
      if (!leader || f.quiet || (!epoch_end && now - last_print < std::chrono::seconds(2)))
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
      r = trainer.fit(f.epochs, progress);
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
    if (!f.profile_path.empty() && leader) {
      std::ofstream out(f.profile_path);
      out << nubo::profile_json(trainer.profile()) << "\n";
      if (!out) throw nubo::Error(nubo::Errc::io, f.profile_path + ": cannot write the profile");
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
                    f.checkpoint_dir.empty() ? "" : ", checkpoint written");
      std::fflush(stdout);
      return kExitStopped;
    }
    auto e = trainer.evaluate(*test);
    if (leader) {
      if (const auto prof = trainer.profile(); !f.checkpoint_dir.empty() && !f.quiet)
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

}  // namespace nubo_train
