// The commands of nubo-cost, each taking its parsed flags and printing its answer.
#pragma once

#include <string>
#include <vector>

namespace nubo_cost {

struct CatalogFlags {
  std::vector<std::string> catalogs;  // --catalog FILE (repeatable)
  bool replace = false;               // --replace-catalog
  std::string reserved_discount;      // --reserved-discount 1y=0.4,3y=0.6
  std::string max_age = "7d";         // --max-age: warn about older prices
};

struct CatalogCommand {
  CatalogFlags catalog;
  std::string gpu, provider, region;
  bool sources = false;  // --sources: the sources, not the rows
  bool json = false;
};

struct UpdateCommand {
  std::vector<std::string> sources;  // --source NAME (repeatable); none: all
  std::vector<std::string> urls;     // --url NAME=URL (repeatable)
  std::string timeout = "30s";
  std::string cache;  // --cache DIR
  bool json = false;
};

struct PlanCommand {
  CatalogFlags catalog;
  std::string params, model_bytes, tokens, optimizer = "adam", zero = "auto";
  // Serving (--inference): the target rate and latency of generation.
  bool inference = false;
  std::string rate, requests, tokens_per_request, latency, context = "4096", kv_bytes;
  double bytes_per_param = 0;
  double seq_len = 0, micro_batch = 1;
  std::string flops, flops_per_sample, samples, profile;
  std::string preflight;  // nubo-smi check --json: GPUs priced at the rates it measured
  double epochs = 1;
  std::string dtype = "bf16";
  std::string mfu, overlap;  // empty: the library's defaults (calibrated; behind backward)
  double batch = 0;
  std::string params_bytes, memory, dataset, checkpoint_size, checkpoint_every, egress;
  double compression = 1, keep_months = 0;
  std::string deadline, budget, nodes = "1", pricing, rank = "cost", mtbi, restart;
  bool spot = false, reserved = false;
  std::string gpu, provider, region;
  std::size_t limit = 10;
  std::vector<std::string> tags;
  bool json = false, explain = false;
  std::string svg;
};

struct ScheduleCommand {
  CatalogFlags catalog;
  std::string queue;                 // the queue file (JSON)
  std::string method = "auto";       // auto, exact, heuristic
  std::string time_limit = "20s";    // the exact solver's
  std::string slot;                  // the grid on reservations; "": from the horizon
  std::string mtbi, restart;         // spot defaults, as plan's
  std::vector<std::string> reserve;  // --reserve INSTANCE=COUNT:TERM (repeatable)
  std::vector<std::string> emit;     // --emit FORMAT DIR
  std::string update;                // --update FILE: what happened since
  bool json = false;
};

struct CheckpointCommand {
  std::string size, write_rate, mtbi = "6h", restart = "10m", work;
  bool json = false;
};

struct OwnCommand {
  CatalogFlags catalog;
  double price = 0, power_kw = 0, years = 3, utilisation = 0.5, kwh = 0.12, pue = 1.5,
         maintenance = 0;
  std::string instance = "p4d.24xlarge", pricing = "on-demand";
  bool json = false;
};

struct ScaleCommand {
  std::string profile;
  std::vector<int> workers{1, 2, 4};  // the worker counts to predict
  int processes = 0;                  // 0: one process for all the workers
  int cpus = 0;
  double link_gbps = 10;
  bool json = false;
};

// Each returns the process exit status; nubo::Error propagates to main.
int run(const CatalogCommand& c);
int run(const UpdateCommand& c);
// plan --inference (serving_command.cpp).
int run_serving(const PlanCommand& c);
int run(const PlanCommand& c);
int run(const CheckpointCommand& c);
int run(const ScheduleCommand& c);  // schedule_command.cpp
int run(const OwnCommand& c);
int run(const ScaleCommand& c);

}  // namespace nubo_cost
