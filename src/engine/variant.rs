//! Which of a step's variants an enrollment's contact gets: one function for the interpreter
//! (what is sent) and Explain (what it says), so the two never disagree.

use crate::experiment;
use crate::flow::model::{Flow, Variant};

/// The variant of step `step_id` of `flow` that contact `contact_id` gets; `None` when the step
/// has no variants. Deterministic ([`experiment::assign`]): the same in every replay, on every
/// replica and in every version of the flow.
pub fn of<'f>(flow: &'f Flow, step_id: &str, contact_id: &str) -> Option<&'f Variant> {
    let step = flow.step(step_id)?;
    if step.variants.is_empty() {
        return None;
    }
    let shared = step.experiment.as_ref().and_then(|e| e.name.as_deref());
    let seed = experiment::seed(&flow.name, step_id, shared);
    let weights: Vec<f64> = step.variants.iter().map(|v| v.weight).collect();
    // Every variant takes contacts until stopping one is stored with the flow's figures.
    let running = vec![false; weights.len()];
    let chosen = experiment::assign(&seed, contact_id, &weights, &running);
    step.variants.get(chosen.index)
}
