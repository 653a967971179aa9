//! The accept loop: gRPC and HTTP on one port, each connection under [`ConnLimits`] (docs/service.md, "Errors").
//!
//! - A request whose content type is `application/grpc…` goes to the gRPC routes (an unknown
//!   service answers `UNIMPLEMENTED`); every other request to the HTTP routes, where an unknown
//!   path is a plain 404.
//! - A connection must send its first bytes within the header timeout, and hyper holds each
//!   HTTP/1 request's headers to it. A request body has the body timeout from its headers
//!   ([`BodyTimeout`]: 408, connection closed). A connection with no request in flight for the
//!   idle timeout is closed; HTTP/2 connections are pinged and closed when a ping goes
//!   unanswered, with at most `max_concurrent_streams` calls each.
//! - At `max_connections` a new connection takes the place of the oldest one with no request in
//!   flight (which is shut down gracefully), so a flood of idle connections cannot keep a real
//!   client out; when every connection is busy the new one is closed at once rather than queued.
//! - Shutdown stops accepting, shuts every connection down gracefully and waits for the
//!   requests in flight.

use crate::config::ConnLimits;
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue, Request, StatusCode, Version};
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};
use tokio::task::JoinSet;
use tokio::time::{Instant, Sleep};
use tower::ServiceExt;

/// How long a connection told to close (evicted at the cap, or idle) may take to do so
/// gracefully before it is dropped, once it has no request in flight.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// The two sides of the port.
#[derive(Clone)]
pub struct Routes {
    pub grpc: axum::Router,
    pub http: axum::Router,
}

impl Routes {
    /// The side a request belongs to: gRPC by its content type, else HTTP.
    fn pick<B>(&self, request: &Request<B>) -> &axum::Router {
        let grpc = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/grpc"));
        if grpc {
            &self.grpc
        } else {
            &self.http
        }
    }
}

/// Serves `routes` on `listener` until `shutdown` completes, then finishes the requests in
/// flight.
pub async fn serve(
    listener: TcpListener,
    routes: Routes,
    limits: ConnLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(limits.keepalive_interval)
        .keep_alive_timeout(limits.keepalive_timeout)
        .max_concurrent_streams(limits.max_concurrent_streams);
    let builder = Arc::new(builder);
    let registry = Registry::default();
    let (stop_tx, stop) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            Some(_) = connections.join_next() => continue,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait for connections to close.
                    tracing::warn!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Some(conn) = registry.admit(limits.max_connections) else {
            tracing::warn!(%peer, max_connections = limits.max_connections,
                "at the connection cap with every connection busy: closing a new one");
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        connections.spawn(serve_connection(
            stream,
            conn,
            builder.clone(),
            routes.clone(),
            limits,
            stop.clone(),
        ));
    }
    drop(listener);
    let _ = stop_tx.send(true);
    while connections.join_next().await.is_some() {}
    Ok(())
}

/// One connection: served by hyper until it ends, is told to close, or idles out.
async fn serve_connection(
    stream: TcpStream,
    conn: Arc<Conn>,
    builder: Arc<auto::Builder<TokioExecutor>>,
    routes: Routes,
    limits: ConnLimits,
    mut stop: watch::Receiver<bool>,
) {
    let _registered = Registered(conn.clone());
    // The first bytes within the header timeout: a connection that says nothing is not kept
    // (nor one evicted meanwhile, nor any at shutdown).
    let mut first = [0u8; 1];
    tokio::select! {
        peeked = tokio::time::timeout(limits.header_timeout, stream.peek(&mut first)) => {
            if !matches!(peeked, Ok(Ok(n)) if n > 0) {
                return;
            }
        }
        () = conn.evict.notified() => return,
        _ = stop.wait_for(|stop| *stop) => return,
    }
    let service = {
        let conn = conn.clone();
        hyper::service::service_fn(move |request: Request<Incoming>| {
            let in_flight = InFlight::begin(&conn);
            let http1 = request.version() < Version::HTTP_2;
            let request =
                request.map(|body| Body::new(Deadline::new(Body::new(body), limits.body_timeout)));
            let router = routes.pick(&request).clone();
            async move {
                let Ok(mut response) = router.oneshot(request).await;
                if http1 && response.status() == StatusCode::REQUEST_TIMEOUT {
                    // The rest of a body that came too slowly is not worth waiting for.
                    response
                        .headers_mut()
                        .insert(header::CONNECTION, HeaderValue::from_static("close"));
                }
                Ok::<_, Infallible>(response.map(|body| Body::new(Tracked { body, in_flight })))
            }
        })
    };
    let served = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(served);
    let mut closing = false;
    let idle = tokio::time::sleep(limits.idle_timeout);
    tokio::pin!(idle);
    loop {
        tokio::select! {
            _ = served.as_mut() => return,
            () = conn.evict.notified(), if !closing => {
                served.as_mut().graceful_shutdown();
                closing = true;
                idle.as_mut().reset(Instant::now() + CLOSE_GRACE);
            }
            _ = stop.wait_for(|stop| *stop), if !closing => {
                // Server shutdown: requests in flight finish, however long that takes.
                served.as_mut().graceful_shutdown();
                closing = true;
                idle.as_mut().reset(Instant::now() + Duration::from_secs(365 * 24 * 3600));
            }
            () = idle.as_mut() => {
                let quiet = conn.quiet_since();
                if conn.in_flight.load(Ordering::SeqCst) > 0 {
                    idle.as_mut().reset(Instant::now() + limits.idle_timeout);
                } else if closing {
                    // Told to close and given the grace: go.
                    return;
                } else if quiet + limits.idle_timeout <= Instant::now() {
                    served.as_mut().graceful_shutdown();
                    closing = true;
                    idle.as_mut().reset(Instant::now() + CLOSE_GRACE);
                } else {
                    idle.as_mut().reset(quiet + limits.idle_timeout);
                }
            }
        }
    }
}

/// The open connections, oldest first, for the cap and eviction.
#[derive(Default, Clone)]
struct Registry(Arc<Mutex<RegistryInner>>);

#[derive(Default)]
struct RegistryInner {
    next_id: u64,
    open: BTreeMap<u64, Arc<Conn>>,
}

/// What the accept loop and a connection's task share about it.
struct Conn {
    id: u64,
    registry: Registry,
    /// Requests whose response has not been sent in full.
    in_flight: AtomicUsize,
    /// When the last request ended (or the connection opened).
    quiet_since: Mutex<Instant>,
    /// Chosen to make room at the cap (so not chosen twice).
    evicted: AtomicBool,
    evict: Notify,
}

impl Conn {
    fn quiet_since(&self) -> Instant {
        *self.quiet_since.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Registry {
    /// Registers a new connection, making room at the cap by evicting the oldest one with no
    /// request in flight; `None` when there is no room to make.
    fn admit(&self, max: usize) -> Option<Arc<Conn>> {
        let mut inner = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // Those being evicted are on their way out and do not count.
        let staying = inner
            .open
            .values()
            .filter(|c| !c.evicted.load(Ordering::SeqCst))
            .count();
        if staying >= max {
            let idle = inner.open.values().find(|c| {
                !c.evicted.load(Ordering::SeqCst) && c.in_flight.load(Ordering::SeqCst) == 0
            })?;
            idle.evicted.store(true, Ordering::SeqCst);
            idle.evict.notify_one();
        }
        let id = inner.next_id;
        inner.next_id += 1;
        let conn = Arc::new(Conn {
            id,
            registry: self.clone(),
            in_flight: AtomicUsize::new(0),
            quiet_since: Mutex::new(Instant::now()),
            evicted: AtomicBool::new(false),
            evict: Notify::new(),
        });
        inner.open.insert(id, conn.clone());
        Some(conn)
    }
}

/// Removes its connection from the registry when the connection's task ends.
struct Registered(Arc<Conn>);

impl Drop for Registered {
    fn drop(&mut self) {
        let mut inner = self.0.registry.0.lock().unwrap_or_else(|e| e.into_inner());
        inner.open.remove(&self.0.id);
    }
}

/// A request in flight on its connection, from its headers until its response's body is done.
struct InFlight(Arc<Conn>);

impl InFlight {
    fn begin(conn: &Arc<Conn>) -> InFlight {
        conn.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(conn.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        *self.0.quiet_since.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A response body that keeps its request [`InFlight`] until it is sent or dropped.
struct Tracked {
    body: Body,
    #[allow(dead_code)] // held for its Drop
    in_flight: InFlight,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A request body that fails with [`BodyTimeout`] when it has not arrived in full by its
/// deadline (a slow sender would otherwise hold its request, and what it sent, for ever).
struct Deadline {
    body: Body,
    deadline: Pin<Box<Sleep>>,
    after: Duration,
}

impl Deadline {
    fn new(body: Body, after: Duration) -> Deadline {
        Deadline {
            body,
            deadline: Box::pin(tokio::time::sleep(after)),
            after,
        }
    }
}

/// The request body did not arrive within the body timeout.
#[derive(Debug, thiserror::Error)]
#[error("the body did not arrive within {0:?}")]
pub struct BodyTimeout(pub Duration);

impl hyper::body::Body for Deadline {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.body).poll_frame(cx) {
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    Poll::Ready(Some(Err(axum::Error::new(BodyTimeout(this.after)))))
                }
                Poll::Pending => Poll::Pending,
            },
            ready => ready,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
