//! The metrics server of `tickscope monitor`: `GET /metrics` (the Prometheus text format,
//! encoded by the `prometheus` crate; OpenMetrics, encoded by `prometheus-client`, when the
//! request's `Accept` header asks for `application/openmetrics-text`, as Prometheus does)
//! and `GET /healthz`, over `tiny_http`. The thread only
//! encodes; the sink on the collector thread updates the metrics.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use tickscope_report::sink::prometheus::{openmetrics, Exposition, CONTENT_TYPE};
use tiny_http::{Header, Response, Server};

/// The default address: loopback only (another address is an explicit choice).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9802";

/// Binds `addr` now (so that a port in use fails before measuring).
///
/// # Errors
/// One sentence with the address and the OS error.
pub fn bind(addr: SocketAddr) -> Result<Server, String> {
    Server::http(addr).map_err(|e| format!("--listen {addr}: cannot listen: {e}"))
}

/// Serves `expo` on `server` until `done` is set, on a thread named `tickscope-http`,
/// pinned to `cpus` when given.
///
/// # Errors
/// The OS error when the thread cannot be started.
pub fn serve(
    server: Server,
    expo: Exposition,
    done: Arc<AtomicBool>,
    cpus: Option<Vec<usize>>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("tickscope-http".into())
        .spawn(move || {
            if let Some(c) = &cpus {
                if let Err(e) = crate::housekeeping::pin_current(c) {
                    eprintln!("tickscope: cannot pin the HTTP thread: {e}");
                }
            }
            while !done.load(Ordering::Relaxed) {
                match server.recv_timeout(Duration::from_millis(200)) {
                    Ok(Some(req)) => respond(req, &expo),
                    Ok(None) => {}
                    Err(_) => std::thread::sleep(Duration::from_millis(50)),
                }
            }
        })
}

fn respond(req: tiny_http::Request, expo: &Exposition) {
    let header = |v: &str| Header::from_bytes("Content-Type", v).expect("valid header");
    let response = match (req.method(), req.url().split('?').next().unwrap_or("")) {
        (tiny_http::Method::Get, "/metrics") => {
            let accept = req
                .headers()
                .iter()
                .filter(|h| h.field.equiv("Accept"))
                .any(|h| openmetrics::accepts(h.value.as_str()));
            match accept {
                true => Response::from_data(expo.encode_openmetrics().into_bytes())
                    .with_header(header(openmetrics::CONTENT_TYPE)),
                false => Response::from_data(expo.encode()).with_header(header(CONTENT_TYPE)),
            }
        }
        (tiny_http::Method::Get, "/healthz") => {
            Response::from_data(b"ok\n".to_vec()).with_header(header("text/plain"))
        }
        (tiny_http::Method::Get, _) => Response::from_data(b"not found\n".to_vec())
            .with_status_code(404)
            .with_header(header("text/plain")),
        _ => Response::from_data(b"method not allowed\n".to_vec())
            .with_status_code(405)
            .with_header(header("text/plain")),
    };
    let _ = req.respond(response);
}
