//! Rendering validation problems for people (`nudge validate`) and for machines
//! (`nudge validate --json`, `FlowService.ValidateFlow`), in the shape of docs/service.md.

use crate::flow::validate::{Problem, Severity};
use serde_json::{json, Value};

/// One line per problem: `path: CODE: message`, warnings marked `warning:`. The root pointer
/// (`""`) is written `/`.
pub fn render_text(problems: &[Problem]) -> String {
    problems.iter().map(|p| format!("{p}\n")).collect()
}

/// `{"valid": bool, "problems": [{"severity", "code", "path", "message"}]}` (docs/service.md); `valid` is
/// false when any problem is an error.
pub fn render_json(problems: &[Problem]) -> Value {
    json!({
        "valid": !problems.iter().any(|p| p.severity == Severity::Error),
        "problems": problems.iter().map(|p| json!({
            "severity": p.severity.as_str(),
            "code": p.code.as_str(),
            "path": p.path,
            "message": p.message,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::Code;

    fn problems() -> Vec<Problem> {
        vec![
            Problem {
                severity: Severity::Error,
                code: Code::UnknownTarget,
                path: "/steps/a~1b/next/then".into(),
                message: "no step is named `x`".into(),
            },
            Problem {
                severity: Severity::Warning,
                code: Code::Unreachable,
                path: "/steps/old".into(),
                message: "no path reaches it".into(),
            },
        ]
    }

    #[test]
    fn text() {
        assert_eq!(
            render_text(&problems()),
            "/steps/a~1b/next/then: UNKNOWN_TARGET: no step is named `x`\n\
             /steps/old: warning: UNREACHABLE: no path reaches it\n"
        );
        assert_eq!(render_text(&[]), "");
    }

    #[test]
    fn json_shape() {
        assert_eq!(
            render_json(&problems()),
            json!({"valid": false, "problems": [
                {"severity": "error", "code": "UNKNOWN_TARGET", "path": "/steps/a~1b/next/then", "message": "no step is named `x`"},
                {"severity": "warning", "code": "UNREACHABLE", "path": "/steps/old", "message": "no path reaches it"}
            ]})
        );
        assert_eq!(
            render_json(&problems()[1..]),
            json!({"valid": true, "problems": [
            {"severity": "warning", "code": "UNREACHABLE", "path": "/steps/old", "message": "no path reaches it"}]})
        );
        assert_eq!(render_json(&[]), json!({"valid": true, "problems": []}));
    }
}
