//! `nudge healthcheck`: `GET /healthz` on a local server, exit 0 on `200`. Slim container
//! images have no curl; the binary checks itself.

use crate::config::DEFAULT_LISTEN;
use anyhow::{bail, Context};
use clap::Args;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[derive(Debug, Args)]
pub struct HealthcheckArgs {
    /// The server's address. Default: the `NUDGE_LISTEN` the server would use (an unspecified
    /// IP such as `0.0.0.0` becomes loopback), else `127.0.0.1:7600`.
    #[arg(long)]
    pub addr: Option<SocketAddr>,
}

impl HealthcheckArgs {
    fn target(&self) -> anyhow::Result<SocketAddr> {
        if let Some(addr) = self.addr {
            return Ok(addr);
        }
        let listen = std::env::var("NUDGE_LISTEN").unwrap_or_else(|_| DEFAULT_LISTEN.to_string());
        let mut addr: SocketAddr = listen
            .parse()
            .with_context(|| format!("NUDGE_LISTEN `{listen}` is not an address"))?;
        if addr.ip().is_unspecified() {
            addr.set_ip(match addr {
                SocketAddr::V4(_) => Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => Ipv6Addr::LOCALHOST.into(),
            });
        }
        Ok(addr)
    }
}

/// How long the whole check may take before it counts as a failure.
const TIMEOUT: Duration = Duration::from_secs(3);

pub async fn run(args: HealthcheckArgs) -> anyhow::Result<()> {
    let status = tokio::time::timeout(TIMEOUT, get_status(args.target()?))
        .await
        .context("no answer within 3 s")??;
    if status != 200 {
        bail!("GET /healthz answered {status}");
    }
    println!("ok");
    Ok(())
}

/// A minimal HTTP/1.0 GET: enough for a liveness probe, no client library needed.
async fn get_status(addr: SocketAddr) -> anyhow::Result<u16> {
    let mut stream = TcpStream::connect(addr)
        .await
        .with_context(|| format!("connecting to {addr}"))?;
    stream
        .write_all(format!("GET /healthz HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await?;
    let head = String::from_utf8_lossy(&response);
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .context("not an HTTP response")?;
    Ok(status)
}
