#include "train_flags.hpp"

#include "cli.hpp"

namespace nubo_train {
namespace {

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

}  // namespace

void add_train_flags(CLI::App& app, TrainFlags& f) {
  // --help shows each option's default after it ("--epochs INT=10"); empty ones show nothing.
  app.option_defaults()->always_capture_default();
  app.add_option("--devices", f.devices,
                 "cpu, cpu:N, sim:N or cuda:I[,J...] (default: all GPUs, else cpu)")
      ->check(nubo_cli::NonEmpty);
  app.add_option("--epochs", f.epochs, "Epochs in all (a resumed run continues to this many)")
      ->check(nubo_cli::Range(1, 100000));
  app.add_option("--batch", f.batch, "Global batch: samples per step, all workers together")
      ->check(nubo_cli::Range(1, 1048576));
  app.add_option("--lr", f.lr, "Learning rate")->check(nubo_cli::PositiveNumber);
  app.add_option("--optimizer", f.optimizer, "sgd (momentum 0.9) or adam")
      ->check(CLI::IsMember({"sgd", "adam"}));
  app.add_option("--schedule", f.schedule,
                 "Learning rate: cosine (decays to 0 by the last epoch) or constant")
      ->check(CLI::IsMember({"cosine", "constant"}));
  app.add_option("--hidden", f.hidden, "Hidden layer widths, e.g. 256,128");
  app.add_option("--seed", f.seed, "Seed of the initial parameters and the shuffle")
      ->check(nubo_cli::Range(0, 18446744073709551615.0, "0 to 2^64 - 1"));
  app.add_option("--checkpoint", f.checkpoint_dir, "Directory for checkpoints");
  app.add_option("--checkpoint-every", f.checkpoint_every,
                 "Checkpoint every N steps, every duration (30s, 10m), or auto: Daly's interval "
                 "from the measured write time and --mtbi")
      ->check(CheckpointEvery);
  app.add_option("--mtbi", f.mtbi,
                 "Mean time between interruptions for --checkpoint-every auto (default: the "
                 "--instance provider's spot figure, else the catalog's default provider's)");
  app.add_flag("--resume", f.resume,
               "Continue from the newest good checkpoint in --checkpoint (the default with "
               "--checkpoint)");
  app.add_flag("--fresh", f.fresh, "Start afresh even when --checkpoint holds checkpoints");
  app.add_flag("--sync-checkpoints", f.sync_checkpoints,
               "Stop training while each checkpoint is written (by default it is copied in "
               "memory and written in the background)");
  app.add_flag("--strict-resume", f.strict_resume,
               "Refuse a checkpoint written by another team (device kind or worker count)");
  app.add_option("--profile", f.profile_path, "Write the run's profile (JSON) here");
  auto* instance_option =
      app.add_option("--instance", f.instance, "Show the live cost of this cloud instance");
  app.add_option("--pricing", f.pricing,
                 "on-demand, spot, reserved-1y or reserved-3y (with --instance)")
      ->needs(instance_option);
  app.add_option("--data", f.data_dir, "Fashion-MNIST directory (gzipped IDX files)");
  app.add_option("--subset", f.subset, "Train on the first N rows only (0: all)")
      ->check(nubo_cli::Range(0, 1e12, "0 or more"));
  app.add_option("--bucket-mb", f.bucket_mb,
                 "Gradient bucket size in MiB (2^20 bytes; 0: no buckets)")
      ->check(nubo_cli::Range(0.0, 4096.0));
  app.add_flag("--autotune", f.autotune, "Tune the bucket size (cached; NUBO_AUTOTUNE=0 disables)");
  app.add_option("--zero", f.zero,
                 "Shard across the workers: 0 nothing (replicated), 1 the optimizer state, 2 "
                 "the gradients too, 3 the parameters too")
      ->check(nubo_cli::Range(0, 3));
  app.add_option("--precision", f.precision,
                 "f32, bf16 or fp16: parameters, gradients and GEMMs (fp32 master weights; "
                 "fp16 with dynamic loss scaling)")
      ->check(CLI::IsMember({"f32", "fp32", "bf16", "fp16", "f16"}));
  app.add_option("--grad-compression", f.grad_compression,
                 "none, bf16 or fp16: f32 gradients carried in 16 bits between the workers")
      ->check(CLI::IsMember({"none", "bf16", "fp16", "f16"}));
  app.add_flag("--error-feedback", f.error_feedback,
               "With --grad-compression: each worker's rounding error added to its next step");
  app.add_option("--accumulate", f.accumulate,
                 "Micro-batches per step, their gradients summed without communication")
      ->check(nubo_cli::Range(1, 4096));
  app.add_option("--clip", f.clip, "Clip the gradients to this global L2 norm (0: no clipping)")
      ->check(nubo_cli::NonNegativeNumber);
  app.add_flag("--quiet", f.quiet, "Only the final lines");
}

}  // namespace nubo_train
