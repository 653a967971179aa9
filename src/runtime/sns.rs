//! Amazon SNS, the one peer a webhook makes nudge call: the certificate a message
//! names in `SigningCertURL`, and a subscription's `SubscribeURL`. Both URLs are checked before
//! they reach here ([`crate::inbound::providers::ses::check_sns_url`]: https on
//! `sns.<region>.amazonaws.com`); here they are fetched without redirects or proxies, within a
//! timeout and a size cap, and certificates are cached, so a burst of notifications fetches
//! each certificate once.
//!
//! Tests swap the network for [`PinnedSns`]: their own certificates by URL, and a record of the
//! subscriptions confirmed.

use crate::inbound::providers::ses::MAX_CERT_BYTES;
use futures_util::future::BoxFuture;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a fetched certificate is trusted before it is fetched again.
pub const CERT_TTL: Duration = Duration::from_secs(24 * 3600);
/// Each request to SNS within this.
pub const SNS_TIMEOUT: Duration = Duration::from_secs(5);
/// The most certificates remembered (SNS rotates them rarely; a forger cannot add any, since
/// the URL must be on SNS's own host).
const MAX_CERTS: usize = 64;

/// Fetches SNS certificates and confirms subscriptions.
pub trait SnsPeer: Send + Sync + 'static {
    /// The certificate (PEM) at `url`, already checked to be SNS's.
    fn certificate<'a>(&'a self, url: &'a url::Url) -> BoxFuture<'a, Result<Vec<u8>, String>>;
    /// Visits `SubscribeURL`, which confirms the subscription.
    fn confirm<'a>(&'a self, url: &'a url::Url) -> BoxFuture<'a, Result<(), String>>;
}

/// Shared handle on the SNS peer.
pub type SharedSns = Arc<dyn SnsPeer>;

/// Certificates by URL, with when each was fetched.
type CertCache = Mutex<HashMap<String, (Instant, Arc<Vec<u8>>)>>;

/// The real SNS over HTTPS, with a certificate cache.
pub struct HttpSns {
    client: reqwest::Client,
    certs: CertCache,
}

impl HttpSns {
    /// A client with no redirects, no proxy and [`SNS_TIMEOUT`].
    pub fn new() -> HttpSns {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .https_only(true)
            .timeout(SNS_TIMEOUT)
            .connect_timeout(SNS_TIMEOUT)
            .user_agent(concat!("nudge/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("a TLS client builds");
        HttpSns {
            client,
            certs: Mutex::new(HashMap::new()),
        }
    }

    async fn get(&self, url: &url::Url, limit: usize) -> Result<Vec<u8>, String> {
        let mut response = self
            .client
            .get(url.clone())
            .send()
            .await
            .map_err(|e| format!("fetching {url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("{url} answered {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| format!("reading {url}: {e}"))?
        {
            if body.len() + chunk.len() > limit {
                return Err(format!("{url} sent more than {limit} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

impl Default for HttpSns {
    fn default() -> Self {
        HttpSns::new()
    }
}

impl SnsPeer for HttpSns {
    fn certificate<'a>(&'a self, url: &'a url::Url) -> BoxFuture<'a, Result<Vec<u8>, String>> {
        Box::pin(async move {
            let key = url.as_str().to_string();
            if let Some((at, cert)) = self.certs.lock().expect("cert cache").get(&key) {
                if at.elapsed() < CERT_TTL {
                    return Ok(cert.as_ref().clone());
                }
            }
            let cert = self.get(url, MAX_CERT_BYTES).await?;
            let mut certs = self.certs.lock().expect("cert cache");
            if certs.len() >= MAX_CERTS {
                certs.clear();
            }
            certs.insert(key, (Instant::now(), Arc::new(cert.clone())));
            Ok(cert)
        })
    }

    fn confirm<'a>(&'a self, url: &'a url::Url) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move { self.get(url, 64 * 1024).await.map(|_| ()) })
    }
}

/// SNS for tests: certificates by URL, and the `SubscribeURL`s visited.
#[derive(Default)]
pub struct PinnedSns {
    /// URL → PEM.
    pub certs: HashMap<String, Vec<u8>>,
    /// Every URL [`SnsPeer::confirm`] visited, in order.
    pub confirmed: Mutex<Vec<String>>,
}

impl SnsPeer for PinnedSns {
    fn certificate<'a>(&'a self, url: &'a url::Url) -> BoxFuture<'a, Result<Vec<u8>, String>> {
        Box::pin(async move {
            self.certs
                .get(url.as_str())
                .cloned()
                .ok_or_else(|| format!("no certificate at {url}"))
        })
    }

    fn confirm<'a>(&'a self, url: &'a url::Url) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            self.confirmed
                .lock()
                .expect("confirmed")
                .push(url.to_string());
            Ok(())
        })
    }
}
