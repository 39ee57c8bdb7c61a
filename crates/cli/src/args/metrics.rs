//! Prometheus metrics (`--metrics-*`) and their [`MetricsConfig`].

use clap::ArgAction;
use l2node_node::constants as c;
use l2node_node::metrics::MetricsConfig;

use super::socket;

option_group! {
    /// Prometheus metrics. One exporter per process (the `metrics` recorder is global): devnet
    /// starts it with its sequencer, and it counts both nodes' requests and blocks.
    #[command(next_help_heading = "Metrics")]
    pub(crate) struct MetricsArgs {
        /// Serve Prometheus metrics (GET /metrics on --metrics-host:--metrics-port).
        #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true",
              default_value_t = false, value_name = "BOOL")]
        pub metrics_enabled: bool,
        /// Metrics listen host.
        #[arg(long, value_name = "HOST", default_value = "127.0.0.1")]
        pub metrics_host: String,
        /// Metrics listen port (Besu's 9545).
        #[arg(long, value_name = "PORT", default_value_t = c::DEFAULT_METRICS_PORT)]
        pub metrics_port: u16,
    }
}

impl MetricsArgs {
    /// The exporter's configuration; `None` unless `--metrics-enabled`.
    pub(crate) fn config(&self) -> anyhow::Result<Option<MetricsConfig>> {
        self.metrics_enabled
            .then(|| socket(&self.metrics_host, self.metrics_port))
            .transpose()
            .map(|addr| addr.map(|addr| MetricsConfig { addr }))
    }
}
