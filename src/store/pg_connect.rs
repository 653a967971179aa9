//! How nudge opens a PostgreSQL connection: every host of a libpq multi-host URL in
//! turn (`postgres://u@h1:5432,h2:5432/nudge?target_session_attrs=read-write`), so after a
//! failover each new connection finds the new primary by itself; TCP keepalives and
//! `TCP_USER_TIMEOUT` on the socket, so a peer that vanished is noticed; a statement timeout on
//! the server; and an answer deadline on the socket ([`Deadman`]), so a link that stalls — the
//! bytes go out, nothing comes back — fails the query instead of hanging it.
//!
//! The pool, the planner's `LISTEN` connection and migrations all open connections here.

use diesel::ConnectionError;
use diesel_async::AsyncPgConnection;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};
use tokio_postgres::config::{Host, TargetSessionAttrs};

/// The timeouts of a PostgreSQL connection (`docs/operations.md`, "Timeouts").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgTimeouts {
    /// Each host's TCP connect and startup within this (5 s), then the next host is tried.
    pub connect: Duration,
    /// `statement_timeout` on the server (15 s): no statement of nudge's takes that long.
    pub statement: Duration,
    /// No byte back for this long after a request went out (20 s: the statement timeout and
    /// a margin): the connection is given up. A stalled link fails its query here.
    pub answer: Duration,
    /// TCP keepalive: the first probe after this much silence (10 s), …
    pub keepalive_idle: Duration,
    /// … then one every this (5 s), …
    pub keepalive_interval: Duration,
    /// … and the connection is dropped after this many unanswered (3).
    pub keepalive_retries: u32,
    /// Sent data unacknowledged for this long drops the connection (`TCP_USER_TIMEOUT`, 20 s).
    pub tcp_user_timeout: Duration,
}

impl PgTimeouts {
    /// For migrations: no statement timeout and an hour's answer deadline (an index built on a
    /// large table answers only when it is done).
    pub fn for_migrations() -> PgTimeouts {
        PgTimeouts {
            statement: Duration::ZERO,
            answer: Duration::from_secs(3600),
            ..PgTimeouts::default()
        }
    }
}

impl Default for PgTimeouts {
    fn default() -> Self {
        PgTimeouts {
            connect: Duration::from_secs(5),
            statement: Duration::from_secs(15),
            answer: Duration::from_secs(20),
            keepalive_idle: Duration::from_secs(10),
            keepalive_interval: Duration::from_secs(5),
            keepalive_retries: 3,
            tcp_user_timeout: Duration::from_secs(20),
        }
    }
}

/// What the server sends on its own: a `NOTIFY`, or the end of the connection (`Err`).
pub type Notices =
    tokio::sync::mpsc::UnboundedReceiver<Result<tokio_postgres::Notification, String>>;

/// Opens a connection (for the pool and migrations) to the first host of `url` that answers
/// (and, with `target_session_attrs=read-write`, takes writes), with `timeouts` applied and
/// the session settings nudge relies on.
pub async fn connect(
    url: &str,
    timeouts: &PgTimeouts,
) -> Result<AsyncPgConnection, ConnectionError> {
    let (client, _) = connect_client(url, timeouts).await?;
    AsyncPgConnection::try_from(client).await
}

/// [`connect`] as a plain client with its notifications (the planner's `LISTEN`): the
/// receiver ends when the connection does.
pub async fn connect_client(
    url: &str,
    timeouts: &PgTimeouts,
) -> Result<(tokio_postgres::Client, Notices), ConnectionError> {
    let config: tokio_postgres::Config = url
        .parse()
        .map_err(|e: tokio_postgres::Error| ConnectionError::InvalidConnectionUrl(e.to_string()))?;
    let hosts = config.get_hosts();
    let ports = config.get_ports();
    if hosts.is_empty() {
        return Err(ConnectionError::InvalidConnectionUrl(
            "the PostgreSQL URL names no host".into(),
        ));
    }
    let mut errors = Vec::new();
    for (i, host) in hosts.iter().enumerate() {
        let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
        let shown = match host {
            Host::Tcp(name) => format!("{name}:{port}"),
            Host::Unix(path) => format!("{}:{port}", path.display()),
        };
        match tokio::time::timeout(timeouts.connect, connect_one(&config, host, port, timeouts))
            .await
        {
            Ok(Ok(Some(connected))) => return Ok(connected),
            Ok(Ok(None)) => errors.push(format!("{shown}: read-only (a standby)")),
            Ok(Err(e)) => errors.push(format!("{shown}: {e}")),
            Err(_) => errors.push(format!("{shown}: no answer within {:?}", timeouts.connect)),
        }
    }
    Err(ConnectionError::BadConnection(format!(
        "no host took the connection: {}",
        errors.join("; ")
    )))
}

/// One host: `None` when it is read-only and the URL asks for a read-write session.
async fn connect_one(
    config: &tokio_postgres::Config,
    host: &Host,
    port: u16,
    timeouts: &PgTimeouts,
) -> Result<Option<(tokio_postgres::Client, Notices)>, Box<dyn std::error::Error + Send + Sync>> {
    let stream = match host {
        Host::Tcp(name) => {
            let tcp = tokio::net::TcpStream::connect((name.as_str(), port)).await?;
            tcp.set_nodelay(true)?;
            let socket = socket2::SockRef::from(&tcp);
            let keepalive = socket2::TcpKeepalive::new()
                .with_time(timeouts.keepalive_idle)
                .with_interval(timeouts.keepalive_interval);
            #[cfg(any(target_os = "linux", target_os = "macos"))]
            let keepalive = keepalive.with_retries(timeouts.keepalive_retries);
            socket.set_tcp_keepalive(&keepalive)?;
            #[cfg(target_os = "linux")]
            socket.set_tcp_user_timeout(Some(timeouts.tcp_user_timeout))?;
            PgStream::Tcp(tcp)
        }
        #[cfg(unix)]
        Host::Unix(dir) => {
            let path = dir.join(format!(".s.PGSQL.{port}"));
            PgStream::Unix(tokio::net::UnixStream::connect(path).await?)
        }
        #[cfg(not(unix))]
        Host::Unix(_) => return Err("Unix sockets are not supported here".into()),
    };
    let stream = Deadman::new(stream, timeouts.answer);
    let (client, mut connection) = config.connect_raw(stream, tokio_postgres::NoTls).await?;
    let (tx, notices) = tokio::sync::mpsc::unbounded_channel();
    // Drives the connection until every client handle is gone or it fails; forwards NOTIFY.
    tokio::spawn(async move {
        use futures_util::StreamExt;
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(tokio_postgres::AsyncMessage::Notification(n)) => {
                    let _ = tx.send(Ok(n));
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::debug!(error = %e, "PostgreSQL connection ended");
                    let _ = tx.send(Err(e.to_string()));
                    return;
                }
            }
        }
    });
    if config.get_target_session_attrs() == TargetSessionAttrs::ReadWrite {
        let rows = client.simple_query("SHOW transaction_read_only").await?;
        let read_only = rows.iter().any(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0) == Some("on"),
            _ => false,
        });
        if read_only {
            return Ok(None);
        }
    }
    client
        .batch_execute(&format!(
            // Every statement planned for its own parameters (see `store::open_postgres`), a
            // server-side bound on each, and on a transaction left open by a client that went.
            "SET plan_cache_mode = force_custom_plan; SET statement_timeout = {}; \
             SET idle_in_transaction_session_timeout = {}",
            timeouts.statement.as_millis(),
            (timeouts.answer * 3).as_millis()
        ))
        .await?;
    Ok(Some((client, notices)))
}

/// A TCP or Unix socket to PostgreSQL.
enum PgStream {
    Tcp(tokio::net::TcpStream),
    #[cfg(unix)]
    Unix(tokio::net::UnixStream),
}

impl AsyncRead for PgStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            PgStream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            #[cfg(unix)]
            PgStream::Unix(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for PgStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            PgStream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            #[cfg(unix)]
            PgStream::Unix(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            PgStream::Tcp(s) => Pin::new(s).poll_flush(cx),
            #[cfg(unix)]
            PgStream::Unix(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            PgStream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            #[cfg(unix)]
            PgStream::Unix(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

/// A stream that fails a read when a request went out and no answer came back within
/// `answer`: the server answers every request with `ReadyForQuery` (`Z`) last, so the stream
/// frames what it reads (a type byte and a length) and is waiting from a write until the next
/// `Z`. An idle connection (a pooled one, the `LISTEN` one) waits for nothing and never times
/// out; a stalled link fails its query after `answer`, and the connection with it.
pub struct Deadman<S> {
    inner: S,
    answer: Duration,
    /// Armed from a write until the `Z` after it.
    waiting: bool,
    timer: Pin<Box<Sleep>>,
    frame: Frames,
}

impl<S> Deadman<S> {
    pub fn new(inner: S, answer: Duration) -> Deadman<S> {
        Deadman {
            inner,
            answer,
            waiting: false,
            timer: Box::pin(tokio::time::sleep(answer)),
            frame: Frames::default(),
        }
    }
}

/// Where the reader is in the server's message stream.
#[derive(Debug, Default)]
struct Frames {
    /// The bytes of the current header read so far (type and 4-byte length).
    header: [u8; 5],
    have: usize,
    /// Body bytes still to skip.
    body: usize,
    /// The message being read is a `ReadyForQuery`.
    z: bool,
}

impl Frames {
    /// Feeds read bytes; true when a `ReadyForQuery` ended in them.
    fn feed(&mut self, mut bytes: &[u8]) -> bool {
        let mut ready = false;
        while !bytes.is_empty() {
            if self.body > 0 {
                let n = self.body.min(bytes.len());
                self.body -= n;
                bytes = &bytes[n..];
                if self.body == 0 && self.z {
                    ready = true;
                }
                continue;
            }
            let n = (5 - self.have).min(bytes.len());
            self.header[self.have..self.have + n].copy_from_slice(&bytes[..n]);
            self.have += n;
            bytes = &bytes[n..];
            if self.have == 5 {
                let len = u32::from_be_bytes([
                    self.header[1],
                    self.header[2],
                    self.header[3],
                    self.header[4],
                ]) as usize;
                self.body = len.saturating_sub(4);
                self.have = 0;
                self.z = self.header[0] == b'Z';
                if self.body == 0 && self.z {
                    ready = true;
                }
            }
        }
        ready
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Deadman<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let read = &buf.filled()[before..];
                if !read.is_empty() {
                    if this.frame.feed(read) {
                        this.waiting = false;
                    } else if this.waiting {
                        // Progress: the answer is coming; the deadline starts again.
                        this.timer.as_mut().reset(Instant::now() + this.answer);
                    }
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => {
                if this.waiting && this.timer.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "no answer from PostgreSQL within {:?}: the link stalled; the \
                             connection is given up",
                            this.answer
                        ),
                    )));
                }
                Poll::Pending
            }
            other => other,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Deadman<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &r {
            if *n > 0 && !this.waiting {
                this.waiting = true;
                this.timer.as_mut().reset(Instant::now() + this.answer);
            }
        }
        r
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![kind];
        m.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    #[test]
    fn frames_find_ready_for_query_across_reads() {
        let mut stream = message(b'C', b"SELECT 1\0");
        stream.extend(message(b'Z', b"I"));
        for cut in 0..stream.len() {
            let mut f = Frames::default();
            let first = f.feed(&stream[..cut]);
            let second = f.feed(&stream[cut..]);
            assert!(!first, "cut at {cut}");
            assert!(second, "cut at {cut}");
        }
        // A `Z` inside a body is not a message.
        let mut f = Frames::default();
        assert!(!f.feed(&message(b'D', b"Z\0\0\0\x05I")));
    }

    /// A request with no answer fails after the deadline; an answered one does not, and an idle
    /// stream never does.
    #[tokio::test(start_paused = true)]
    async fn a_request_without_an_answer_times_out() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (client, mut server) = tokio::io::duplex(1024);
        let mut d = Deadman::new(client, Duration::from_secs(20));
        // Idle: nothing written, nothing times out.
        let idle = tokio::time::timeout(Duration::from_secs(60), d.read(&mut [0u8; 16])).await;
        assert!(idle.is_err(), "an idle read stays pending");
        d.write_all(b"Q").await.unwrap();
        server.write_all(&message(b'Z', b"I")).await.unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(d.read(&mut buf).await.unwrap(), 6);
        let idle = tokio::time::timeout(Duration::from_secs(60), d.read(&mut buf)).await;
        assert!(idle.is_err(), "answered: waiting for nothing");
        d.write_all(b"Q").await.unwrap();
        let e = d.read(&mut buf).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        let _ = server.read(&mut buf).await;
    }
}
