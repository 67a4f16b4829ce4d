//! Time and money on cloud instances (docs/cost.md): a [`Catalog`] of instances and prices,
//! [`plan`] a [`Workload`] over instance x node count x pricing under a deadline and a budget,
//! [`estimate`] one option, the Young/Daly [`checkpoint_interval`], [`rent_vs_own`], and a live
//! [`Meter`] for a running job.
//!
//! ```no_run
//! use nubo::cost::{plan, Catalog, PlanOptions, Pricing, Workload};
//! let catalog = Catalog::builtin()?;
//! let workload = Workload { total_flops: 3e18, ..Default::default() };
//! let options = PlanOptions { pricings: vec![Pricing::OnDemand, Pricing::Spot],
//!                             deadline_s: Some(6.0 * 3600.0), ..Default::default() };
//! for e in plan(&catalog, &workload, &options)?.ranked {
//!     println!("{:<32} {:>8.1} h {:>9.2} $", e.label, e.total_s / 3600.0, e.cost_total);
//! }
//! # Ok::<(), nubo::Error>(())
//! ```
//!
//! [`Catalog`] and [`Meter`] are `Send` and `Sync`: the C library guards them, and whatever
//! changes them takes `&mut self`. A [`Plan`] is copied out of C into owned values.

use std::ffi::CString;
use std::os::raw::c_int;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

pub use crate::enums::{Optimizer, Pricing};
use crate::fill::Keep;
pub use crate::options::{InferenceWorkload, OwnRequest};
pub use crate::results::{
    CatalogSource, CatalogUpdate, CheckpointPlan, Estimate, Exclusion, Instance, OwnResult,
    ServingOption,
};
use crate::{
    c_int_of, c_ptr, c_string, check, ffi, optional_c_string, optional_path, owned, path_string,
    read_text, records, DType, Error, Status,
};

/// A count as model sizes and token counts are written: "7B" is 7e9, also "70M", "1.5T", "2e9".
pub fn parse_count(text: &str, what: &str) -> Result<f64, Error> {
    let text = c_string("text", text.as_bytes())?;
    let what = c_string("what", what.as_bytes())?;
    let mut out = 0.0;
    // SAFETY: NUL-terminated strings and an out-pointer to a local.
    check(unsafe { ffi::nubo_units_parse_count(text.as_ptr(), what.as_ptr(), &mut out) })?;
    Ok(out)
}

/// Whether a GPU filter names a model: "H200" matches H200-SXM-141GB, not GH200-96GB.
pub fn gpu_model_matches(model: &str, filter: &str) -> bool {
    let (Ok(model), Ok(filter)) = (CString::new(model), CString::new(filter)) else {
        return false;
    };
    // SAFETY: NUL-terminated strings.
    unsafe { ffi::nubo_cost_gpu_model_matches(model.as_ptr(), filter.as_ptr()) != 0 }
}

/// A positive value in C means "set"; 0 (or a negative sentinel) means the default.
fn set(raw: f64) -> Option<f64> {
    (raw > 0.0).then_some(raw)
}

// ---- Catalogs ------------------------------------------------------------------------------

/// How `update_catalog` fetches.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UpdateOptions {
    /// None: the default cache ($XDG_CACHE_HOME/nubo/catalog).
    pub cache_dir: Option<PathBuf>,
    /// Empty: every known source.
    pub sources: Vec<String>,
    /// (name, URL) pairs over the known URLs.
    pub urls: Vec<(String, String)>,
    /// None: the library's defaults (30 s, 600 s).
    pub timeout_s: Option<f64>,
    pub total_timeout_s: Option<f64>,
}

/// Fetches each public source into the cache (`nubo-cost catalog update`): a source whose new
/// version fails keeps its last good one, which its entry says. Only bad options are an error.
pub fn update_catalog(options: &UpdateOptions) -> Result<Vec<CatalogUpdate>, Error> {
    let mut raw = ffi::nubo_cost_update_options::new();
    // SAFETY: a struct of the size given.
    check(unsafe { ffi::nubo_cost_update_options_init(&mut raw, std::mem::size_of_val(&raw)) })?;
    let cache = optional_path("cache_dir", options.cache_dir.as_deref())?;
    let names = (!options.sources.is_empty())
        .then(|| c_string("sources", options.sources.join(" ").as_bytes()))
        .transpose()?;
    let urls: Vec<String> = options
        .urls
        .iter()
        .map(|(n, u)| format!("{n}={u}"))
        .collect();
    let urls = (!urls.is_empty())
        .then(|| c_string("urls", urls.join(" ").as_bytes()))
        .transpose()?;
    raw.cache_dir = c_ptr(&cache);
    raw.sources = c_ptr(&names);
    raw.urls = c_ptr(&urls);
    if let Some(t) = options.timeout_s {
        raw.timeout_s = t;
    }
    if let Some(t) = options.total_timeout_s {
        raw.total_timeout_s = t;
    }
    let mut handle = ptr::null_mut();
    // SAFETY: options whose strings outlive the call, and an out-pointer.
    check(unsafe { ffi::nubo_cost_catalog_update(&raw, &mut handle) })?;
    let handle = NonNull::new(handle)
        .ok_or_else(|| Error::new(Status::Internal, "nubo_cost_catalog_update gave NULL"))?;
    // SAFETY: a live handle, read and then freed once.
    unsafe {
        let entries = records(
            ffi::nubo_cost_update_count(handle.as_ptr()),
            |i, c| ffi::nubo_cost_update_entry(handle.as_ptr(), i, c),
            CatalogUpdate::from_c,
        );
        ffi::nubo_cost_update_free(handle.as_ptr());
        entries
    }
}

/// Instances with prices, and the providers' storage and network prices.
pub struct Catalog {
    raw: NonNull<ffi::nubo_cost_catalog>,
}

// SAFETY: the C catalog holds no thread affinity; reads through &self are const C++ reads and
// every change takes &mut self.
unsafe impl Send for Catalog {}
unsafe impl Sync for Catalog {}

impl Catalog {
    pub(crate) fn raw(&self) -> *mut ffi::nubo_cost_catalog {
        self.raw.as_ptr()
    }
}

impl Catalog {
    /// The embedded catalogs (`nubo-cost` with no `--catalog`).
    pub fn builtin() -> Result<Catalog, Error> {
        let mut raw = ptr::null_mut();
        // SAFETY: out-pointer to a local.
        check(unsafe { ffi::nubo_cost_catalog_builtin(&mut raw) })?;
        NonNull::new(raw)
            .map(|raw| Catalog { raw })
            .ok_or_else(|| Error::new(Status::Internal, "nubo_cost_catalog_builtin gave NULL"))
    }

    /// The embedded snapshot as refreshed by [`update_catalog`] (and SkyPilot's local
    /// catalogs): what `nubo-cost` plans with. It never fetches anything itself.
    pub fn current(cache_dir: Option<&Path>) -> Result<Catalog, Error> {
        let dir = optional_path("cache_dir", cache_dir)?;
        let mut raw = ptr::null_mut();
        // SAFETY: an optional NUL-terminated path and an out-pointer to a local.
        check(unsafe { ffi::nubo_cost_catalog_current(c_ptr(&dir), &mut raw) })?;
        NonNull::new(raw)
            .map(|raw| Catalog { raw })
            .ok_or_else(|| Error::new(Status::Internal, "nubo_cost_catalog_current gave NULL"))
    }

    /// Adds the rows of a file in a public format ("skypilot", "gpuhunt", "spot-advisor",
    /// "aws-price-list", "azure-retail"); bad rows are skipped and listed in [`Catalog::sources`].
    pub fn import_file(
        &mut self,
        path: impl AsRef<Path>,
        format: &str,
        provider: &str,
    ) -> Result<(), Error> {
        let path = path_string("path", path.as_ref())?;
        let format = c_string("format", format.as_bytes())?;
        let provider = c_string("provider", provider.as_bytes())?;
        // SAFETY: a live handle and NUL-terminated strings.
        check(unsafe {
            ffi::nubo_cost_catalog_import(
                self.raw.as_ptr(),
                path.as_ptr(),
                format.as_ptr(),
                provider.as_ptr(),
            )
        })
    }

    /// The sources the rows came from, in the order they were read.
    pub fn sources(&self) -> Result<Vec<CatalogSource>, Error> {
        let p = self.raw.as_ptr();
        // SAFETY: a live handle; the strings are copied before the next call on it.
        unsafe {
            records(
                ffi::nubo_cost_catalog_source_count(p),
                |i, c| ffi::nubo_cost_catalog_source(p, i, c),
                CatalogSource::from_c,
            )
        }
    }

    /// Adds the rows of a CSV or JSON catalog file (a row with an existing key replaces it);
    /// `replace` drops the instances first. A malformed row is InvalidArgument naming the file
    /// and the line, a missing file NotFound; on error the catalog is unchanged.
    pub fn load(&mut self, path: impl AsRef<Path>, replace: bool) -> Result<(), Error> {
        let path = path_string("path", path.as_ref())?;
        // SAFETY: a live handle and a NUL-terminated path.
        check(unsafe {
            ffi::nubo_cost_catalog_load(self.raw.as_ptr(), path.as_ptr(), c_int::from(replace))
        })
    }

    /// Discounts (fractions in [0, 1)) that derive reserved prices where none is published.
    pub fn set_reserved_discounts(&mut self, one_year: f64, three_year: f64) -> Result<(), Error> {
        // SAFETY: a live handle.
        check(unsafe {
            ffi::nubo_cost_catalog_set_reserved_discounts(self.raw.as_ptr(), one_year, three_year)
        })
    }

    /// Every instance row, in the catalog's order.
    pub fn instances(&self) -> Result<Vec<Instance>, Error> {
        let p = self.raw.as_ptr();
        // SAFETY: a live handle; the strings are copied before the next call on it.
        unsafe {
            records(
                ffi::nubo_cost_catalog_instance_count(p),
                |i, c| ffi::nubo_cost_catalog_instance(p, i, c),
                Instance::from_c,
            )
        }
    }
}

impl Drop for Catalog {
    fn drop(&mut self) {
        // SAFETY: the handle came from nubo_cost_catalog_builtin and is freed once.
        unsafe { ffi::nubo_cost_catalog_free(self.raw.as_ptr()) }
    }
}

// ---- The workload ----------------------------------------------------------------------------

/// What is to be run: analytic (total_flops, or flops_per_sample x samples x epochs) or
/// measured (a nubo-train profile, by path or as JSON text, which replaces the analytic
/// fields). `Default` holds the library's defaults (epochs 1, BF16, MFU 0.4).
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub total_flops: f64,
    pub flops_per_sample: f64,
    /// Per epoch.
    pub samples: f64,
    pub epochs: f64,
    pub global_batch: f64,
    /// The arithmetic its FLOPs are counted in: it picks the GPU's peak rate (F32, Tf32, F16
    /// or Bf16; the model refuses integers).
    pub dtype: DType,
    /// Model FLOPs utilisation: the fraction of the GPU's peak that the work achieves.
    pub mfu: f64,
    pub profile_path: Option<PathBuf>,
    pub profile_json: Option<String>,
    /// Gradient bytes all-reduced per step (analytic).
    pub parameter_bytes: f64,
    pub memory_per_gpu_bytes: f64,
    pub dataset_bytes: f64,
    pub compression_ratio: f64,
    pub checkpoint_bytes: f64,
    /// None: the provider's block storage throughput.
    pub checkpoint_write_mbps: Option<f64>,
    /// On-demand and reserved; None: hourly.
    pub checkpoint_interval_s: Option<f64>,
    /// Fraction of communication hidden behind compute.
    pub overlap: f64,
    pub egress_bytes: f64,
    pub storage_months_after: f64,
    /// "team=vision,project=a".
    pub tags: Option<String>,
    /// Described by its model: parameters (7e9, or [`parse_count`]("7B")) with tokens give the
    /// FLOPs (6 N D), the GPU memory per worker and the gradient bytes of a step.
    pub parameters: f64,
    pub tokens: f64,
    /// Tokens per sample; 0: 2048 for the activation estimate.
    pub sequence_length: f64,
    pub micro_batch: f64,
    pub optimizer: Optimizer,
    /// ZeRO stage 0 (plain data parallelism) to 3; -1: the least that fits.
    pub sharding: i32,
}

/// The library's defaults, filled by its own init function: written once, in C.
fn workload_defaults() -> Result<ffi::nubo_cost_workload, Error> {
    let mut raw = ffi::nubo_cost_workload::new();
    // SAFETY: a struct of the size given.
    check(unsafe { ffi::nubo_cost_workload_init(&mut raw, std::mem::size_of_val(&raw)) })?;
    Ok(raw)
}

fn plan_options_defaults() -> Result<ffi::nubo_cost_plan_options, Error> {
    let mut raw = ffi::nubo_cost_plan_options::new();
    // SAFETY: a struct of the size given.
    check(unsafe { ffi::nubo_cost_plan_options_init(&mut raw, std::mem::size_of_val(&raw)) })?;
    Ok(raw)
}

impl Default for Workload {
    fn default() -> Workload {
        let raw = workload_defaults().expect("nubo_cost_workload_init refused its own struct");
        Workload {
            total_flops: raw.total_flops,
            flops_per_sample: raw.flops_per_sample,
            samples: raw.samples,
            epochs: raw.epochs,
            global_batch: raw.global_batch,
            dtype: DType::from_raw(raw.dtype).unwrap_or(DType::Bf16),
            mfu: raw.mfu,
            profile_path: None,
            profile_json: None,
            parameter_bytes: raw.parameter_bytes,
            memory_per_gpu_bytes: raw.memory_per_gpu_bytes,
            dataset_bytes: raw.dataset_bytes,
            compression_ratio: raw.compression_ratio,
            checkpoint_bytes: raw.checkpoint_bytes,
            checkpoint_write_mbps: set(raw.checkpoint_write_mbps),
            checkpoint_interval_s: set(raw.checkpoint_interval_s),
            overlap: raw.overlap,
            egress_bytes: raw.egress_bytes,
            storage_months_after: raw.storage_months_after,
            tags: None,
            parameters: raw.parameters,
            tokens: raw.tokens,
            sequence_length: raw.sequence_length,
            micro_batch: raw.micro_batch,
            optimizer: if raw.optimizer == ffi::NUBO_OPTIMIZER_SGD {
                Optimizer::Sgd
            } else {
                Optimizer::Adam
            },
            sharding: raw.sharding,
        }
    }
}

/// A workload as C takes it, with the strings it points at kept alive beside it.
struct RawWorkload {
    raw: ffi::nubo_cost_workload,
    _strings: [Option<CString>; 3],
}

impl Workload {
    fn to_raw(&self) -> Result<RawWorkload, Error> {
        let profile_path = optional_path("profile_path", self.profile_path.as_deref())?;
        let profile_json = optional_c_string("profile_json", self.profile_json.as_deref())?;
        let tags = optional_c_string("tags", self.tags.as_deref())?;
        let mut raw = workload_defaults()?;
        raw.total_flops = self.total_flops;
        raw.flops_per_sample = self.flops_per_sample;
        raw.samples = self.samples;
        raw.epochs = self.epochs;
        raw.global_batch = self.global_batch;
        raw.dtype = self.dtype.raw();
        raw.mfu = self.mfu;
        raw.profile_path = c_ptr(&profile_path);
        raw.profile_json = c_ptr(&profile_json);
        raw.parameter_bytes = self.parameter_bytes;
        raw.memory_per_gpu_bytes = self.memory_per_gpu_bytes;
        raw.dataset_bytes = self.dataset_bytes;
        raw.compression_ratio = self.compression_ratio;
        raw.checkpoint_bytes = self.checkpoint_bytes;
        raw.checkpoint_write_mbps = self.checkpoint_write_mbps.unwrap_or(0.0);
        raw.checkpoint_interval_s = self.checkpoint_interval_s.unwrap_or(0.0);
        raw.overlap = self.overlap;
        raw.egress_bytes = self.egress_bytes;
        raw.storage_months_after = self.storage_months_after;
        raw.tags = c_ptr(&tags);
        raw.parameters = self.parameters;
        raw.tokens = self.tokens;
        raw.sequence_length = self.sequence_length;
        raw.micro_batch = self.micro_batch;
        raw.optimizer = self.optimizer.raw();
        raw.sharding = self.sharding;
        Ok(RawWorkload {
            raw,
            _strings: [profile_path, profile_json, tags],
        })
    }
}

// ---- Serving (inference) -----------------------------------------------------------------------

/// A serving plan: options cheapest per hour first, and what was left out and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ServingPlan {
    pub options: Vec<ServingOption>,
    pub exclusions: Vec<Exclusion>,
}

/// The cheapest instances that serve `serving` at its rate within its latency; the options'
/// pricings, filters and limit apply.
pub fn serve(
    catalog: &Catalog,
    serving: &InferenceWorkload,
    options: &PlanOptions,
) -> Result<ServingPlan, Error> {
    let raw = serving.to_raw(&mut Keep::default())?;
    let opts = options.to_raw()?;
    let mut handle = ptr::null_mut();
    // SAFETY: a live catalog, structs that outlive the call, an out-pointer.
    check(unsafe {
        ffi::nubo_cost_serving_plan_create(catalog.raw.as_ptr(), &raw, &opts.raw, &mut handle)
    })?;
    let handle = NonNull::new(handle)
        .ok_or_else(|| Error::new(Status::Internal, "the library gave a NULL serving plan"))?;
    let p = handle.as_ptr();
    // SAFETY: a live plan, read and then freed once.
    unsafe {
        let plan = records(
            ffi::nubo_cost_serving_plan_count(p),
            |i, c| ffi::nubo_cost_serving_plan_option(p, i, c),
            ServingOption::from_c,
        )
        .and_then(|options| {
            Ok(ServingPlan {
                options,
                exclusions: records(
                    ffi::nubo_cost_serving_plan_exclusion_count(p),
                    |i, c| ffi::nubo_cost_serving_plan_exclusion(p, i, c),
                    Exclusion::from_c,
                )?,
            })
        });
        ffi::nubo_cost_serving_plan_free(p);
        plan
    }
}

// ---- Planning --------------------------------------------------------------------------------

/// What to consider and how to rank (`nubo-cost plan`'s flags).
#[derive(Debug, Clone, PartialEq)]
pub struct PlanOptions {
    /// Empty: on-demand only.
    pub pricings: Vec<Pricing>,
    pub min_nodes: u32,
    pub max_nodes: u32,
    pub deadline_s: Option<f64>,
    /// $.
    pub budget: Option<f64>,
    /// A substring of the GPU model.
    pub gpu: Option<String>,
    pub provider: Option<String>,
    pub region: Option<String>,
    /// Fastest first instead of cheapest first.
    pub rank_by_time: bool,
    /// Ranked plans kept; 0: all.
    pub limit: usize,
    /// None: the provider's default.
    pub spot_mtbi_s: Option<f64>,
    /// None: the provider's default.
    pub restart_s: Option<f64>,
    /// Achieved / peak link bandwidth.
    pub comm_efficiency: f64,
    /// A `nubo-smi check --out` report: the GPU models it checked are priced at the rates it
    /// measured when below what the model should do.
    pub preflight_file: Option<PathBuf>,
}

impl Default for PlanOptions {
    fn default() -> PlanOptions {
        let raw =
            plan_options_defaults().expect("nubo_cost_plan_options_init refused its own struct");
        PlanOptions {
            pricings: Vec::new(),
            min_nodes: raw.min_nodes.max(1) as u32,
            max_nodes: raw.max_nodes.max(1) as u32,
            deadline_s: set(raw.deadline_s),
            budget: set(raw.budget),
            gpu: None,
            provider: None,
            region: None,
            rank_by_time: raw.rank_by_time != 0,
            limit: raw.limit,
            spot_mtbi_s: set(raw.spot_mtbi_s),
            restart_s: (raw.restart_s >= 0.0).then_some(raw.restart_s),
            comm_efficiency: raw.comm_efficiency,
            preflight_file: None,
        }
    }
}

struct RawPlanOptions {
    raw: ffi::nubo_cost_plan_options,
    _strings: [Option<CString>; 4],
}

impl PlanOptions {
    fn to_raw(&self) -> Result<RawPlanOptions, Error> {
        let gpu = optional_c_string("gpu", self.gpu.as_deref())?;
        let provider = optional_c_string("provider", self.provider.as_deref())?;
        let region = optional_c_string("region", self.region.as_deref())?;
        let preflight = optional_path("preflight_file", self.preflight_file.as_deref())?;
        let mut raw = plan_options_defaults()?;
        if !self.pricings.is_empty() {
            raw.pricings = self
                .pricings
                .iter()
                .fold(0, |bits, p| bits | (1u32 << p.raw()));
        }
        raw.min_nodes = c_int_of("min_nodes", self.min_nodes)?;
        raw.max_nodes = c_int_of("max_nodes", self.max_nodes)?;
        raw.deadline_s = self.deadline_s.unwrap_or(0.0);
        raw.budget = self.budget.unwrap_or(0.0);
        raw.gpu = c_ptr(&gpu);
        raw.provider = c_ptr(&provider);
        raw.region = c_ptr(&region);
        raw.rank_by_time = c_int::from(self.rank_by_time);
        raw.limit = self.limit;
        raw.spot_mtbi_s = self.spot_mtbi_s.unwrap_or(0.0);
        raw.restart_s = self.restart_s.unwrap_or(-1.0);
        raw.comm_efficiency = self.comm_efficiency;
        raw.preflight_file = c_ptr(&preflight);
        Ok(RawPlanOptions {
            raw,
            _strings: [gpu, provider, region, preflight],
        })
    }
}

/// A plan, copied out of the library: no feasible option is not an error (ranked is empty and
/// the exclusions say why).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub considered: usize,
    pub feasible: usize,
    /// Best first (cheapest, or fastest with rank_by_time).
    pub ranked: Vec<Estimate>,
    /// The time/cost Pareto frontier, fastest first.
    pub frontier: Vec<Estimate>,
    pub exclusions: Vec<Exclusion>,
    /// The plan as `nubo-cost plan --json` prints it (docs/cost.md).
    pub json: String,
}

/// The C plan handle while its contents are copied out.
struct PlanHandle(NonNull<ffi::nubo_cost_plan>);

impl Drop for PlanHandle {
    fn drop(&mut self) {
        // SAFETY: the handle came from nubo_cost_plan_create or nubo_cost_estimate.
        unsafe { ffi::nubo_cost_plan_free(self.0.as_ptr()) }
    }
}

impl PlanHandle {
    fn new(raw: *mut ffi::nubo_cost_plan) -> Result<PlanHandle, Error> {
        NonNull::new(raw)
            .map(PlanHandle)
            .ok_or_else(|| Error::new(Status::Internal, "the library gave a NULL plan"))
    }

    fn copy(self) -> Result<Plan, Error> {
        let p = self.0.as_ptr();
        let (mut considered, mut feasible) = (0usize, 0usize);
        // SAFETY: a live plan and out-pointers to locals.
        check(unsafe { ffi::nubo_cost_plan_counts(p, &mut considered, &mut feasible) })?;
        // SAFETY: a live plan; the strings are copied while it lives.
        unsafe {
            Ok(Plan {
                considered,
                feasible,
                ranked: records(
                    ffi::nubo_cost_plan_ranked_count(p),
                    |i, c| ffi::nubo_cost_plan_ranked(p, i, c),
                    Estimate::from_c,
                )?,
                frontier: records(
                    ffi::nubo_cost_plan_frontier_count(p),
                    |i, c| ffi::nubo_cost_plan_frontier(p, i, c),
                    Estimate::from_c,
                )?,
                exclusions: records(
                    ffi::nubo_cost_plan_exclusion_count(p),
                    |i, c| ffi::nubo_cost_plan_exclusion(p, i, c),
                    Exclusion::from_c,
                )?,
                json: read_text("nubo_cost_plan_json", |buf, capacity, needed| {
                    ffi::nubo_cost_plan_json(p, buf, capacity, needed)
                })?,
            })
        }
    }
}

/// Plans `workload` over every instance, node count and pricing the options allow. A malformed
/// workload, profile or option is InvalidArgument naming it.
pub fn plan(catalog: &Catalog, workload: &Workload, options: &PlanOptions) -> Result<Plan, Error> {
    let (w, o) = (workload.to_raw()?, options.to_raw()?);
    let mut raw = ptr::null_mut();
    // SAFETY: a live catalog, structs and strings alive for the call, an out-pointer.
    check(unsafe { ffi::nubo_cost_plan_create(catalog.raw.as_ptr(), &w.raw, &o.raw, &mut raw) })?;
    PlanHandle::new(raw)?.copy()
}

/// One option, fully broken down, whether or not it meets the options' deadline or budget. An
/// unknown instance is NotFound, a pricing without a price Unavailable, a dtype the GPU lacks
/// (or several nodes without a network) Unsupported.
pub fn estimate(
    catalog: &Catalog,
    workload: &Workload,
    instance: &str,
    region: Option<&str>,
    nodes: u32,
    pricing: Pricing,
    options: &PlanOptions,
) -> Result<Estimate, Error> {
    let (w, o) = (workload.to_raw()?, options.to_raw()?);
    let instance = c_string("instance", instance.as_bytes())?;
    let region = optional_c_string("region", region)?;
    let mut raw = ptr::null_mut();
    // SAFETY: as in plan; region is NULL or a live string.
    check(unsafe {
        ffi::nubo_cost_estimate(
            catalog.raw.as_ptr(),
            &w.raw,
            instance.as_ptr(),
            c_ptr(&region),
            c_int_of("nodes", nodes)?,
            pricing.raw(),
            &o.raw,
            &mut raw,
        )
    })?;
    let mut plan = PlanHandle::new(raw)?.copy()?;
    plan.ranked
        .pop()
        .ok_or_else(|| Error::new(Status::Internal, "nubo_cost_estimate gave no estimate"))
}

// ---- Tools -------------------------------------------------------------------------------------

/// Young/Daly for `work_s` of work, `write_s` per checkpoint, `mtbi_s` between interruptions
/// and `restart_s` per restart. Non-positive or non-finite times are InvalidArgument.
pub fn checkpoint_interval(
    work_s: f64,
    write_s: f64,
    mtbi_s: f64,
    restart_s: f64,
) -> Result<CheckpointPlan, Error> {
    let mut c = ffi::nubo_cost_checkpoint_info::new();
    // SAFETY: an out-pointer to a local.
    check(unsafe { ffi::nubo_cost_checkpoint_plan(work_s, write_s, mtbi_s, restart_s, &mut c) })?;
    Ok(CheckpointPlan::from(&c))
}

/// Rent or own; a non-positive price, power or horizon is InvalidArgument.
pub fn rent_vs_own(request: &OwnRequest) -> Result<OwnResult, Error> {
    let raw = request.to_raw(&mut Keep::default())?;
    let mut out = ffi::nubo_cost_own_info::new();
    // SAFETY: a filled request and an out-pointer to a local.
    check(unsafe { ffi::nubo_cost_rent_vs_own(&raw, &mut out) })?;
    Ok(OwnResult::from(&out))
}

// ---- The live meter ----------------------------------------------------------------------------

/// The money a running job has spent, and what it will have spent at the end.
pub struct Meter {
    raw: NonNull<ffi::nubo_cost_meter>,
}

// SAFETY: the meter holds no thread affinity; update takes &mut self.
unsafe impl Send for Meter {}
unsafe impl Sync for Meter {}

impl Meter {
    /// `hourly` $/h plus `fixed` $ (storage, egress).
    pub fn new(hourly: f64, fixed: f64) -> Result<Meter, Error> {
        let mut raw = ptr::null_mut();
        // SAFETY: an out-pointer to a local.
        check(unsafe { ffi::nubo_cost_meter_create(hourly, fixed, &mut raw) })?;
        Meter::wrap(raw)
    }

    /// The meter of `nodes` instances of a catalog row at a pricing: NotFound for an unknown
    /// instance, Unavailable for a pricing it has no price for.
    pub fn for_instance(
        catalog: &Catalog,
        instance: &str,
        pricing: Pricing,
        nodes: u32,
    ) -> Result<Meter, Error> {
        let instance = c_string("instance", instance.as_bytes())?;
        let mut raw = ptr::null_mut();
        // SAFETY: a live catalog, a NUL-terminated name, an out-pointer.
        check(unsafe {
            ffi::nubo_cost_meter_for_instance(
                catalog.raw.as_ptr(),
                instance.as_ptr(),
                pricing.raw(),
                c_int_of("nodes", nodes)?,
                &mut raw,
            )
        })?;
        Meter::wrap(raw)
    }

    fn wrap(raw: *mut ffi::nubo_cost_meter) -> Result<Meter, Error> {
        NonNull::new(raw)
            .map(|raw| Meter { raw })
            .ok_or_else(|| Error::new(Status::Internal, "the library gave a NULL meter"))
    }

    /// Records `progress` in [0, 1] after `elapsed_s`; returns ($ spent, $ projected at the end).
    pub fn update(&mut self, elapsed_s: f64, progress: f64) -> Result<(f64, f64), Error> {
        let (mut spent, mut projected) = (0.0, 0.0);
        // SAFETY: a live meter and out-pointers to locals.
        check(unsafe {
            ffi::nubo_cost_meter_update(
                self.raw.as_ptr(),
                elapsed_s,
                progress,
                &mut spent,
                &mut projected,
            )
        })?;
        Ok((spent, projected))
    }

    /// (hourly, price date, price source): the price in force when the meter was made from a
    /// catalog row, so a report of the run prices it at what it cost then.
    pub fn price(&self) -> Result<(f64, String, String), Error> {
        let mut info = ffi::nubo_cost_meter_info::new();
        // SAFETY: a live meter; the strings are copied while it lives.
        unsafe {
            check(ffi::nubo_cost_meter_price(self.raw.as_ptr(), &mut info))?;
            Ok((
                info.hourly,
                owned(info.price_date),
                owned(info.price_source),
            ))
        }
    }

    /// "$12.34 spent, ~$56.78 projected", as nubo-train and nubo-cost print it.
    pub fn line(&self) -> Result<String, Error> {
        let m = self.raw.as_ptr();
        // SAFETY: a live meter; read_text hands a buffer of the size it asks for.
        read_text("nubo_cost_meter_line", |buf, capacity, needed| unsafe {
            ffi::nubo_cost_meter_line(m, buf, capacity, needed)
        })
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        // SAFETY: the handle came from a create call and is freed once.
        unsafe { ffi::nubo_cost_meter_free(self.raw.as_ptr()) }
    }
}
