//! Building and running the server: migrate, bootstrap the default account, bind, then serve
//! gRPC and HTTP on one port (h2c and HTTP/1 side by side, [`api::serve`]).

use crate::api::{self, AppState};
use crate::auth::{self, Scope};
use crate::clock::{to_millis, Clock, ManualClock, SharedClock, SystemClock};
use crate::config::{ClockKind, Config, ConnLimits};
use crate::planner::Planner;
use crate::runtime::{self, Core, Stop};
use crate::service::signals::Router;
use crate::store::{accounts, Db};
use anyhow::Context;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;

/// A built server, bound and ready to run.
pub struct App {
    listener: TcpListener,
    routes: api::serve::Routes,
    limits: ConnLimits,
    state: AppState,
    /// PostgreSQL URL for the planner's `LISTEN` connection.
    listen_url: Option<String>,
    /// Its timeouts (the pool's).
    listen_timeouts: crate::store::pg_connect::PgTimeouts,
    /// How often the count-based gauges are refreshed.
    metrics_refresh: std::time::Duration,
}

impl App {
    /// Builds the server with the clock `config.clock` asks for.
    pub async fn build(config: Config) -> anyhow::Result<App> {
        let clock: SharedClock = match config.clock {
            ClockKind::System => Arc::new(SystemClock),
            // A manual clock starts at the host's time; only its service moves it after that.
            ClockKind::Manual => Arc::new(ManualClock::new(SystemClock.now())),
        };
        App::build_with_clock(config, clock).await
    }

    /// Builds the server with the given clock (tests pass a manual one).
    pub async fn build_with_clock(config: Config, clock: SharedClock) -> anyhow::Result<App> {
        // Off the async workers and beside the migrations: the first phone lookup would
        // otherwise pay for loading the zone table inside some request.
        let warm_phones = tokio::task::spawn_blocking(crate::timing::phone::warm_up);
        let applied = Db::migrate_within(&config.database_url, config.database_connect_timeout)
            .await
            .with_context(|| format!("migrating {}", config.database_url))?;
        tracing::info!(database = %config.database_url, applied, "migrations applied");
        let db = Db::connect_with(
            &config.database_url,
            config.database_connect_timeout,
            &config.database,
        )
        .await?;
        restore_virtual_time(&db, clock.as_ref()).await?;
        let mut core = Core::new(db, clock);
        core.quiet_hours = std::sync::Arc::new(config.quiet_hours.clone());
        // Bound first: without a public URL, links point at the address actually bound.
        let listener = TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("binding {}", config.listen))?;
        let link_base = match &config.public_url {
            Some(url) => url.trim_end_matches('/').to_string(),
            None => format!("http://{}", listener.local_addr()?),
        };
        let state = AppState {
            signals: Router::start(core.clone()),
            core,
            public_url: config.public_url.clone(),
            link_base,
            webhook_keys: crate::api::http::webhooks::key_cache(),
            tokens: crate::auth::token_cache(),
            signature_clock: config
                .signature_clock
                .clone()
                .unwrap_or_else(|| std::sync::Arc::new(crate::clock::SystemClock)),
            sns: config
                .sns
                .clone()
                .unwrap_or_else(|| std::sync::Arc::new(crate::runtime::sns::HttpSns::new())),
            metrics_token: config.metrics_token.as_deref().map(Into::into),
        };
        bootstrap(&state.core, config.announce_first_token).await?;
        warm_phones.await.context("loading the phone zone table")?;

        let metrics = state.core.metrics.clone();
        let routes = api::serve::Routes {
            grpc: api::grpc::router(
                state.clone(),
                config.max_message_bytes,
                config.health_probe_every,
            )
            .await?
            .layer(axum::middleware::from_fn_with_state(
                metrics.clone(),
                api::observe::grpc,
            )),
            http: api::http::router(state.clone()).layer(axum::middleware::from_fn_with_state(
                metrics,
                api::observe::http,
            )),
        };
        let listen_url = match &config.database_url {
            crate::config::DatabaseUrl::Postgres(url) => Some(url.clone()),
            crate::config::DatabaseUrl::Sqlite(_) => None,
        };
        Ok(App {
            listener,
            routes,
            limits: config.limits,
            state,
            listen_url,
            listen_timeouts: config.database.postgres,
            metrics_refresh: config.metrics_refresh,
        })
    }

    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The shared state (tests use its core: database and clock).
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Serves until `shutdown` completes, then finishes the requests in flight and stops the
    /// planner. With a manual clock the planner loop does not run: `TestClockService.Advance`
    /// drives it.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        tracing::info!(address = %self.listener.local_addr()?, "serving gRPC and HTTP");
        let (stop_tx, stop) = Stop::new();
        let mut background = Vec::new();
        let core = &self.state.core;
        // A fan-out a crash cut short is finished now, not when its provider retries.
        let resume = core.clone();
        background.push(tokio::spawn(async move {
            match crate::service::signals::resume_unrouted(&resume).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(reached = n, "finished signal fan-outs cut short"),
                Err(e) => tracing::error!(error = %e, "cannot finish signal fan-outs cut short"),
            }
        }));
        // Fetch requests take real time whichever clock runs (docs/flows.md, "fetch").
        let fetcher = crate::planner::fetch::Fetcher { core: core.clone() };
        background.push(tokio::spawn(fetcher.run(stop.clone())));
        // Step experiments: auto_stop judged, count rows folded, whichever clock runs.
        background.push(tokio::spawn(crate::service::flow_stats::run_upkeep(
            core.clone(),
            stop.clone(),
        )));
        // Moves of enrollments a stopped replica left half-way are resumed.
        background.push(tokio::spawn(
            crate::service::enrollments::migrate::run_resumer(core.clone(), stop.clone()),
        ));
        background.push(tokio::spawn(runtime::metrics::run_refresher(
            core.clone(),
            self.metrics_refresh,
            stop.clone(),
        )));
        if core.clock.as_manual().is_none() {
            let planner = Planner::new(core.clone());
            background.push(tokio::spawn(planner.run(stop.clone())));
            if let Some(url) = self.listen_url.clone() {
                background.push(tokio::spawn(runtime::listen(
                    url,
                    self.listen_timeouts,
                    core.wakeup.clone(),
                    stop.clone(),
                )));
            }
        }
        // The reply classifier's learned model trains once, on first use (a tenth of a second):
        // train it now, off the runtime's threads, so the first reply does not wait for it.
        tokio::task::spawn_blocking(|| {
            crate::inbound::intent::learned::model();
        });
        let served = api::serve::serve(self.listener, self.routes, self.limits, shutdown).await;
        let _ = stop_tx.send(true);
        for task in background {
            let _ = task.await;
        }
        served
    }
}

/// With a manual clock, goes on from the virtual time a previous server saved on this database
/// (when it is later than the clock's), or saves the clock's start. A system clock is left alone.
async fn restore_virtual_time(db: &Db, clock: &dyn Clock) -> anyhow::Result<()> {
    let Some(manual) = clock.as_manual() else {
        return Ok(());
    };
    let now_ms = to_millis(manual.now());
    match crate::store::clock::load(db).await? {
        Some(saved) if saved > now_ms => {
            let saved_at = crate::clock::from_millis(saved);
            tracing::info!(now = %saved_at, "manual clock: going on from the saved virtual time");
            manual.set(saved_at);
        }
        _ => crate::store::clock::save(db, now_ms).await?,
    }
    Ok(())
}

/// A first start on an empty database creates the default account (with a default sender in
/// UTC) and, when `announce`, prints a first API token once on stderr, so the quickstart stays
/// one command. The token is not logged: logs are often shipped elsewhere.
async fn bootstrap(core: &Core, announce: bool) -> anyhow::Result<()> {
    let now_ms = to_millis(core.clock.now());
    let (account, created) = accounts::ensure_default(&core.db, now_ms).await?;
    crate::store::link_secret::ensure(&core.db, now_ms).await?;
    if created && announce {
        let token = auth::create_token(&core.db, &account.id, &Scope::Full, now_ms).await?;
        tracing::info!(
            account = %account.id,
            "first start: created the default account and printed its first API token on stderr \
             (make more with `nudge token create`)"
        );
        eprintln!(
            "\nnudge: first start, created the default account.\n\
             Your API token (shown once; send it as `authorization: Bearer <token>`):\n\n    {token}\n\n\
             Make more with `nudge token create` (same --database-url).\n"
        );
    }
    Ok(())
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM (container stop), for graceful shutdown.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing requests in flight");
}
