//! The metrics server of `tickscope monitor`: `GET /metrics` (the Prometheus text format,
//! encoded by the `prometheus` crate; OpenMetrics, encoded by `prometheus-client`, when the
//! request's `Accept` header asks for `application/openmetrics-text`, as Prometheus does),
//! `GET /healthz`, 404 for any other path and 405 for any other method. The server only
//! encodes; the sink on the collector thread updates the metrics.
//!
//! # The server, and why this one
//!
//! HTTP/1.1 is spoken by `hyper` 1.x (the server under most Rust exporters), driven by one
//! `tokio` current-thread runtime on one thread, `tickscope-http`, which pins itself to the
//! housekeeping CPUs before it builds the runtime or accepts anything. There is no other
//! server thread: a current-thread runtime has no workers, and its blocking pool, started
//! only by `spawn_blocking`, file or DNS calls, is never used here.
//!
//! It replaces `tiny_http` 0.12, whose drop of an unread request drains the declared body
//! into `vec![0; len]` (<https://github.com/tiny-http/tiny-http/pull/290>, never merged), so
//! that one `POST` declaring `Content-Length: 1000000000000` aborted the monitor; whose one
//! serving thread was held by a client that sent a partial body or never read its
//! responses (other scrapes and SIGTERM waited 15–20 s); which kept one thread and two
//! descriptors per idle connection, never timed out, and buffered a 300 MiB header line
//! (<https://github.com/tiny-http/tiny-http/issues/56>). Measured with `bench/http-abuse.sh`
//! (uid 65534 attacking a root `monitor -i 1ms -a 0`, release build, 2-CPU VM shared with
//! other builds, root scraping every 100 ms): with `tiny_http` the first `POST` declaring
//! 10^12 bytes aborted the monitor (SIGABRT); without that request, 15 s of the other attacks
//! left 0 of 3 scrapes answered (5-s timeouts), 295 threads (+286), 788 descriptors (+779)
//! and RSS +1.06 GiB (mlocked). With this server, 60 s of all of them: 574 scrapes answered,
//! none failed, median 0.7 ms, slowest 223 ms (other builds kept the VM's load average at
//! 11–14); 4 threads (+0), descriptors at most +65, RSS +2.1 MiB; SIGTERM ended it in 31 ms,
//! exit status 0.
//! A larger listen backlog ([`BACKLOG`]) was needed: with std's 128, bursts of connects
//! overflowed it and a scrape waited 1 s for its SYN to be retried.
//!
//! # Limits
//!
//! - A request body is never read: no route takes one. A request that has one is answered
//!   (405, or the route's answer for a `GET`) with `Connection: close`; hyper reads at most
//!   what one read returns of it, into its connection buffer, then closes.
//! - The request line and headers: at most [`MAX_HEADER_BYTES`] bytes and [`MAX_HEADERS`]
//!   fields, else `431 Request Header Fields Too Large` and the connection is closed.
//! - A request head must arrive whole within [`HEADER_TIMEOUT`] of the moment the server
//!   starts waiting for it — on a new connection and between requests on a kept-alive one —
//!   so slow (slowloris) and idle connections are closed after it.
//! - At most [`MAX_CONNECTIONS`] connections are open; a new one beyond that closes the
//!   oldest open one (a client that never reads its responses, or that keeps a slot
//!   otherwise, is the oldest soon enough), so an attacker holding connections cannot lock
//!   scrapers out. One request is answered at a time per connection: a pipelining client
//!   that never reads holds one response and its connection, nothing more.
//! - Encoding: at most once per [`ENCODED_MAX_AGE`] per format; the requests in between get
//!   the same bytes (so a response may be up to 100 ms old — windows are 1 s). Without this
//!   a client pipelining thousands of `GET /metrics` kept the one thread encoding for
//!   seconds in a debug build, and other scrapes waited.
//! - Stopping: [`Server::stop`] wakes the runtime at once (a `tokio::sync::Notify`, no
//!   polling), which is dropped with every connection, whatever the clients are doing.
//!
//! # Idle cost
//!
//! While nobody scrapes, the thread sleeps in `epoll_wait` with no timeout: no timer is
//! armed (hyper's header timeout runs only while a connection waits for a request head), so
//! the thread does not wake between scrapes. It used to look at a stop flag every 50 ms,
//! which cost about 110 user-space instructions per wake-up of a 1 ms `monitor`
//! (callgrind, `bench/lightness.sh`) — more than the measuring thread's own work.
//!
//! # Memory budget
//!
//! The thread's stack is [`STACK_BYTES`]. Per connection: hyper's read buffer (at most
//! [`MAX_BUF_BYTES`]), its header-serialising write buffer (under 1 KiB), at most one encoded
//! response not yet taken by the kernel (the exposition, E ≈ 2 KiB + 5 KiB per measuring
//! thread: 6.8 KiB for one) and the task (under 2 KiB). So at most [`MAX_CONNECTIONS`] ×
//! (19 KiB + E): 1.6 MiB for one measuring thread, 2.6 MiB for four, plus the runtime's
//! fixed part (tens of KiB). Under `mlockall` all of it is locked; a connection's memory is
//! freed when it closes (glibc may keep the pages for the next ones). The kernel's socket
//! buffers are not process memory and are not locked.

use http_body_util::Full;
use hyper::body::{Body, Bytes, Incoming};
use hyper::header::{HeaderValue, ACCEPT, ALLOW, CONNECTION, CONTENT_TYPE as CT};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use socket2::{Domain, Protocol, Socket, Type};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tickscope_report::sink::prometheus::{openmetrics, Exposition, CONTENT_TYPE};
use tokio::sync::Notify;
use tokio::task::{AbortHandle, JoinSet};

/// The default address: loopback only (another address is an explicit choice).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9802";

/// Connections open at once; a new one beyond closes the oldest.
pub const MAX_CONNECTIONS: usize = 64;

/// Largest request line plus headers, bytes (nginx's default for one header line is 8 KiB).
pub const MAX_HEADER_BYTES: usize = 8 * 1024;

/// Most header fields in one request (Prometheus sends 5).
pub const MAX_HEADERS: usize = 32;

/// Hyper's per-connection buffer limit, bytes.
pub const MAX_BUF_BYTES: usize = 16 * 1024;

/// How long a request head may take to arrive, from the moment the server waits for it.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// Connections the kernel completes and queues before the server accepts them (listen(2)'s
/// backlog, capped by `net.core.somaxconn`); std's 128 overflowed under bursts of connects,
/// and a client whose SYN is dropped retries only after 1 s (RFC 6298's initial RTO).
pub const BACKLOG: i32 = 1024;

/// How long an encoded exposition is served again before it is encoded anew: however many
/// requests arrive (pipelined, or on many connections), the metrics are encoded at most
/// ten times a second per format.
pub const ENCODED_MAX_AGE: Duration = Duration::from_millis(100);

/// The server thread's stack, bytes.
pub const STACK_BYTES: usize = 256 * 1024;

/// Binds `addr` now (so that a port in use fails before measuring).
///
/// # Errors
/// One sentence with the address and the OS error.
pub fn bind(addr: SocketAddr) -> Result<TcpListener, String> {
    let fail = |e: std::io::Error| format!("--listen {addr}: cannot listen: {e}");
    let socket =
        Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP)).map_err(fail)?;
    // As std's TcpListener::bind does: a restarted monitor gets its port back at once.
    socket.set_reuse_address(true).map_err(fail)?;
    socket.bind(&addr.into()).map_err(fail)?;
    socket.listen(BACKLOG).map_err(fail)?;
    socket.set_nonblocking(true).map_err(fail)?;
    Ok(socket.into())
}

/// The running server: [`Server::stop`] ends it.
pub struct Server {
    thread: JoinHandle<()>,
    stop: Arc<Notify>,
}

impl Server {
    /// Stops serving (open connections are dropped) and waits for the thread to end.
    pub fn stop(self) {
        // A permit is stored if the runtime is not waiting yet: the wake-up is not lost.
        self.stop.notify_one();
        let _ = self.thread.join();
    }
}

/// Serves `expo` on `listener` until [`Server::stop`], on a thread named `tickscope-http`
/// that first pins itself to `cpus` when given (see the module docs for the limits).
///
/// # Errors
/// The OS error when the thread cannot be started.
pub fn serve(
    listener: TcpListener,
    expo: Exposition,
    cpus: Option<Vec<usize>>,
) -> std::io::Result<Server> {
    let stop = Arc::new(Notify::new());
    let stopped = Arc::clone(&stop);
    let thread = std::thread::Builder::new()
        .name("tickscope-http".into())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            if let Some(c) = &cpus {
                if let Err(e) = tickscope_session::housekeeping::pin_current(c) {
                    eprintln!("tickscope: cannot pin the HTTP thread: {e}");
                }
            }
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .enable_time()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("tickscope: cannot start the HTTP server: {e}");
                    return;
                }
            };
            runtime.block_on(async move {
                let listener = match tokio::net::TcpListener::from_std(listener) {
                    Ok(l) => l,
                    Err(e) => {
                        eprintln!("tickscope: cannot start the HTTP server: {e}");
                        return;
                    }
                };
                tokio::select! {
                    () = accept_loop(listener, expo) => {}
                    () = stopped.notified() => {}
                }
            });
            // Dropping the runtime drops every connection at once.
        })?;
    Ok(Server { thread, stop })
}

/// Accepts connections for ever, each served by a task of its own.
async fn accept_loop(listener: tokio::net::TcpListener, expo: Exposition) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .max_header_size(MAX_HEADER_BYTES)
        .max_headers(MAX_HEADERS)
        .max_buf_size(MAX_BUF_BYTES);
    let encoded = Arc::new(Encoded {
        expo,
        text: Mutex::new(None),
        openmetrics: Mutex::new(None),
    });
    let mut tasks = JoinSet::new();
    let mut open: VecDeque<AbortHandle> = VecDeque::new();
    let mut last_error = None;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors (EMFILE, ENFILE) or memory: say it once, wait for
                // connections to close rather than spin.
                let text = e.to_string();
                if last_error.as_ref() != Some(&text) {
                    eprintln!("tickscope: the HTTP server cannot accept a connection: {text}");
                    last_error = Some(text);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        while tasks.try_join_next().is_some() {}
        open.retain(|h| !h.is_finished());
        if open.len() >= MAX_CONNECTIONS {
            if let Some(oldest) = open.pop_front() {
                oldest.abort();
            }
        }
        let _ = stream.set_nodelay(true);
        let encoded = Arc::clone(&encoded);
        let service = hyper::service::service_fn(move |req| {
            let response = respond(&req, &encoded);
            async move { Ok::<_, Infallible>(response) }
        });
        let connection = http.serve_connection(TokioIo::new(stream), service);
        open.push_back(tasks.spawn(async move {
            // Errors are the client's (a bad request, a timeout, a reset): nothing to do.
            let _ = connection.await;
        }));
        // Let the new connection read its request (a scraper sends it at once) and the one
        // closed for it go, before the next connection of a burst is accepted: otherwise a
        // burst closes connections that were never served and holds closed ones open.
        tokio::task::yield_now().await;
    }
}

/// The exposition in both formats, each encoded at most once per [`ENCODED_MAX_AGE`].
struct Encoded {
    expo: Exposition,
    text: Mutex<Option<(Instant, Bytes)>>,
    openmetrics: Mutex<Option<(Instant, Bytes)>>,
}

impl Encoded {
    /// The Prometheus text format, or OpenMetrics when `om`.
    fn get(&self, om: bool) -> Bytes {
        let slot = if om { &self.openmetrics } else { &self.text };
        // One thread uses it: the lock is never contended, and a panic cannot poison it
        // between a check and an update.
        let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        match &*slot {
            Some((at, bytes)) if now.duration_since(*at) < ENCODED_MAX_AGE => bytes.clone(),
            _ => {
                let bytes = match om {
                    true => Bytes::from(self.expo.encode_openmetrics()),
                    false => Bytes::from(self.expo.encode()),
                };
                *slot = Some((now, bytes.clone()));
                bytes
            }
        }
    }
}

/// The answer to `req`.
fn respond(req: &Request<Incoming>, encoded: &Encoded) -> Response<Full<Bytes>> {
    let (status, content_type, body) = match (req.method(), req.uri().path()) {
        (&Method::GET, "/metrics") => {
            let om = req
                .headers()
                .get_all(ACCEPT)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .any(openmetrics::accepts);
            let content_type = if om {
                openmetrics::CONTENT_TYPE
            } else {
                CONTENT_TYPE
            };
            (StatusCode::OK, content_type, encoded.get(om))
        }
        (&Method::GET, "/healthz") => (StatusCode::OK, "text/plain", Bytes::from_static(b"ok\n")),
        (&Method::GET, _) => (
            StatusCode::NOT_FOUND,
            "text/plain",
            Bytes::from_static(b"not found\n"),
        ),
        _ => (
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            Bytes::from_static(b"method not allowed\n"),
        ),
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CT, HeaderValue::from_static(content_type));
    if status == StatusCode::METHOD_NOT_ALLOWED {
        headers.insert(ALLOW, HeaderValue::from_static("GET"));
    }
    // No route reads a body: one that was sent is not read, so the connection cannot carry
    // another request (hyper closes its read side after at most one read of the body).
    if !req.body().is_end_stream() {
        headers.insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}
