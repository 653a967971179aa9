//! The diesel schema, shared by PostgreSQL and SQLite. Column types are portable on purpose
//! (ids `Text`, instants `BigInt` epoch milliseconds UTC, JSON as `Text`, flags `Bool`), so the
//! same table definitions and queries serve both backends.

diesel::table! {
    accounts (id) {
        id -> Text,
        name -> Text,
        max_wait -> Nullable<Text>,
        webhook_secret -> Text,
        default_sender_id -> Nullable<Text>,
        created_at -> BigInt,
        fetch_allow -> Nullable<Text>,
        quiet_hours -> Nullable<Text>,
        call_connected_threshold -> Nullable<Text>,
        reply_unsubscribe -> Nullable<Text>,
    }
}

diesel::table! {
    /// What each provider's webhook is checked with, per account.
    provider_secrets (account_id, provider) {
        account_id -> Text,
        provider -> Text,
        secret -> Text,
        updated_at -> BigInt,
    }
}

diesel::table! {
    api_tokens (id) {
        id -> Text,
        account_id -> Text,
        hash -> Text,
        scope -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    contacts (account_id, id) {
        account_id -> Text,
        id -> Text,
        email -> Nullable<Text>,
        phone -> Nullable<Text>,
        tz -> Nullable<Text>,
        attributes -> Text,
        opted_out -> Text,
        created_at -> BigInt,
        updated_at -> BigInt,
        country -> Nullable<Text>,
    }
}

diesel::table! {
    senders (account_id, id) {
        account_id -> Text,
        id -> Text,
        email -> Nullable<Text>,
        tz -> Text,
        calendar -> Nullable<Text>,
        created_at -> BigInt,
        updated_at -> BigInt,
        caps -> Nullable<Text>,
    }
}

diesel::table! {
    capacity_ledger (key) {
        key -> Text,
        account_id -> Text,
        sender_id -> Text,
        channel -> Text,
        at -> BigInt,
        domain -> Nullable<Text>,
        gap_until -> BigInt,
    }
}

diesel::table! {
    flows (id) {
        id -> Text,
        account_id -> Text,
        name -> Text,
        latest_version -> Integer,
        created_at -> BigInt,
    }
}

diesel::table! {
    flow_versions (flow_id, version) {
        flow_id -> Text,
        version -> Integer,
        definition -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    enrollments (id) {
        id -> Text,
        account_id -> Text,
        flow_id -> Text,
        flow_version -> Integer,
        contact_id -> Text,
        sender_id -> Text,
        status -> Text,
        client_key -> Nullable<Text>,
        state -> Binary,
        next_run_at -> Nullable<BigInt>,
        journey_seq -> BigInt,
        journey_xid -> BigInt,
        created_at -> BigInt,
        updated_at -> BigInt,
        allow_duplicate -> Bool,
    }
}

diesel::table! {
    /// What enrollments are found by besides their id (contact, flow, status, client key): on
    /// PostgreSQL a table the writer keeps beside `enrollments` (written when an enrollment is
    /// made and when its status changes, so a step's update writes fewer index entries), on
    /// SQLite a view of `enrollments`. Declared keyed by `id` for joins; the PostgreSQL table
    /// has no primary key. `first_*` hold the enrollment's first journey step on PostgreSQL
    /// (`journey_steps`' columns of the same names; NULL in the view).
    enrollment_keys (id) {
        id -> Text,
        account_id -> Text,
        contact_id -> Text,
        flow_id -> Text,
        status -> Text,
        client_key -> Nullable<Text>,
        allow_duplicate -> Bool,
        first_xid -> Nullable<BigInt>,
        first_n -> Nullable<BigInt>,
        first_at -> Nullable<BigInt>,
        first_entries -> Nullable<Text>,
    }
}

diesel::table! {
    /// A view (read only): each entry of `journey_steps` as a row, as the journey was stored
    /// before steps held their entries together.
    journey (enrollment_id, seq) {
        enrollment_id -> Text,
        seq -> BigInt,
        at -> BigInt,
        kind -> Text,
        detail -> Text,
    }
}

diesel::table! {
    /// The entries one step wrote to one enrollment: `entries` is a JSON array of
    /// `[kind, detail]`, entry `i` has seq `seq + i` and Watch key `(xid, enrollment_id, seq + i)`.
    /// `last_pos` is the Watch position a row written before keys had (its last entry's), so an
    /// old cursor still names its entry; NULL on rows written since.
    journey_steps (enrollment_id, seq) {
        enrollment_id -> Text,
        seq -> BigInt,
        n -> BigInt,
        at -> BigInt,
        account_id -> Text,
        last_pos -> Nullable<BigInt>,
        entries -> Text,
        xid -> BigInt,
    }
}

diesel::table! {
    dispatches (id) {
        id -> Text,
        account_id -> Text,
        enrollment_id -> Text,
        run -> BigInt,
        step -> Text,
        idempotency_key -> Text,
        channel -> Text,
        recipient -> Text,
        template -> Text,
        input -> Text,
        channel_params -> Nullable<Text>,
        message_id -> Nullable<Text>,
        status -> Text,
        lease_owner -> Nullable<Text>,
        lease_until -> Nullable<BigInt>,
        attempts -> Integer,
        provider_message_id -> Nullable<Text>,
        failure -> Nullable<Text>,
        created_at -> BigInt,
        due_at -> BigInt,
        hold_code -> Nullable<Text>,
        variant -> Nullable<Text>,
    }
}

diesel::table! {
    tasks (id) {
        id -> Text,
        account_id -> Text,
        enrollment_id -> Text,
        run -> BigInt,
        kind -> Text,
        step -> Text,
        status -> Text,
        outcome -> Nullable<Text>,
        params -> Text,
        due_by -> Nullable<BigInt>,
        created_at -> BigInt,
        completed_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    signals (id) {
        id -> Text,
        account_id -> Text,
        contact_id -> Text,
        source -> Text,
        provider_id -> Nullable<Text>,
        raises -> Text,
        payload -> Text,
        created_at -> BigInt,
        kind -> Text,
        channel -> Nullable<Text>,
        contact_ids -> Text,
        routed_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    signal_deliveries (signal_id, enrollment_id) {
        signal_id -> Text,
        enrollment_id -> Text,
        effect -> Text,
        branch -> Nullable<Text>,
        at -> BigInt,
    }
}

diesel::table! {
    webhook_replays (account_id, signature) {
        account_id -> Text,
        signature -> Text,
        seen_at -> BigInt,
    }
}

diesel::table! {
    link_secret (id) {
        id -> Integer,
        secret -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    virtual_clock (id) {
        id -> Integer,
        now_ms -> BigInt,
    }
}

diesel::table! {
    fetch_requests (id) {
        id -> Text,
        account_id -> Text,
        enrollment_id -> Text,
        run -> BigInt,
        attempt -> Integer,
        request -> Text,
        status -> Text,
        lease_until -> Nullable<BigInt>,
        created_at -> BigInt,
    }
}

diesel::joinable!(api_tokens -> accounts (account_id));
diesel::joinable!(provider_secrets -> accounts (account_id));
diesel::joinable!(flow_versions -> flows (flow_id));
diesel::joinable!(enrollment_keys -> enrollments (id));

diesel::table! {
    /// An operator's move of a flow's running enrollments to another version. See
    /// `store::enrollment_migrations`.
    enrollment_migrations (id) {
        id -> Text,
        account_id -> Text,
        flow_id -> Text,
        client_key -> Text,
        request -> Text,
        status -> Text,
        moved -> BigInt,
        groups -> Text,
        cursor -> Text,
        started_by -> Text,
        lease_until -> BigInt,
        created_at -> BigInt,
        finished_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    /// A flow's funnel counts, appended by the transaction that did what they count (no primary
    /// key in the table: declared keyed for diesel). See `store::flow_stats`.
    flow_counts (account_id, flow_id, flow_version, step, metric, variant, hour) {
        account_id -> Text,
        flow_id -> Text,
        flow_version -> Integer,
        step -> Text,
        metric -> Text,
        variant -> Text,
        hour -> BigInt,
        n -> BigInt,
    }
}

diesel::table! {
    /// A contact's exposure to a step experiment, and its conversion.
    exposures (enrollment_id, experiment) {
        enrollment_id -> Text,
        experiment -> Text,
        account_id -> Text,
        flow_id -> Text,
        flow_version -> Integer,
        step -> Text,
        variant -> Text,
        goal -> Text,
        shared -> Bool,
        exposed_at -> BigInt,
        closed_at -> Nullable<BigInt>,
        converted_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    /// Where a step experiment's variant stands (stopped, winner) and its smallest p-value.
    variant_states (flow_id, experiment, variant) {
        account_id -> Text,
        flow_id -> Text,
        experiment -> Text,
        variant -> Text,
        state -> Text,
        min_p_value -> Nullable<Double>,
        reason -> Nullable<Text>,
        decided_by -> Nullable<Text>,
        decided_at -> Nullable<BigInt>,
    }
}

diesel::allow_tables_to_appear_in_same_query!(
    enrollment_migrations,
    accounts,
    api_tokens,
    provider_secrets,
    fetch_requests,
    contacts,
    senders,
    capacity_ledger,
    flows,
    flow_versions,
    enrollments,
    enrollment_keys,
    journey,
    journey_steps,
    dispatches,
    tasks,
    signals,
    signal_deliveries,
    webhook_replays,
    link_secret,
    virtual_clock,
    flow_counts,
    exposures,
    variant_states,
);
