//! The account's fetch allow list (docs/flows.md, "fetch"): which hosts a `fetch` step may call, and which
//! addresses count as private. Pure: the outbound client ([`crate::runtime::outbound`]) asks
//! these questions for the URL, for every redirect hop and for every address a name resolves to.

use serde::{Deserialize, Serialize};
use std::net::IpAddr;

/// One entry: a host pattern, an optional port, and whether private addresses are allowed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowEntry {
    /// `crm.example.com`, `*.example.com` (any subdomain, not the bare domain), or an IP
    /// literal (an exact name). Lower case.
    pub host: String,
    /// Only this port when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Addresses in loopback, private, link-local or multicast space are allowed for this host.
    #[serde(default)]
    pub allow_private: bool,
}

/// The list as stored on the account.
pub type AllowList = Vec<AllowEntry>;

/// Checks a host pattern as `AccountService` receives it; returns it lower-cased, or what is
/// wrong with it.
pub fn parse_pattern(text: &str) -> Result<String, String> {
    let t = text.trim().to_ascii_lowercase();
    if t.is_empty() {
        return Err("a host is required, e.g. `crm.example.com` or `*.example.com`".into());
    }
    let literal = t.trim_start_matches('[').trim_end_matches(']');
    if literal.parse::<IpAddr>().is_ok() {
        return Ok(literal.to_string());
    }
    let name = t.strip_prefix("*.").unwrap_or(&t);
    let labels_ok = name.len() <= 253
        && name.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        });
    if !labels_ok {
        return Err(format!(
            "{} is not a host name: write a name such as `crm.example.com`, `*.example.com` for \
             its subdomains, or an IP address (no scheme, port or path)",
            crate::quote::quote(text)
        ));
    }
    Ok(t)
}

/// The entry that allows `host` (lower case, an IPv6 literal without brackets) on `port`.
pub fn find<'a>(list: &'a [AllowEntry], host: &str, port: u16) -> Option<&'a AllowEntry> {
    list.iter()
        .find(|e| name_matches(e, host) && e.port.is_none_or(|p| p == port))
}

/// The first entry for `host` whatever its port: what the resolver asks, where the port is not
/// known (it was checked on the URL).
pub fn find_name<'a>(list: &'a [AllowEntry], host: &str) -> Option<&'a AllowEntry> {
    list.iter().find(|e| name_matches(e, host))
}

fn name_matches(e: &AllowEntry, host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    match e.host.strip_prefix("*.") {
        Some(domain) => host
            .strip_suffix(domain)
            .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.')),
        None => e.host == host,
    }
}

/// Loopback, private, link-local, multicast, unspecified, shared (CGNAT) or broadcast space:
/// refused for a host not listed with `allow_private` (docs/flows.md, "fetch"). An IPv4-mapped IPv6
/// address is judged as the IPv4 address it carries.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_multicast()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || o[0] == 0
                || (o[0] == 100 && (o[1] & 0xc0) == 64)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_private(IpAddr::V4(v4));
            }
            let s = v6.segments();
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(host: &str, port: Option<u16>) -> AllowEntry {
        AllowEntry {
            host: host.into(),
            port,
            allow_private: false,
        }
    }

    #[test]
    fn patterns() {
        for (text, want) in [
            ("CRM.example.com", Ok("crm.example.com")),
            ("*.example.com", Ok("*.example.com")),
            ("127.0.0.1", Ok("127.0.0.1")),
            ("[::1]", Ok("::1")),
            ("", Err(())),
            ("https://crm.example.com", Err(())),
            ("crm.example.com:443", Err(())),
            ("a..b", Err(())),
            ("*.", Err(())),
            ("-a.com", Err(())),
        ] {
            assert_eq!(
                parse_pattern(text).map_err(|_| ()),
                want.map(String::from),
                "{text}"
            );
        }
    }

    #[test]
    fn matching() {
        let list = vec![
            entry("crm.example.com", None),
            entry("*.corp.test", Some(8443)),
            entry("10.0.0.5", None),
        ];
        for (host, port, found) in [
            ("crm.example.com", 443, Some("crm.example.com")),
            ("CRM.example.com.", 80, Some("crm.example.com")),
            ("evil-crm.example.com", 443, None),
            ("a.corp.test", 8443, Some("*.corp.test")),
            ("a.b.corp.test", 8443, Some("*.corp.test")),
            ("corp.test", 8443, None),
            ("xcorp.test", 8443, None),
            ("a.corp.test", 443, None),
            ("10.0.0.5", 80, Some("10.0.0.5")),
            ("10.0.0.6", 80, None),
        ] {
            assert_eq!(
                find(&list, host, port).map(|e| e.host.as_str()),
                found,
                "{host}:{port}"
            );
        }
    }

    #[test]
    fn private_space() {
        for (ip, private) in [
            ("127.0.0.1", true),
            ("10.1.2.3", true),
            ("172.16.0.1", true),
            ("192.168.1.1", true),
            ("169.254.169.254", true),
            ("224.0.0.1", true),
            ("0.0.0.0", true),
            ("100.64.0.1", true),
            ("8.8.8.8", false),
            ("93.184.216.34", false),
            ("::1", true),
            ("fe80::1", true),
            ("fd00::1", true),
            ("ff02::1", true),
            ("::ffff:127.0.0.1", true),
            ("2606:4700::1111", false),
        ] {
            assert_eq!(is_private(ip.parse().unwrap()), private, "{ip}");
        }
    }
}
