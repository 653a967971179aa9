//! `nudge healthcheck`: `GET /healthz` on a local server, exit 0 on `200`. Slim container
//! images have no curl; the binary checks itself.

use anyhow::{bail, Context};
use clap::Args;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[derive(Debug, Args)]
pub struct HealthcheckArgs {
    /// The server's address.
    #[arg(long, env = "NUDGE_HEALTHCHECK_ADDR", default_value = "127.0.0.1:7600")]
    pub addr: SocketAddr,
}

/// How long the whole check may take before it counts as a failure.
const TIMEOUT: Duration = Duration::from_secs(3);

pub async fn run(args: HealthcheckArgs) -> anyhow::Result<()> {
    let status = tokio::time::timeout(TIMEOUT, get_status(args.addr))
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
