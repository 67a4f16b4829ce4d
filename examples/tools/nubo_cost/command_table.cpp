// The subcommands of nubo-cost as rows of its command table: each adds its flags, and runs
// the command of commands.hpp once parsed.
#include "command_table.hpp"

#include <memory>

#include "cli.hpp"
#include "commands.hpp"

namespace nubo_cost {
namespace {

void catalog_flags(CLI::App* app, CatalogFlags& f) {
  app->add_option("--catalog", f.catalogs, "a CSV or JSON catalog that adds or replaces rows")
      ->check(CLI::ExistingFile);
  app->add_flag("--replace-catalog", f.replace, "the --catalog files replace the instance list");
  app->add_option("--reserved-discount", f.reserved_discount,
                  "discounts that derive reserved prices, e.g. 1y=0.4,3y=0.6");
  app->add_option("--max-age", f.max_age, "warn about prices older than this, default 7d")
      ->check(nubo_cli::PositiveDuration);
}

}  // namespace

nubo_cli::Command catalog_command(CLI::App& app) {
  auto cat = std::make_shared<CatalogCommand>();
  auto* c = app.add_subcommand("catalog", "list the instances, their GPUs and prices");
  catalog_flags(c, cat->catalog);
  c->add_option("--gpu", cat->gpu, "only GPU models containing this, e.g. A100");
  c->add_option("--provider", cat->provider, "only this provider, e.g. aws");
  c->add_option("--region", cat->region, "only this region");
  c->add_flag("--sources", cat->sources, "list the sources: age, rows and what each skipped");
  c->add_flag("--json", cat->json, "print JSON");

  auto up = std::make_shared<UpdateCommand>();
  auto* u = c->add_subcommand("update", "fetch the public catalogs into the cache");
  u->add_option("--source", up->sources, "only this source (repeatable), e.g. skypilot-aws");
  u->add_option("--url", up->urls, "NAME=URL: fetch a source from elsewhere (repeatable)");
  u->add_option("--timeout", up->timeout, "give up on a stalled transfer after this, default 30s")
      ->check(nubo_cli::PositiveDuration);
  u->add_option("--cache", up->cache, "the cache folder, default $XDG_CACHE_HOME/nubo/catalog");
  u->add_flag("--json", up->json, "print JSON");
  // `catalog update` is a subcommand of `catalog`: both are parsed when it is given.
  return {[c] { return c->parsed(); },
          [c, u, cat, up] { return u->parsed() ? run(*up) : run(*cat); }};
}

// plan: rank instance x nodes x pricing for a workload
nubo_cli::Command plan_command(CLI::App& app) {
  auto plan = std::make_shared<PlanCommand>();
  auto* p = app.add_subcommand("plan", "rank instance x nodes x pricing for a workload");
  catalog_flags(p, plan->catalog);
  auto* params = p->add_option("--params", plan->params, "the model's parameters, e.g. 7B")
                     ->check(nubo_cli::PositiveCount);
  auto* model_bytes = p->add_option("--model-bytes", plan->model_bytes,
                                    "the model's weights, e.g. 14G (for --dtype)")
                          ->check(nubo_cli::PositiveSize);
  params->excludes(model_bytes);
  p->add_option("--tokens", plan->tokens, "training tokens, e.g. 2e9 or 300B")
      ->check(nubo_cli::PositiveCount);
  p->add_option("--seq-len", plan->seq_len, "tokens per sample, default 2048")
      ->check(nubo_cli::PositiveNumber);
  p->add_option("--micro-batch", plan->micro_batch, "samples per GPU per pass, default 1")
      ->check(nubo_cli::Range(1, 1e6));
  p->add_option("--optimizer", plan->optimizer, "adam (default) or sgd")
      ->check(CLI::IsMember({"adam", "adamw", "sgd"}));
  p->add_option("--zero", plan->zero,
                "ZeRO stage 0, 1, 2, 3, or auto (default): the least whose model fits")
      ->check(CLI::IsMember({"0", "1", "2", "3", "auto"}));
  p->add_flag("--inference", plan->inference,
              "serve the model (--params) instead of training it: the cheapest instances that "
              "generate --rate tokens/s within --latency");
  p->add_option("--rate", plan->rate, "inference: output tokens per second, e.g. 2000 or 2K")
      ->check(nubo_cli::PositiveCount);
  p->add_option("--requests", plan->requests,
                "inference: requests per second (with --tokens-per-request)")
      ->check(nubo_cli::PositiveCount);
  p->add_option("--tokens-per-request", plan->tokens_per_request,
                "inference: output tokens per request")
      ->check(nubo_cli::PositiveCount);
  p->add_option("--latency", plan->latency, "inference: time per output token at most, e.g. 50ms")
      ->check(nubo_cli::PositiveDuration);
  p->add_option("--context", plan->context,
                "inference: prompt + output tokens per sequence, "
                "default 4096")
      ->check(nubo_cli::PositiveCount);
  p->add_option("--kv-bytes-per-token", plan->kv_bytes,
                "inference: the model's KV cache per token (default: a dense transformer's)")
      ->check(nubo_cli::PositiveSize);
  p->add_option("--bytes-per-param", plan->bytes_per_param,
                "inference: bytes per weight, e.g. 1 for int8 (default: --dtype's)")
      ->check(nubo_cli::Range(0.01, 8.0));
  auto* flops = p->add_option("--flops", plan->flops, "total training FLOPs, e.g. 3e18");
  p->add_option("--flops-per-sample", plan->flops_per_sample, "training FLOPs per sample");
  p->add_option("--samples", plan->samples, "samples per epoch");
  auto* profile = p->add_option("--profile", plan->profile, "a nubo-train profile (JSON)")
                      ->check(CLI::ExistingFile);
  flops->excludes(profile);
  params->excludes(profile);
  model_bytes->excludes(profile);
  p->add_option("--preflight", plan->preflight,
                "a nubo-smi check --json report: its GPU models are priced at the rates it "
                "measured when below what the model should do")
      ->check(CLI::ExistingFile);
  p->add_option("--epochs", plan->epochs, "passes over the data")->check(nubo_cli::PositiveNumber);
  p->add_option("--dtype", plan->dtype, "f32, tf32, f16 or bf16 (fp32, fp16, ... also; analytic)");
  p->add_option("--mfu", plan->mfu,
                "achieved fraction of peak (default: calibrated for each GPU and the model's size; "
                "0.4 without --params)")
      ->check(nubo_cli::Range(1e-6, 1.0));
  p->add_option("--batch", plan->batch, "global batch (samples per step)")
      ->check(nubo_cli::NonNegativeNumber);
  p->add_option("--params-bytes", plan->params_bytes,
                "gradient bytes all-reduced per step, e.g. 2G");
  p->add_option("--gpu-memory", plan->memory, "GPU memory one worker needs, e.g. 30G")
      ->check(nubo_cli::PositiveSize);
  // A name means one thing in every tool: --memory is nubo-xfer's buffer memory. Given here it
  // is refused (exit 2) with the name to use, rather than read as something else.
  p->add_option("--memory", plan->memory, "refused: the GPU memory a worker needs is --gpu-memory")
      ->check(CLI::Validator(
          [](std::string&) {
            return std::string(
                "is --gpu-memory here (GPU memory one worker needs); --memory is nubo-xfer's "
                "memory for buffers in flight");
          },
          ""));
  p->add_option("--dataset", plan->dataset, "dataset size staged onto each node, e.g. 150G");
  p->add_option("--compression", plan->compression, "compressed / original size of the dataset")
      ->check(nubo_cli::Range(1e-6, 100.0));
  p->add_option("--checkpoint-size", plan->checkpoint_size, "checkpoint size, e.g. 20G");
  p->add_option("--checkpoint-every", plan->checkpoint_every,
                "on-demand checkpoint interval, e.g. 1h")
      ->check(nubo_cli::PositiveDuration);
  p->add_option("--egress", plan->egress, "results downloaded afterwards, e.g. 500G");
  p->add_option("--keep-months", plan->keep_months, "months to keep data in object storage after")
      ->check(nubo_cli::Range(0.0, 1200.0));
  p->add_option("--overlap", plan->overlap,
                "fraction of communication hidden behind compute (default: what backward hides)")
      ->check(nubo_cli::Range(0.0, 1.0));
  p->add_option("--deadline", plan->deadline, "finish within, e.g. 24h or 3d")
      ->check(nubo_cli::PositiveDuration);
  p->add_option("--budget", plan->budget, "spend at most, in $")->check(nubo_cli::PositiveNumber);
  p->add_option("--nodes", plan->nodes, "node counts to consider: N or MIN-MAX, default 1");
  p->add_flag("--spot", plan->spot, "consider spot prices too");
  p->add_flag("--reserved", plan->reserved, "consider 1- and 3-year reserved prices too");
  p->add_option("--pricing", plan->pricing,
                "pricings: on-demand,spot,reserved-1y,reserved-3y or all");
  p->add_option("--rank", plan->rank, "rank by cost or time")
      ->check(CLI::IsMember({"cost", "time"}));
  p->add_option("--limit", plan->limit, "plans to show, default 10 (0: all)")
      ->check(nubo_cli::Range(0, 1e9));
  p->add_option("--mtbi", plan->mtbi, "mean time between spot interruptions, e.g. 6h")
      ->check(nubo_cli::PositiveDuration);
  p->add_option("--restart", plan->restart, "time to resume after an interruption, e.g. 10m")
      ->check(nubo_cli::Duration);
  p->add_option("--gpu", plan->gpu, "only GPU models containing this");
  p->add_option("--provider", plan->provider, "only this provider");
  p->add_option("--region", plan->region, "only this region");
  p->add_option("--tag", plan->tags, "KEY=VALUE carried by every estimate (repeatable)");
  p->add_flag("--json", plan->json, "print the plan as JSON");
  p->add_flag("--explain", plan->explain, "list every exclusion, not just a summary");
  p->add_option("--svg", plan->svg, "draw cost against time into this SVG file");
  return {[p] { return p->parsed(); }, [plan] { return run(*plan); }};
}

// schedule: a queue of jobs
nubo_cli::Command schedule_command(CLI::App& app) {
  auto sch = std::make_shared<ScheduleCommand>();
  auto* sd = app.add_subcommand(
      "schedule", "a queue of jobs over reservations, on-demand and spot, with deadlines");
  catalog_flags(sd, sch->catalog);
  sd->add_option("queue", sch->queue, "the queue file (JSON: jobs and reservations)")->required();
  sd->add_option("--method", sch->method,
                 "auto (default: exact up to 300 jobs), exact or heuristic")
      ->check(CLI::IsMember({"auto", "exact", "heuristic"}));
  sd->add_option("--time-limit", sch->time_limit, "the exact solver's, default 20s")
      ->check(nubo_cli::PositiveDuration);
  sd->add_option("--slot", sch->slot,
                 "the time grid on reservations, e.g. 1h (default: from "
                 "the horizon, at most 168 slots)")
      ->check(nubo_cli::PositiveDuration);
  sd->add_option("--mtbi", sch->mtbi, "mean time between spot interruptions, e.g. 6h")
      ->check(nubo_cli::PositiveDuration);
  sd->add_option("--restart", sch->restart, "time to resume after an interruption, e.g. 10m")
      ->check(nubo_cli::Duration);
  sd->add_option("--reserve", sch->reserve,
                 "what if: one more reservation, INSTANCE[@REGION]=COUNT:1y|3y (repeatable)");
  sd->add_option("--emit", sch->emit, "job files: skypilot DIR, slurm DIR or kubernetes DIR")
      ->expected(2);
  sd->add_option("--update", sch->update,
                 "what happened since (JSON: now, and finished, failed, running jobs): re-plan "
                 "the rest from now");
  sd->add_flag("--json", sch->json, "print the schedule as JSON");
  return {[sd] { return sd->parsed(); }, [sch] { return run(*sch); }};
}

// checkpoint: Young/Daly
nubo_cli::Command checkpoint_command(CLI::App& app) {
  auto ck = std::make_shared<CheckpointCommand>();
  auto* k = app.add_subcommand("checkpoint", "the checkpoint interval for spot (Young/Daly)");
  k->add_option("--size", ck->size, "checkpoint size, e.g. 20G")
      ->required()
      ->check(nubo_cli::PositiveSize);
  k->add_option("--write-rate", ck->write_rate, "write bandwidth per second, e.g. 1G")
      ->required()
      ->check(nubo_cli::PositiveRate);
  k->add_option("--mtbi", ck->mtbi, "mean time between interruptions, default 6h")
      ->check(nubo_cli::PositiveDuration);
  k->add_option("--restart", ck->restart, "time to resume after one, default 10m")
      ->check(nubo_cli::Duration);
  k->add_option("--work", ck->work, "the job's length without interruptions, e.g. 100h")
      ->check(nubo_cli::PositiveDuration);
  k->add_flag("--json", ck->json, "print JSON");
  return {[k] { return k->parsed(); }, [ck] { return run(*ck); }};
}

// own: rent or own
nubo_cli::Command own_command(CLI::App& app) {
  auto own = std::make_shared<OwnCommand>();
  auto* o = app.add_subcommand("own", "rent or own: the break-even utilisation");
  catalog_flags(o, own->catalog);
  o->add_option("--price", own->price, "hardware price, $")
      ->required()
      ->check(nubo_cli::PositiveNumber);
  o->add_option("--power-kw", own->power_kw, "power draw, kW")
      ->required()
      ->check(nubo_cli::NonNegativeNumber);
  o->add_option("--years", own->years, "years of use, default 3")
      ->check(nubo_cli::Range(0.01, 50.0));
  o->add_option("--utilisation", own->utilisation, "fraction of hours in use, default 0.5")
      ->check(nubo_cli::Range(1e-6, 1.0));
  o->add_option("--kwh", own->kwh, "electricity, $/kWh, default 0.12")
      ->check(nubo_cli::Range(0.0, 100.0));
  o->add_option("--pue", own->pue, "facility power / IT power, default 1.5")
      ->check(nubo_cli::Range(1.0, 10.0));
  o->add_option("--maintenance", own->maintenance, "per year, fraction of the price, default 0")
      ->check(nubo_cli::Range(0.0, 0.99));
  auto* own_instance = o->add_option("--instance", own->instance,
                                     "the cloud instance to compare, default p4d.24xlarge");
  o->add_option("--pricing", own->pricing, "the --instance's pricing, default on-demand")
      ->needs(own_instance);
  o->add_flag("--json", own->json, "print JSON");
  return {[o] { return o->parsed(); }, [own] { return run(*own); }};
}

// scale: a CPU profile's run on more workers
nubo_cli::Command scale_command(CLI::App& app) {
  auto sc = std::make_shared<ScaleCommand>();
  auto* sca = app.add_subcommand(
      "scale", "a CPU profile's run with more (or fewer) workers on the same host's cores");
  sca->add_option("--profile", sc->profile, "a profile nubo-train wrote with host workers")
      ->required();
  sca->add_option("--workers", sc->workers, "worker counts to predict, default 1 2 4")
      ->check(nubo_cli::Range(1, 65536));
  sca->add_option("--processes", sc->processes,
                  "processes the workers run in (default one; the same for every count)")
      ->check(nubo_cli::Range(1, 65536));
  sca->add_option("--cpus", sc->cpus, "the host's CPUs, default the profile's")
      ->check(nubo_cli::Range(1, 65536));
  sca->add_option("--link-gbps", sc->link_gbps, "all-reduce bus bandwidth, GB/s, default 10")
      ->check(nubo_cli::Range(0.001, 1e6));
  sca->add_flag("--json", sc->json, "print JSON");
  return {[sca] { return sca->parsed(); }, [sc] { return run(*sc); }};
}

}  // namespace nubo_cost
