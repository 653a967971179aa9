//! Parsed flow versions, shared by the planner and the services. A version is immutable, so a
//! parsed [`Flow`] is kept for the life of the process: a batch of 1,000 wakes parses each
//! version it meets once, not once per enrollment.

use crate::flow::{Flow, ValidateOptions};
use std::sync::{Arc, RwLock};

/// `(flow id, version)`.
pub type FlowKey = (String, i32);

/// Parsed flows by version. Cheap to clone.
#[derive(Clone, Default)]
pub struct FlowCache {
    /// A read-mostly map: an `RwLock`, because after warm-up every access is a read. By flow id,
    /// then version: a step looks its flow up by the enrollment row's own id, without building
    /// a key (a copy of the id) for it.
    parsed: Arc<RwLock<crate::store::FastMap<String, Versions>>>,
}

/// One flow's parsed versions.
type Versions = Vec<(i32, Arc<Flow>)>;

impl FlowCache {
    pub fn contains(&self, key: &FlowKey) -> bool {
        self.get(&key.0, key.1).is_some()
    }

    /// Version `version` of flow `id`, if it is parsed already.
    pub fn get(&self, id: &str, version: i32) -> Option<Arc<Flow>> {
        let parsed = self.parsed.read().expect("flow cache lock");
        let versions = parsed.get(id)?;
        versions
            .iter()
            .find(|(v, _)| *v == version)
            .map(|(_, flow)| flow.clone())
    }

    /// The parsed flow of `key`, parsing `definition` (the stored JSON) if it is not cached.
    /// A definition that does not parse or validate is an error message (it was validated when
    /// stored, so this means the data or the validator changed).
    pub fn get_or_parse(
        &self,
        key: &FlowKey,
        definition: Option<&str>,
    ) -> Result<Arc<Flow>, String> {
        if let Some(flow) = self.get(&key.0, key.1) {
            return Ok(flow);
        }
        let Some(definition) = definition else {
            return Err(format!("flow {} version {} is not stored", key.0, key.1));
        };
        let flow = Arc::new(parse(definition)?);
        let mut parsed = self.parsed.write().expect("flow cache lock");
        let versions = parsed.entry(key.0.clone()).or_default();
        // Another caller may have parsed it meanwhile: the last one parsed is kept, as before.
        match versions.iter_mut().find(|(v, _)| *v == key.1) {
            Some((_, kept)) => *kept = flow.clone(),
            None => versions.push((key.1, flow.clone())),
        }
        Ok(flow)
    }
}

/// Parses and validates a stored definition. The account's `max_wait` is not applied here: it
/// was checked when the flow was created, and a running flow must not change meaning.
pub fn parse(definition: &str) -> Result<Flow, String> {
    let json: serde_json::Value = serde_json::from_str(definition)
        .map_err(|e| format!("the stored flow is not JSON: {e}"))?;
    Flow::from_json(&json, &ValidateOptions::default()).map_err(|problems| {
        let errors: Vec<String> = problems
            .iter()
            .filter(|p| p.severity == crate::flow::Severity::Error)
            .map(|p| format!("{} at {}: {}", p.code, p.path, p.message))
            .collect();
        format!("the flow does not validate: {}", errors.join("; "))
    })
}
