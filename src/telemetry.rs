//! Logging and trace export, in one place. Lines go to stderr (stdout is for command output such
//! as a new token); their level comes from `RUST_LOG` (default `info`). With `serve
//! --otlp-endpoint`, nudge's spans (the `request` span of every gRPC call and HTTP request,
//! `api::observe`) are also exported over OTLP/HTTP, whatever `RUST_LOG` says.

use crate::config::{LogFormat, OtlpEndpoint};
use anyhow::Context as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use std::time::Duration;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _, Registry};

/// One export (an HTTP POST of a batch) gives up after this; its spans are dropped, not retried
/// forever. The OTLP default.
pub const OTLP_EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// Spans waiting for export at most; past it new spans are dropped, so a collector that is
/// down costs bounded memory, never a growing queue. The SDK's default, said here.
pub const OTLP_MAX_QUEUE: usize = 2048;
/// Spans in one export at most (the SDK's default). A batch goes every 5 s
/// (`OTEL_BSP_SCHEDULE_DELAY`, milliseconds) or when this many wait.
pub const OTLP_MAX_BATCH: usize = 512;

/// What [`init`] set up that must be stopped: the span exporter, when there is one.
#[must_use = "call `shutdown` at exit, or spans still queued are lost"]
pub struct Telemetry {
    tracer: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Sends the spans still queued and stops the exporter, waiting at most the export timeout
    /// (plus a little). Blocking: the exporter runs on its own thread.
    pub fn shutdown(self) {
        let Some(tracer) = self.tracer else {
            return;
        };
        if let Err(e) = tracer.shutdown_with_timeout(OTLP_EXPORT_TIMEOUT + Duration::from_secs(1)) {
            tracing::warn!(error = %e, "OTLP: could not send the last spans");
        }
    }
}

/// Installs the global subscriber: log lines, plus OTLP export when `otlp` is set. Calling it
/// twice is harmless (the second call installs nothing), which lets tests switch logs on with
/// `RUST_LOG` without coordinating. Fails only when the exporter cannot be built.
pub fn init(format: LogFormat, otlp: Option<&OtlpEndpoint>) -> anyhow::Result<Telemetry> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let lines = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let lines = match format {
        LogFormat::Human => lines.boxed(),
        LogFormat::Json => lines.json().boxed(),
    }
    .with_filter(filter);
    let tracer = otlp.map(exporter).transpose()?;
    // Only nudge's own spans: the exporter's HTTP client and the SDK log too, and exporting
    // those would feed the exporter its own work.
    let export = tracer.as_ref().map(|provider| {
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("nudge"))
            .with_filter(Targets::new().with_target("nudge", tracing::Level::INFO))
    });
    let installed = Registry::default()
        .with(lines)
        .with(export)
        .try_init()
        .is_ok();
    if let (Some(endpoint), true) = (otlp, installed) {
        tracing::info!(%endpoint, "exporting request spans over OTLP/HTTP");
    }
    Ok(Telemetry {
        tracer: tracer.filter(|_| installed),
    })
}

/// A tracer provider that batches spans to `endpoint` (OTLP/HTTP, protobuf) as service `nudge`.
fn exporter(endpoint: &OtlpEndpoint) -> anyhow::Result<SdkTracerProvider> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(endpoint.traces_url())
        .with_timeout(OTLP_EXPORT_TIMEOUT)
        .build()
        .with_context(|| format!("--otlp-endpoint {endpoint}: cannot set up the exporter"))?;
    // `default()` reads the `OTEL_BSP_*` variables; the bounds are then nudge's.
    let batches = BatchConfigBuilder::default()
        .with_max_queue_size(OTLP_MAX_QUEUE)
        .with_max_export_batch_size(OTLP_MAX_BATCH)
        .build();
    let resource = Resource::builder()
        .with_service_name("nudge")
        .with_attribute(opentelemetry::KeyValue::new(
            "service.version",
            env!("CARGO_PKG_VERSION"),
        ))
        .build();
    Ok(SdkTracerProvider::builder()
        .with_span_processor(
            BatchSpanProcessor::builder(exporter)
                .with_batch_config(batches)
                .build(),
        )
        .with_resource(resource)
        .build())
}
