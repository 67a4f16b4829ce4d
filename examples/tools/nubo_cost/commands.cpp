#include "commands.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "catalog_load.hpp"
#include "flag_values.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"
#include "svg.hpp"
#include "text_table.hpp"

namespace nubo_cost {
namespace {

using namespace nubo::cost;
using nubo::format_duration;
using nubo::parse_duration;

// A size for the cost model's fields, which are doubles.
double parse_bytes(const std::string& text, const char* what) {
  return static_cast<double>(nubo::parse_bytes(text, what));
}
using nubo::Errc;
using nubo::Error;

constexpr int kExitNoPlan = 3;

void write_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw Error(Errc::io, path + ": cannot write: " + std::strerror(errno));
    f << content;
    if (!f.flush()) throw Error(Errc::io, path + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw Error(Errc::io, path + ": cannot rename the finished file into place");
}

void parse_nodes(const std::string& text, PlanRequest& r) {
  auto dash = text.find('-');
  auto whole = [&](const std::string& s) {
    double v = number(s, "--nodes");
    if (v < 1 || v > 4096 || v != std::floor(v))
      bad("--nodes: expected N or MIN-MAX with whole numbers from 1 to 4096, got '" + text + "'");
    return static_cast<int>(v);
  };
  r.min_nodes = whole(text.substr(0, dash));
  r.max_nodes = dash == std::string::npos ? r.min_nodes : whole(text.substr(dash + 1));
  if (r.max_nodes < r.min_nodes) bad("--nodes: " + text + " counts down; write MIN-MAX");
}

// The flags as workload_from_fields names them; numbers at their defaults left to its defaults.
Workload workload_of(const PlanCommand& c) {
  const auto exact = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf);
  };
  std::map<std::string, std::string> fields{{"params", c.params},
                                            {"model-bytes", c.model_bytes},
                                            {"tokens", c.tokens},
                                            {"optimizer", c.optimizer},
                                            {"zero", c.zero},
                                            {"flops", c.flops},
                                            {"flops-per-sample", c.flops_per_sample},
                                            {"samples", c.samples},
                                            {"profile", c.profile},
                                            {"epochs", exact(c.epochs)},
                                            {"dtype", c.dtype},
                                            {"mfu", c.mfu},
                                            {"micro-batch", exact(c.micro_batch)},
                                            {"params-bytes", c.params_bytes},
                                            {"gpu-memory", c.memory},
                                            {"dataset", c.dataset},
                                            {"compression", exact(c.compression)},
                                            {"checkpoint-size", c.checkpoint_size},
                                            {"checkpoint-every", c.checkpoint_every},
                                            {"egress", c.egress},
                                            {"overlap", c.overlap},
                                            {"keep-months", exact(c.keep_months)}};
  if (c.seq_len > 0) fields["seq-len"] = exact(c.seq_len);
  if (c.batch > 0) fields["batch"] = exact(c.batch);
  auto w = workload_from_fields(fields, "--");
  for (const auto& t : c.tags) {
    auto eq = t.find('=');
    if (eq == std::string::npos || eq == 0) bad("--tag: expected KEY=VALUE, got '" + t + "'");
    w.tags[t.substr(0, eq)] = t.substr(eq + 1);
  }
  return w;
}

// A count as given, to three significant digits: 90, 0.5, 0.001, never "0.0".
std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string describe(const Workload& w, const PlanRequest& r) {
  std::string s;
  if (w.profile) {
    s = "profile " + w.profile->source + " (" + std::to_string(w.profile->devices) + "x " +
        w.profile->device_model + "), " + number_text(w.epochs) + " epochs";
  } else {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g", w.training_flops());
    s = std::string(buf) + " FLOPs in " + std::string(dtype_name(w.dtype)) + " at " +
        (w.mfu > 0          ? percent(w.mfu) + " MFU"
         : w.parameters > 0 ? std::string("the MFU calibrated for each GPU")
                            : percent(0.4) + " MFU");
    if (w.parameters > 0) {
      std::snprintf(buf, sizeof buf, "%.3gB parameters (%s, ZeRO-%s), ", w.parameters / 1e9,
                    std::string(optimizer_name(w.optimizer)).c_str(),
                    w.sharding < 0 ? "auto" : std::to_string(w.sharding).c_str());
      s = buf + s;
    }
  }
  if (r.deadline_s > 0) s += "; deadline " + format_duration(r.deadline_s);
  if (r.budget > 0) s += "; budget " + format_money(r.budget);
  return s;
}

void print_plan(const Plan& p, const Workload& w, const PlanRequest& r, bool explain,
                std::size_t limit) {
  std::cout << "Plan: " << describe(w, r) << "\n"
            << p.considered << " options (instance x "
            << (r.min_nodes == r.max_nodes
                    ? std::to_string(r.min_nodes) + (r.min_nodes == 1 ? " node" : " nodes")
                    : std::to_string(r.min_nodes) + "-" + std::to_string(r.max_nodes) + " nodes")
            << " x " << r.pricings.size() << (r.pricings.size() == 1 ? " pricing" : " pricings")
            << "): " << p.feasible << " feasible, " << p.excluded() << " excluded\n\n";
  if (!p.ranked.empty()) {
    TextTable t({"#", "provider", "instance", "region", ">nodes", "pricing", "GPUs", ">time",
                 ">cost", ">$/h", ">compute", ">comm", ">staging", ">ckpt", ">rework",
                 ">interrupts", "frontier"});
    for (std::size_t i = 0; i < p.ranked.size() && (limit == 0 || i < limit); ++i) {
      const auto& e = p.ranked[i];
      // Spot: the interruptions the whole job expects, and the rate's source (a band, or the
      // provider's default).
      const std::string interrupts =
          e.pricing != Pricing::spot
              ? "-"
              : fixed(e.expected_interruptions, e.expected_interruptions < 10 ? 1 : 0) + " (" +
                    (e.interruption_band.empty() ? "default" : e.interruption_band) + ")";
      t.add(
          {std::to_string(i + 1), e.provider, e.instance, e.region, std::to_string(e.nodes),
           std::string(pricing_name(e.pricing)) + (e.price_derived ? "*" : ""),
           std::to_string(e.gpus_per_node * e.nodes) + "x " + e.gpu_model,
           format_duration(e.time.total_s()), format_money(e.total_cost()), format_money(e.hourly),
           format_duration(e.time.compute_s), format_duration(e.time.communication_s),
           format_duration(e.time.staging_s), format_duration(e.time.checkpoint_s),
           format_duration(e.time.rework_s + e.time.restart_s), interrupts, e.pareto ? "yes" : ""});
    }
    std::cout << t.str();
    const auto& b = p.ranked.front();
    std::cout << "\nBest: " << b.label() << " in " << b.region << "\n  time "
              << format_duration(b.time.total_s()) << " = compute "
              << format_duration(b.time.compute_s) << " + communication "
              << format_duration(b.time.communication_s) << " + staging "
              << format_duration(b.time.staging_s) << " + checkpoints "
              << format_duration(b.time.checkpoint_s) << " + rework "
              << format_duration(b.time.rework_s) << " + restarts "
              << format_duration(b.time.restart_s) << "\n  cost " << format_money(b.total_cost())
              << " = instances " << format_money(b.cost.instances) << " + storage "
              << format_money(b.cost.storage) << " + egress " << format_money(b.cost.egress)
              << "\n";
    if (b.pricing == Pricing::spot)
      std::cout << "  spot: "
                << (b.checkpoint_interval_s > 0
                        ? "checkpoint every " + format_duration(b.checkpoint_interval_s) +
                              " (Young/Daly); "
                        : std::string("no checkpoints (--checkpoint-size); "))
                << fixed(b.expected_interruptions, b.expected_interruptions < 1 ? 2 : 1)
                << " interruptions expected"
                << (b.interruption_band.empty()
                        ? ""
                        : " (interruption frequency " + b.interruption_band + " a month)")
                << "\n";
    for (const auto& n : b.notes) std::cout << "  note: " << n << "\n";
    bool derived = false;
    for (const auto& e : p.ranked) derived = derived || e.price_derived;
    if (derived) std::cout << "  * reserved price derived from the catalog's discount\n";
  } else {
    std::cout << "No option meets the request.\n";
  }
  const auto& ex = p.exclusions();
  if (!ex.empty()) {
    std::cout << "\nExcluded (" << p.excluded() << " options):\n";
    const std::size_t show = explain ? ex.size() : std::min<std::size_t>(ex.size(), 8);
    for (std::size_t i = 0; i < show; ++i)
      std::cout << "  " << ex[i].subject << ": " << ex[i].reason << "\n";
    if (show < ex.size())
      std::cout << "  ... and " << ex.size() - show << " more (--explain lists them all)\n";
  }
}

}  // namespace

int run(const PlanCommand& c) {
  if (c.inference) return run_serving(c);
  auto catalog = load_catalog(c.catalog);
  auto w = workload_of(c);
  PlanRequest r;
  r.pricings = pricings_of(c);
  parse_nodes(c.nodes, r);
  if (!c.deadline.empty()) r.deadline_s = parse_duration(c.deadline, "--deadline");
  if (!c.budget.empty()) r.budget = number(c.budget, "--budget");
  if (!c.mtbi.empty()) {
    r.spot_mtbi_s = parse_duration(c.mtbi, "--mtbi");
    if (r.spot_mtbi_s <= 0) bad("--mtbi: must be longer than 0");
  }
  if (!c.restart.empty()) r.restart_s = parse_duration(c.restart, "--restart");
  r.rank = c.rank == "time" ? PlanRequest::Rank::time : PlanRequest::Rank::cost;
  if (!c.preflight.empty()) {
    r.measured =
        measured_rates(nubo::device::PreflightReport::load(c.preflight), w.dtype, c.preflight);
    for (const auto& m : r.measured)
      std::fprintf(stderr,
                   "nubo-cost: %s priced as %s measured it: compute %.2f, GPU links %.2f "
                   "of the table's\n",
                   m.gpu_model.c_str(), c.preflight.c_str(), m.compute, m.link);
  }
  r.gpu = c.gpu;
  r.provider = c.provider;
  r.region = c.region;
  // The chart shows every feasible plan, so it asks for all of them.
  r.limit = c.svg.empty() ? c.limit : 0;
  auto p = plan(catalog, w, r);
  if (!c.svg.empty()) {
    ChartInput in;
    in.plans = p.ranked;
    in.frontier = p.frontier;
    for (std::size_t i = 0; i < p.ranked.size() && i < 3; ++i) in.best.push_back(p.ranked[i]);
    in.title = "nubo-cost plan: " + describe(w, r);
    in.rank = c.rank;
    in.deadline_s = r.deadline_s;
    in.budget = r.budget;
    write_atomically(c.svg, plan_svg(in));
    if (c.limit && p.ranked.size() > c.limit) p.ranked.resize(c.limit);
  }
  if (c.json) {
    std::cout << p.to_json() << "\n";
  } else {
    print_plan(p, w, r, c.explain, c.limit);
    std::cout << "\n" << price_age_text(catalog, c.catalog);
  }
  if (!c.svg.empty() && !c.json) std::cout << "\nChart: " << c.svg << "\n";
  return p.feasible ? 0 : kExitNoPlan;
}

int run(const CheckpointCommand& c) {
  const double size = parse_bytes(c.size, "--size");
  const double rate = nubo::parse_rate(c.write_rate, "--write-rate");
  if (rate <= 0) bad("--write-rate: must be more than 0 bytes per second");
  const double mtbi = parse_duration(c.mtbi, "--mtbi");
  if (mtbi <= 0) bad("--mtbi: must be longer than 0");
  const double restart = parse_duration(c.restart, "--restart");
  const double write_s = size / rate;
  const double work = c.work.empty() ? 0 : parse_duration(c.work, "--work");
  // Without --work the interval still follows; the expected figures need the job's length.
  auto cp = checkpoint_plan(work, write_s, mtbi, restart);
  const double daly = cp.daly_interval_s;
  if (c.json) {
    nlohmann::json j = {{"write_s", write_s},
                        {"mtbi_s", mtbi},
                        {"restart_s", restart},
                        {"young_interval_s", cp.young_interval_s},
                        {"daly_interval_s", daly}};
    if (work > 0)
      j["run"] = {{"work_s", work},
                  {"expected_wall_s", cp.expected_wall_s},
                  {"checkpoint_writes_s", cp.write_s},
                  {"lost_work_s", cp.lost_work_s},
                  {"restart_s", cp.restart_s},
                  {"interruptions", cp.interruptions},
                  {"overhead_fraction", cp.overhead_fraction()}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "Checkpoint of " << c.size << " at " << c.write_rate
            << "/s: " << format_duration(write_s) << " to write (delta); interruptions every "
            << format_duration(mtbi) << " on average (M); " << format_duration(restart)
            << " to resume (R)\n"
            << "  Young (1974): checkpoint every " << format_duration(cp.young_interval_s)
            << "  (sqrt(2 delta M))\n"
            << "  Daly (2006):  checkpoint every " << format_duration(daly)
            << "  (higher-order optimum: use this one)\n";
  if (work > 0)
    std::cout << "For " << format_duration(work) << " of work: expect "
              << format_duration(cp.expected_wall_s) << " = work + checkpoint writes "
              << format_duration(cp.write_s) << " + lost work " << format_duration(cp.lost_work_s)
              << " + restarts " << format_duration(cp.restart_s) << "; "
              << fixed(cp.interruptions, 1) << " interruptions; overhead "
              << percent(cp.overhead_fraction()) << "\n";
  else
    std::cout << "Give --work 100h for the expected time, lost work and overhead of a job.\n";
  return 0;
}

int run(const OwnCommand& c) {
  auto catalog = load_catalog(c.catalog);
  const auto& in = catalog.get(c.instance);
  const auto pricing = parse_pricing(c.pricing);
  const double hourly = in.price(pricing);
  if (hourly < 0)
    throw Error(Errc::unavailable, in.name + " has no " + std::string(pricing_name(pricing)) +
                                       " price in the catalog");
  OwnRequest r;
  r.hardware_price = c.price;
  r.power_kw = c.power_kw;
  r.years = c.years;
  r.cloud_hourly = hourly;
  r.utilisation = c.utilisation;
  r.kwh_price = c.kwh;
  r.pue = c.pue;
  r.maintenance_per_year = c.maintenance;
  auto o = rent_vs_own(r);
  const double seventy = o.utilisation_for_saving(0.7);
  if (c.json) {
    std::cout << nlohmann::json{{"instance", in.name},
                                {"pricing", pricing_name(pricing)},
                                {"cloud_hourly", hourly},
                                {"energy_per_hour", o.energy_per_hour},
                                {"hours", o.hours},
                                {"break_even_utilisation", o.break_even_utilisation},
                                {"utilisation", c.utilisation},
                                {"own_cost", o.own_cost},
                                {"cloud_cost", o.cloud_cost},
                                {"cloud_saving", o.cloud_saving},
                                {"utilisation_for_70_percent_saving", seventy}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << "Own: " << format_money(c.price) << " + " << fixed(c.power_kw, 1) << " kW x PUE "
            << fixed(c.pue, 2) << " x " << format_money(c.kwh)
            << "/kWh = " << format_money(o.energy_per_hour) << "/h of use, over "
            << fixed(c.years, 1) << " years (" << fixed(o.hours, 0) << " h)\n"
            << "Rent: " << in.name << " " << pricing_name(pricing) << " at " << format_money(hourly)
            << "/h\n\n"
            << "Break-even utilisation: " << percent(o.break_even_utilisation)
            << (o.break_even_utilisation > 1 ? " (renting is always cheaper)" : "")
            << ": owning pays only if the machine works more than that share of all hours.\n"
            << "At " << percent(c.utilisation) << " utilisation: own " << format_money(o.own_cost)
            << ", rent " << format_money(o.cloud_cost) << "; renting "
            << (o.cloud_saving >= 0 ? "saves " + percent(o.cloud_saving)
                                    : "costs " + percent(-o.cloud_saving) + " more")
            << ".\nRenting saves 70% or more below " << percent(seventy) << " utilisation.\n";
  return 0;
}

int run(const ScaleCommand& c) {
  const Profile profile = Profile::load(c.profile);
  nlohmann::json rows = nlohmann::json::array();
  TextTable table({">workers", ">processes", ">threads each", ">compute", ">comm", ">step",
                   ">samples/s", ">run"});
  for (int n : c.workers) {
    HostScaleRequest r;
    r.workers = n;
    r.processes = c.processes > 0 ? c.processes : 1;
    r.cpus = c.cpus;
    r.link_gbps = c.link_gbps;
    const HostScale s = scale_on_host(profile, r);
    rows.push_back({{"workers", n},
                    {"processes", r.processes},
                    {"threads_per_worker", s.threads_per_worker},
                    {"compute_s", s.compute_s},
                    {"gemm_s", s.gemm_s},
                    {"communication_s", s.communication_s},
                    {"step_s", s.step_s},
                    {"samples_per_s", s.samples_per_s},
                    {"run_s", s.run_s}});
    table.add({std::to_string(n), std::to_string(r.processes), std::to_string(s.threads_per_worker),
               format_duration(s.compute_s), format_duration(s.communication_s),
               format_duration(s.step_s), fixed(s.samples_per_s, 0), format_duration(s.run_s)});
  }
  if (c.json) {
    std::printf("%s\n",
                nlohmann::json({{"profile", c.profile}, {"predictions", rows}}).dump(2).c_str());
    return 0;
  }
  std::printf("Scale: profile %s (%dx %s, %d GEMM threads each, %d CPUs)\n", c.profile.c_str(),
              profile.devices, profile.device_model.c_str(), profile.host_threads,
              c.cpus > 0 ? c.cpus : profile.host_cpus);
  std::printf("%s", table.str().c_str());
  return 0;
}

}  // namespace nubo_cost
