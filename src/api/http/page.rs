//! Small server-rendered HTML pages (the approval page; the unsubscribe page can share it):
//! every text shown goes through [`escape`], pages work without JavaScript, and every answer
//! under their paths carries `Cache-Control: no-store`, `Referrer-Policy: no-referrer` (the URL
//! holds a token) and [`CSP`] (no script, no outside resource, forms post back here), set by
//! the router for pages, errors and redirects alike.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// The Content-Security-Policy of every page: nothing loads, nothing runs, forms post to us.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; \
                       base-uri 'none'; frame-ancestors 'none'";

/// HTML-escapes text for an element or a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A whole page: `title` (escaped here) and `body` (already escaped HTML).
pub fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{t}</title>\
         <style>body{{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;line-height:1.5}}\
         label{{display:block;margin-top:.75rem}}button{{margin:1rem .5rem 0 0;padding:.5rem 1rem;font-size:1rem}}\
         .error{{color:#a00}}</style></head>\
         <body><main><h1>{t}</h1>{body}</main></body></html>\n",
        t = escape(title)
    );
    // The headers every token page carries (`CSP`, no-store, no-referrer, nosniff, DENY) are
    // set for every answer under its path by the router (`super::page_headers`).
    let mut response = (status, html).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
    }
}
