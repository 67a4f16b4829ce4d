//! Sending files over the network (docs/net.md): [`send`] to a [`Server`], compressed,
//! verified, resumable, and encrypted with TLS 1.3 keyed from a shared token.
//!
//! ```no_run
//! use nubo::net::{send, SendOptions, Server, ServerOptions};
//! let server = Server::start(&ServerOptions {
//!     token: Some("secret".into()),
//!     ..ServerOptions::new("/data")
//! })?;
//! let to = format!("127.0.0.1:{}/run1", server.port());
//! let options = SendOptions { token: Some("secret".into()), ..Default::default() };
//! let summary = send(&["dataset/"], &to, &options, None)?;
//! println!("{} bytes sent, {} skipped", summary.bytes_sent, summary.bytes_skipped);
//! # Ok::<(), nubo::Error>(())
//! ```
//!
//! Running the same send again after an interruption sends only what the receiver has not
//! verified. A [`Server`] is `Send` and `Sync`: it serves on its own threads, and its port and
//! statistics may be read from any thread.

use std::ffi::CString;
use std::os::raw::c_int;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

use crate::progress::{Callback, FromRaw};
pub use crate::results::{SendProgress, SendSummary, ServerStats};
use crate::transfer::{flag, Codec, StringList};
use crate::{
    c_int_of, c_ptr, c_string, check, ffi, optional_c_string, optional_path, path_string, Error,
    Status,
};

impl FromRaw for SendProgress {
    type Raw = ffi::nubo_net_progress;
    unsafe fn from_raw(p: &ffi::nubo_net_progress) -> Result<SendProgress, Error> {
        SendProgress::from_c(p)
    }
}

/// Called with each [`SendProgress`]; returning `false` cancels the send, which then fails with
/// [`Status::Cancelled`] and leaves what was verified for the next attempt.
pub type SendProgressFn<'a> = &'a mut dyn FnMut(&SendProgress) -> bool;

/// Options of [`send`]; `None` keeps the library's default.
#[derive(Debug, Clone, Default)]
pub struct SendOptions {
    /// Default: auto, per chunk, fed with the link's throughput.
    pub codec: Option<Codec>,
    pub level: Option<i32>,
    /// Bytes per chunk, 4 KiB to 64 MiB (default 4 MiB).
    pub chunk_size: Option<u64>,
    /// Compression threads (default: every core).
    pub threads: Option<i32>,
    /// Bytes of chunks in flight (default 64 MiB).
    pub memory_limit: Option<u64>,
    /// TCP connections in parallel, 1..64 (default 4).
    pub streams: Option<i32>,
    /// Wire bytes per second, all streams together (default: unlimited).
    pub rate: Option<f64>,
    /// The shared secret, any bytes but NUL; None: `NUBO_TOKEN`.
    pub token: Option<Vec<u8>>,
    /// A peer silent this long is given up (default 30 s).
    pub timeout_seconds: Option<f64>,
    /// TLS 1.3 (default true); false sends in the clear, for trusted links only.
    pub encrypt: Option<bool>,
    /// Check the server's certificate against this CA instead of the token's key.
    pub ca_file: Option<PathBuf>,
    /// The name the certificate must carry (default: the destination's host).
    pub server_name: Option<String>,
    /// rsync-style filters: leave out what matches `exclude` unless `include` matches.
    pub exclude: Vec<String>,
    pub include: Vec<String>,
}

fn token(value: &Option<Vec<u8>>) -> Result<Option<CString>, Error> {
    match value {
        None => Ok(None),
        Some(t) if t.is_empty() => Err(Error::new(
            Status::InvalidArgument,
            "token is empty: give the shared secret, or None to read NUBO_TOKEN",
        )),
        Some(t) => c_string("token", t).map(Some),
    }
}

/// Sends `sources` (files, directories recursively, symlinks as links) to the server at
/// `destination`, "HOST:PORT" or "HOST:PORT/SUBDIR" ("[::1]:PORT" for IPv6). Errors:
/// Unavailable (unreachable, or the connection was lost: call again to resume),
/// InvalidArgument (an option, a malformed destination, a refused token), NotFound (a source),
/// Corrupt (the server refused an entry), Cancelled.
pub fn send<P: AsRef<Path>>(
    sources: &[P],
    destination: &str,
    options: &SendOptions,
    progress: Option<SendProgressFn<'_>>,
) -> Result<SendSummary, Error> {
    let sources = StringList::paths(sources)?;
    let destination = c_string("destination", destination.as_bytes())?;
    let exclude = StringList::patterns("exclude", &options.exclude)?;
    let include = StringList::patterns("include", &options.include)?;
    let token = token(&options.token)?;
    let ca_file = optional_path("ca_file", options.ca_file.as_deref())?;
    let server_name = optional_c_string("server_name", options.server_name.as_deref())?;
    let mut o = ffi::nubo_net_send_options::new();
    // SAFETY: `o` is a valid struct of the size given.
    check(unsafe { ffi::nubo_net_send_options_init(&mut o, std::mem::size_of_val(&o)) })?;
    if let Some(codec) = options.codec {
        o.codec = codec.raw();
    }
    if let Some(level) = options.level {
        o.level = level;
    }
    o.chunk_size = options.chunk_size.unwrap_or(o.chunk_size);
    if let Some(threads) = options.threads {
        o.threads = c_int_of("threads", threads)?;
    }
    o.memory_limit = options.memory_limit.unwrap_or(o.memory_limit);
    if let Some(streams) = options.streams {
        o.streams = c_int_of("streams", streams)?;
    }
    o.rate = options.rate.unwrap_or(o.rate);
    o.token = c_ptr(&token);
    o.timeout_seconds = options.timeout_seconds.unwrap_or(o.timeout_seconds);
    o.encrypt = flag(options.encrypt, o.encrypt);
    o.ca_file = c_ptr(&ca_file);
    o.server_name = c_ptr(&server_name);
    o.exclude = exclude.ptr();
    o.exclude_count = exclude.len();
    o.include = include.ptr();
    o.include_count = include.len();
    let mut callback = Callback::new(progress);
    (o.progress, o.progress_user) = callback.raw();
    let mut s = ffi::nubo_net_send_summary::new();
    // SAFETY: every pointer in `o`, the lists and `callback` outlive the call.
    let raw = unsafe {
        ffi::nubo_net_send(
            sources.ptr(),
            sources.len(),
            destination.as_ptr(),
            &o,
            &mut s,
        )
    };
    callback.finish(raw)?;
    Ok(SendSummary::from(&s))
}

/// Options of [`Server::start`]; `None` keeps the library's default.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Every write lands below this directory, which must exist unless `mkdir`.
    pub dest: PathBuf,
    /// "ADDR:PORT"; default "127.0.0.1:0", a free loopback port.
    pub listen: Option<String>,
    /// The shared secret, any bytes but NUL; None: `NUBO_TOKEN`.
    pub token: Option<Vec<u8>>,
    /// A peer silent this long is given up (default 30 s).
    pub timeout_seconds: Option<f64>,
    /// More connections are refused until some end (default 64).
    pub max_connections: Option<i32>,
    /// fdatasync files before renaming them (default true).
    pub sync: Option<bool>,
    /// X.509 instead of the token's key: PEM certificate and key.
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
    /// Refuse clients in the clear.
    pub require_encryption: bool,
    /// Time a client has to authenticate (default 10 s).
    pub handshake_seconds: Option<f64>,
    /// Connections not yet authenticated (default 16; when full, one that has sent nothing
    /// makes way for a newcomer).
    pub max_pending: Option<i32>,
    /// Of those, per address (default 4).
    pub max_pending_per_address: Option<i32>,
    /// Create `dest` when missing (rsync's --mkpath).
    pub mkdir: bool,
    /// Keep setuid, setgid and sticky bits.
    pub preserve_special_modes: bool,
}

impl ServerOptions {
    /// The defaults, writing below `dest`.
    pub fn new(dest: impl Into<PathBuf>) -> ServerOptions {
        ServerOptions {
            dest: dest.into(),
            listen: None,
            token: None,
            timeout_seconds: None,
            max_connections: None,
            sync: None,
            cert_file: None,
            key_file: None,
            require_encryption: false,
            handshake_seconds: None,
            max_pending: None,
            max_pending_per_address: None,
            mkdir: false,
            preserve_special_modes: false,
        }
    }
}

/// A receiving server, serving each connection on its own thread from [`Server::start`] until
/// [`Server::stop`] or drop.
pub struct Server {
    raw: NonNull<ffi::nubo_net_server>,
}

// SAFETY: the C server runs on its own threads; port and stats are safe from any thread, and
// stop (which takes &mut self) may run on any one.
unsafe impl Send for Server {}
unsafe impl Sync for Server {}

impl Server {
    /// Starts listening. InvalidArgument: no dest, no token, a malformed address; NotFound: a
    /// dest that does not exist (without `mkdir`); Unavailable: the address is in use.
    pub fn start(options: &ServerOptions) -> Result<Server, Error> {
        let dest = path_string("dest", &options.dest)?;
        let listen = optional_c_string("listen", options.listen.as_deref())?;
        let token = token(&options.token)?;
        let cert_file = optional_path("cert_file", options.cert_file.as_deref())?;
        let key_file = optional_path("key_file", options.key_file.as_deref())?;
        let mut o = ffi::nubo_net_server_options::new();
        // SAFETY: `o` is a valid struct of the size given.
        check(unsafe { ffi::nubo_net_server_options_init(&mut o, std::mem::size_of_val(&o)) })?;
        o.dest = dest.as_ptr();
        o.listen = c_ptr(&listen);
        o.token = c_ptr(&token);
        o.timeout_seconds = options.timeout_seconds.unwrap_or(o.timeout_seconds);
        if let Some(n) = options.max_connections {
            o.max_connections = n;
        }
        o.sync = flag(options.sync, o.sync);
        o.cert_file = c_ptr(&cert_file);
        o.key_file = c_ptr(&key_file);
        o.require_encryption = c_int::from(options.require_encryption);
        o.handshake_seconds = options.handshake_seconds.unwrap_or(o.handshake_seconds);
        if let Some(n) = options.max_pending {
            o.max_pending = n;
        }
        if let Some(n) = options.max_pending_per_address {
            o.max_pending_per_address = n;
        }
        o.mkdir = c_int::from(options.mkdir);
        o.preserve_special_modes = c_int::from(options.preserve_special_modes);
        let mut raw = ptr::null_mut();
        // SAFETY: the strings outlive the call (the server copies what it keeps).
        check(unsafe { ffi::nubo_net_server_start(&o, &mut raw) })?;
        NonNull::new(raw)
            .map(|raw| Server { raw })
            .ok_or_else(|| Error::new(Status::Internal, "nubo_net_server_start gave NULL"))
    }

    /// The port it listens on (the one chosen for port 0).
    pub fn port(&self) -> u16 {
        // SAFETY: a live server.
        unsafe { ffi::nubo_net_server_port(self.raw.as_ptr()) }
    }

    pub fn stats(&self) -> Result<ServerStats, Error> {
        let mut s = ffi::nubo_net_server_stats_info::new();
        // SAFETY: a live server and an out-struct of the size it says.
        check(unsafe { ffi::nubo_net_server_stats(self.raw.as_ptr(), &mut s) })?;
        Ok(ServerStats::from(&s))
    }

    /// Stops listening and closes every connection; what was verified stays verified and the
    /// statistics stay readable. Stopping twice is fine.
    pub fn stop(&mut self) -> Result<(), Error> {
        // SAFETY: a live server.
        check(unsafe { ffi::nubo_net_server_stop(self.raw.as_ptr()) })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SAFETY: the handle came from nubo_net_server_start and is freed once.
        unsafe { ffi::nubo_net_server_free(self.raw.as_ptr()) }
    }
}
