// nubo-cost: what a training job will take and cost on each cloud instance, and which to pick.
//
//   nubo-cost catalog [--gpu A100] [--provider aws] [--sources]
//   nubo-cost catalog update [--source skypilot-aws] [--url NAME=URL]
//   nubo-cost plan --params 7B --tokens 2e9 --deadline 48h --budget 2000
//   nubo-cost plan --flops 3e18 --mfu 0.4 --deadline 24h [--budget 500] [--spot] [--nodes 1-4]
//                  [--catalog mine.csv] [--json] [--svg plan.svg]
//   nubo-cost plan --profile run.json --epochs 90
//   nubo-cost checkpoint --size 20G --write-rate 1G --mtbi 6h
//   nubo-cost own --price 250000 --power-kw 6.5 --years 3
//
// docs/cost.md explains every figure. Exit status: 0 done, 1 a nubo error (bad input, unknown
// instance, ...), 2 bad flags, 3 a plan with no feasible option.
#include <CLI/CLI.hpp>
#include <vector>

#include "cli.hpp"
#include "command.hpp"
#include "command_table.hpp"
#include "nubo/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"nubo-cost: the time and money a training job takes on each cloud instance"};
  app.require_subcommand(1);
  const std::vector<nubo_cli::Command> commands = {
      nubo_cost::catalog_command(app),  nubo_cost::plan_command(app),
      nubo_cost::schedule_command(app), nubo_cost::checkpoint_command(app),
      nubo_cost::own_command(app),      nubo_cost::scale_command(app)};
  nubo_cli::add_version(app, "nubo-cost");
  if (const int status = nubo_cli::parse(app, argc, argv); status >= 0) return status;
  const nubo_cli::Command* command = nubo_cli::given(commands);
  if (command == nullptr) return nubo_cli::kExitUsage;
  try {
    return command->run();
  } catch (const nubo::Error& e) {
    nubo_cli::print_error("nubo-cost", e.what());
    return 1;
  }
}
