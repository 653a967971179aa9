//! Which of a step's variants an enrollment's contact gets: one function for the interpreter
//! (what is sent) and Explain (what it says), so the two never disagree.

use crate::engine::state::EnrollmentState;
use crate::experiment;
use crate::flow::model::{Flow, Variant};
use std::collections::{BTreeSet, HashMap};

/// A flow's variants that take no new contacts, by experiment (its key, see
/// [`Flow::experiment_of`]).
pub type Stopped = HashMap<String, BTreeSet<String>>;

/// The variant of step `step_id` of `flow` that `state`'s contact gets; `None` when the step
/// has no variants. The variant the enrollment was given before in the same experiment, when
/// it was (a contact keeps its variant, stopped or not); else deterministic
/// ([`experiment::assign`]): the same in every replay, on every replica and in every version of
/// the flow, with a stopped variant's contacts placed among the running ones.
pub fn of<'f>(
    flow: &'f Flow,
    step_id: &str,
    state: &EnrollmentState,
    stopped: Option<&Stopped>,
) -> Option<&'f Variant> {
    let step = flow.step(step_id)?;
    let (key, shared, _) = flow.experiment_of(step_id)?;
    if let Some(kept) = state.variants.get(&key) {
        if let Some(v) = step.variants.iter().find(|v| &v.name == kept) {
            return Some(v);
        }
    }
    let seed = experiment::seed(&flow.name, step_id, shared.then_some(key.as_str()));
    let weights: Vec<f64> = step.variants.iter().map(|v| v.weight).collect();
    let halted = stopped.and_then(|s| s.get(&key));
    let flags: Vec<bool> = step
        .variants
        .iter()
        .map(|v| halted.is_some_and(|h| h.contains(&v.name)))
        .collect();
    let chosen = experiment::assign(&seed, &state.contact.id, &weights, &flags);
    step.variants.get(chosen.index)
}
