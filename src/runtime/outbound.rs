//! The one outbound HTTP client (docs/flows.md, "fetch"): a `fetch` attempt, sent only where the account's
//! allow list says, with a real-time budget and a capped body.
//!
//! How the address check is enforced, so a second DNS answer cannot differ from the checked
//! one (DNS rebinding): reqwest is given a resolver ([`CheckedResolver`]) that looks the name
//! up once and hands the connector only the addresses that pass — loopback, private,
//! link-local and multicast space are dropped unless the host's entry has `allow_private`. The
//! connector connects to exactly those addresses; there is no other lookup. An IP-literal host
//! never reaches a resolver, so it is checked before sending and at every redirect hop, and
//! each hop's host must be on the list too (at most [`MAX_REDIRECTS`]). Proxies from the
//! environment are off, so nothing is sent anywhere the list did not allow.

use crate::engine::{FetchAnswer, FetchCall};
use crate::flow::allow::{self, AllowList};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// At most this many redirects are followed, each checked like the first URL.
pub const MAX_REDIRECTS: usize = 3;

/// Why a request was refused before anything was sent there; set by the resolver or the
/// redirect policy, read when reqwest reports the error.
type Refusal = Arc<Mutex<Option<String>>>;

/// Sends one attempt of `call` with `Idempotency-Key: key`, allowed by `list`.
pub async fn send(call: &FetchCall, key: &str, list: &AllowList) -> FetchAnswer {
    let started = Instant::now();
    let ms = || started.elapsed().as_millis() as u64;
    let refused = |error: String| FetchAnswer::Error {
        error,
        ms: 0,
        refused: true,
    };
    let url = match reqwest::Url::parse(&call.url) {
        Ok(u) => u,
        Err(e) => return refused(format!("the url does not parse: {e}")),
    };
    if let Err(why) = check_url(&url, list) {
        return refused(why);
    }
    let refusal: Refusal = Arc::default();
    let client = match client(list, &refusal, call.timeout_ms) {
        Ok(c) => c,
        Err(e) => {
            return FetchAnswer::Error {
                error: format!("cannot build the HTTP client: {e}"),
                ms: 0,
                refused: false,
            }
        }
    };
    let method =
        reqwest::Method::from_bytes(call.method.as_bytes()).unwrap_or(reqwest::Method::GET);
    let mut request = client.request(method, url).header("Idempotency-Key", key);
    for (name, value) in &call.headers {
        request = request.header(name, value);
    }
    if let Some(body) = &call.body {
        request = request.json(body);
    }
    let timeout = std::time::Duration::from_millis(call.timeout_ms);
    // One budget for the whole attempt: connecting, redirects, headers and the body.
    let attempt = tokio::time::timeout(timeout, async {
        let mut response = request.send().await?;
        let status = response.status().as_u16();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await? {
            if body.len() + chunk.len() > call.response_limit {
                return Ok(Err(format!(
                    "the response body is larger than the limit of {} bytes",
                    call.response_limit
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok::<_, reqwest::Error>(Ok((status, body)))
    })
    .await;
    let taken = refusal.lock().expect("refusal lock").take();
    match attempt {
        Err(_) => FetchAnswer::Timeout { ms: ms() },
        Ok(Ok(Ok((status, body)))) => FetchAnswer::Response {
            status,
            body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
            ms: ms(),
        },
        Ok(Ok(Err(too_big))) => FetchAnswer::Error {
            error: too_big,
            ms: ms(),
            refused: false,
        },
        Ok(Err(e)) => match taken {
            Some(why) => FetchAnswer::Error {
                error: why,
                ms: ms(),
                refused: true,
            },
            None if e.is_timeout() => FetchAnswer::Timeout { ms: ms() },
            None => FetchAnswer::Error {
                error: error_chain(&e),
                ms: ms(),
                refused: false,
            },
        },
    }
}

/// The host of `url` is on the list (with its port), and an IP literal is not private unless
/// its entry allows it.
fn check_url(url: &reqwest::Url, list: &AllowList) -> Result<(), String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("{} is not an http(s) URL", url.scheme()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("credentials in a URL are refused".into());
    }
    let host = url.host_str().ok_or("the URL has no host")?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = url.port_or_known_default().unwrap_or(443);
    let entry = allow::find(list, host, port).ok_or_else(|| {
        format!("{host}:{port} is not on the account's fetch allow list; nothing was sent")
    })?;
    if let Ok(ip) = host.parse::<IpAddr>() {
        if allow::is_private(ip) && !entry.allow_private {
            return Err(format!(
                "{ip} is a private address and {host} is not listed with allow_private; nothing was sent"
            ));
        }
    }
    Ok(())
}

fn client(
    list: &AllowList,
    refusal: &Refusal,
    timeout_ms: u64,
) -> Result<reqwest::Client, reqwest::Error> {
    let for_redirects = (list.clone(), refusal.clone());
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        let (list, refusal) = &for_redirects;
        if attempt.previous().len() > MAX_REDIRECTS {
            let why = format!("more than {MAX_REDIRECTS} redirects");
            *refusal.lock().expect("refusal lock") = Some(why.clone());
            return attempt.error(why);
        }
        match check_url(attempt.url(), list) {
            Ok(()) => attempt.follow(),
            Err(why) => {
                let why = format!("redirect to {}: {why}", attempt.url());
                *refusal.lock().expect("refusal lock") = Some(why.clone());
                attempt.error(why)
            }
        }
    });
    reqwest::Client::builder()
        .redirect(policy)
        .dns_resolver(Arc::new(CheckedResolver {
            list: list.clone(),
            refusal: refusal.clone(),
        }))
        .no_proxy()
        .connect_timeout(std::time::Duration::from_millis(timeout_ms))
        .user_agent(concat!("nudge/", env!("CARGO_PKG_VERSION")))
        .build()
}

/// Resolves a name once and keeps only the addresses its allow-list entry permits.
struct CheckedResolver {
    list: AllowList,
    refusal: Refusal,
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let list = self.list.clone();
        let refusal = self.refusal.clone();
        Box::pin(async move {
            let host = name.as_str().to_string();
            let refuse = |why: String| {
                *refusal.lock().expect("refusal lock") = Some(why.clone());
                Box::<dyn std::error::Error + Send + Sync>::from(why)
            };
            // The port is checked on the URL; here any entry for the name decides.
            let Some(entry) = allow::find_name(&list, &host).cloned() else {
                return Err(refuse(format!(
                    "{host} is not on the account's fetch allow list"
                )));
            };
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?
                .collect();
            let kept: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|a| entry.allow_private || !allow::is_private(a.ip()))
                .collect();
            if kept.is_empty() {
                let ips: Vec<String> = found.iter().map(|a| a.ip().to_string()).collect();
                return Err(refuse(format!(
                    "{host} resolves to {} only, private space, and is not listed with \
                     allow_private; nothing was sent",
                    ips.join(", ")
                )));
            }
            Ok(Box::new(kept.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The error and its causes on one line (reqwest's own message is often just "error sending
/// request").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::allow::AllowEntry;

    #[test]
    fn urls_are_checked_against_the_list() {
        let list = vec![
            AllowEntry {
                host: "crm.example.com".into(),
                port: None,
                allow_private: false,
            },
            AllowEntry {
                host: "127.0.0.1".into(),
                port: Some(8080),
                allow_private: true,
            },
            AllowEntry {
                host: "10.0.0.1".into(),
                port: None,
                allow_private: false,
            },
        ];
        for (url, ok) in [
            ("https://crm.example.com/x", true),
            ("https://other.example.com/x", false),
            ("http://127.0.0.1:8080/", true),
            ("http://127.0.0.1:8081/", false),
            ("http://10.0.0.1/", false),
            ("https://u:p@crm.example.com/", false),
        ] {
            let u = reqwest::Url::parse(url).unwrap();
            assert_eq!(check_url(&u, &list).is_ok(), ok, "{url}");
        }
    }
}
