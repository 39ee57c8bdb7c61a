//! tracing setup (`--log-format text|json`) and the import progress bar.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Output format of the logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// As `--log-format` parses it (case-insensitive), for `log-format` in `--config-file`.
impl std::str::FromStr for LogFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        <Self as clap::ValueEnum>::from_str(s, true)
    }
}

/// Installs the global subscriber; `RUST_LOG` overrides `level`.
pub(crate) fn init(format: LogFormat, level: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

/// A progress bar when stderr is a terminal; `None` means print periodic lines instead.
pub(crate) fn progress_bar() -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {msg}",
        )
        .expect("valid template"),
    );
    Some(bar)
}
