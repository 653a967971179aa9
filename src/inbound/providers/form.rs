//! A request body as named fields: `application/x-www-form-urlencoded` (Mailgun without
//! attachments, Twilio) parsed here, or `multipart/form-data` (Mailgun with attachments,
//! SendGrid's Inbound Parse) as the edge read it with `multer`. Field values stay bytes:
//! SendGrid posts each in the charset its `charsets` field names.

use super::{malformed, Refusal};

/// One field of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The field's name, as sent.
    pub name: String,
    /// A file upload's name (an attachment), when it is one.
    pub filename: Option<String>,
    /// The part's own `Content-Type`, when it has one.
    pub content_type: Option<String>,
    /// The value's bytes, undecoded.
    pub bytes: Vec<u8>,
}

/// A parsed form body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Form {
    /// Every field, in the order sent.
    pub fields: Vec<Field>,
}

/// The media types a form body comes as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormType {
    /// `application/x-www-form-urlencoded`.
    UrlEncoded,
    /// `multipart/form-data` (the edge reads it).
    Multipart,
}

/// A `Content-Type`'s media type, lower case, without its parameters (empty when absent).
fn media_type(content_type: Option<&str>) -> String {
    content_type
        .map(|c| {
            c.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default()
}

/// The 415 that names what `provider` posts (`expected`) and what came (`media`).
fn wrong_type(provider: &str, expected: &str, media: &str) -> Refusal {
    Refusal::ContentType(format!(
        "{provider} posts {expected} here, not {}",
        if media.is_empty() {
            "a body without a Content-Type".to_string()
        } else {
            format!("`{}`", crate::quote::quote(media))
        }
    ))
}

/// The form type a `Content-Type` names, or a refusal that names what was sent and what is
/// expected.
pub fn form_type(content_type: Option<&str>, provider: &str) -> Result<FormType, Refusal> {
    let media = media_type(content_type);
    match media.as_str() {
        "application/x-www-form-urlencoded" => Ok(FormType::UrlEncoded),
        "multipart/form-data" => Ok(FormType::Multipart),
        _ => Err(wrong_type(
            provider,
            "`application/x-www-form-urlencoded` or `multipart/form-data`",
            &media,
        )),
    }
}

/// Refuses a body whose `Content-Type` is not JSON (`application/json`, `…+json`).
pub fn expect_json(content_type: Option<&str>, provider: &str) -> Result<(), Refusal> {
    let media = media_type(content_type);
    if media == "application/json" || media.ends_with("+json") {
        return Ok(());
    }
    Err(wrong_type(provider, "`application/json`", &media))
}

impl Form {
    /// Parses a URL-encoded body (`a=1&b=2`); values are UTF-8, as every provider sends them.
    pub fn urlencoded(body: &[u8]) -> Result<Form, Refusal> {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(body).map_err(|e| {
            malformed(format!(
                "the body is not a form (application/x-www-form-urlencoded): {e}"
            ))
        })?;
        Ok(Form {
            fields: pairs
                .into_iter()
                .map(|(name, value)| Field {
                    name,
                    filename: None,
                    content_type: None,
                    bytes: value.into_bytes(),
                })
                .collect(),
        })
    }

    /// The first field named exactly `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The first field named `name` in any case (Mailgun posts headers as fields, in the case
    /// the sender wrote them: `Message-Id` or `Message-ID`).
    pub fn field_any_case(&self, name: &str) -> Option<&Field> {
        self.fields
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(name))
    }

    /// A field's value as text (UTF-8; a byte that is not is replaced), when present.
    pub fn text(&self, name: &str) -> Option<String> {
        self.field(name)
            .map(|f| String::from_utf8_lossy(&f.bytes).into_owned())
    }

    /// A field's value that must be present, as text; the refusal names it.
    pub fn required(&self, name: &str, provider: &str) -> Result<String, Refusal> {
        self.text(name).ok_or_else(|| {
            malformed(format!(
                "the form has no `{name}` field, which {provider} always sends"
            ))
        })
    }

    /// The name of the first field whose name or (text) value holds a NUL, which no stored
    /// text may hold; file uploads are not stored and are not checked.
    pub fn nul_field(&self) -> Option<&str> {
        self.fields
            .iter()
            .find(|f| f.name.contains('\0') || (f.filename.is_none() && f.bytes.contains(&0)))
            .map(|f| f.name.as_str())
    }

    /// The params a signature over the form covers: every non-file field as text, in order.
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.fields
            .iter()
            .filter(|f| f.filename.is_none())
            .map(|f| {
                (
                    f.name.clone(),
                    String::from_utf8_lossy(&f.bytes).into_owned(),
                )
            })
            .collect()
    }
}

/// Refuses a form holding a NUL character.
pub fn refuse_nul(form: &Form) -> Result<(), Refusal> {
    match form.nul_field() {
        Some(name) => Err(malformed(format!(
            "the form field `{}` contains a NUL character (%00), which no stored text may \
             hold; remove it",
            name.replace('\0', "\\0")
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types() {
        assert_eq!(
            form_type(Some("multipart/form-data; boundary=x"), "Mailgun"),
            Ok(FormType::Multipart)
        );
        assert_eq!(
            form_type(Some("Application/X-WWW-Form-Urlencoded"), "Mailgun"),
            Ok(FormType::UrlEncoded)
        );
        let e = form_type(Some("application/json"), "Mailgun").unwrap_err();
        assert!(matches!(e, Refusal::ContentType(_)));
        assert!(e.to_string().contains("`application/json`"), "{e}");
        assert!(form_type(None, "Mailgun").is_err());
    }

    #[test]
    fn fields_by_name() {
        let form = Form::urlencoded(b"Message-Id=%3Ca%40b%3E&from=Bob&x=%00").unwrap();
        assert_eq!(form.text("from").as_deref(), Some("Bob"));
        assert_eq!(
            form.field_any_case("message-id").map(|f| f.bytes.clone()),
            Some(b"<a@b>".to_vec())
        );
        assert!(form.required("token", "Mailgun").is_err());
        assert_eq!(form.nul_field(), Some("x"));
    }
}
