-- A flow's funnel, counted as it happens: every transaction that enters a step, sends, ends an
-- enrollment or brings a reply appends its own rows here (one per step, metric and hour it
-- touched), so no writer waits on another's row and GetFlowStats sums a few rows instead of
-- reading journeys. A reader folds a flow's rows together when they pile up.
CREATE TABLE flow_counts (
    account_id TEXT NOT NULL,
    flow_id TEXT NOT NULL,
    flow_version INTEGER NOT NULL,
    step TEXT NOT NULL,
    -- entered, dispatched, sent, failed, bounced, replies, intent:<intent>, meetings_booked,
    -- opted_out, exited, exposed, converted
    metric TEXT NOT NULL,
    -- The variant, for exposed and converted; '' otherwise.
    variant TEXT NOT NULL DEFAULT '',
    -- The start of the UTC hour it happened in (ms): what `since` filters on.
    hour BIGINT NOT NULL,
    n BIGINT NOT NULL
);
CREATE INDEX flow_counts_by_flow ON flow_counts (account_id, flow_id, hour);

-- A contact's exposure to a step experiment (its variant's message acknowledged as sent), and
-- whether it converted: one row per enrollment and experiment, so a reply converts at most
-- once and locks only its own enrollment's rows.
CREATE TABLE exposures (
    enrollment_id TEXT NOT NULL,
    -- The experiment's seed without its colon: "<flow name>/<step id>", or the shared name.
    experiment TEXT NOT NULL,
    account_id TEXT NOT NULL,
    flow_id TEXT NOT NULL,
    flow_version INTEGER NOT NULL,
    step TEXT NOT NULL,
    variant TEXT NOT NULL,
    -- The event that converts: reply, meeting_booked or intent:interested.
    goal TEXT NOT NULL,
    -- A shared experiment converts any time after the first exposure; a step's only until the
    -- enrollment's next outreach message is sent (closed_at).
    shared BOOLEAN NOT NULL,
    exposed_at BIGINT NOT NULL,
    closed_at BIGINT,
    converted_at BIGINT,
    PRIMARY KEY (enrollment_id, experiment)
);

-- Where each variant of a step experiment stands, once something was decided or measured:
-- `stopped` takes no new contacts, `winner` is the one left running; `min_p_value` is the
-- smallest always-valid p-value seen against the control (what is reported). A stop is written
-- once (the first writer wins), with the figures that decided it.
CREATE TABLE variant_states (
    account_id TEXT NOT NULL,
    flow_id TEXT NOT NULL,
    experiment TEXT NOT NULL,
    variant TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'running',
    min_p_value REAL,
    -- Why, with the figures, and who: `auto_stop` or the person's name.
    reason TEXT,
    decided_by TEXT,
    decided_at BIGINT,
    PRIMARY KEY (flow_id, experiment, variant)
);
