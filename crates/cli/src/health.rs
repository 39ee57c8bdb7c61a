//! `l2node health`: the network's three health checks of a node, against each node
//! (block number within `--max-lag` of a reference, `eth_syncing` false, peers > 0), as a table
//! or JSON. Exit 0 when every reachable node is healthy, 1 when one is not, 2 when none answers.

use std::{io::IsTerminal, process::ExitCode, time::Duration};

use l2node_client::{health, Client};

use crate::args::HealthArgs;

/// Default endpoints: the two HTTP ports of `l2node devnet` (the network's two client
/// implementations' ports).
pub(crate) const DEFAULT_TARGETS: [&str; 2] = ["http://127.0.0.1:8545", "http://127.0.0.1:8445"];
/// How long one node may take to answer all three checks.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// One row of the report.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    url: String,
    reachable: bool,
    healthy: bool,
    #[serde(flatten)]
    health: Option<health::Health>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// A sequencer group member's part (`leader`, `standby`, `paused`), from `/readiness`.
    #[serde(skip_serializing_if = "Option::is_none")]
    sequencer: Option<String>,
}

async fn check_one(url: &str, reference: Option<&Client>, max_lag: u64) -> Row {
    let result = tokio::time::timeout(CHECK_TIMEOUT, async {
        let node = Client::connect(url).await?;
        health::check(&node, reference, max_lag).await
    })
    .await;
    match result {
        Ok(Ok(h)) => Row {
            url: url.into(),
            reachable: true,
            healthy: h.healthy(),
            health: Some(h),
            error: None,
            sequencer: group_role(url).await,
        },
        Ok(Err(e)) => Row {
            url: url.into(),
            reachable: false,
            healthy: false,
            health: None,
            error: Some(e.to_string()),
            sequencer: None,
        },
        Err(_) => Row {
            url: url.into(),
            reachable: false,
            healthy: false,
            health: None,
            error: Some("timed out".into()),
            sequencer: None,
        },
    }
}

/// A sequencer group member's part, from its `/readiness` answer (HTTP endpoints only; `None`
/// outside a group or when the probe does not answer).
async fn group_role(url: &str) -> Option<String> {
    if !url.starts_with("http") {
        return None;
    }
    let probe = format!("{}/readiness", url.trim_end_matches('/'));
    let answer = reqwest::Client::new()
        .get(probe)
        .timeout(CHECK_TIMEOUT)
        .send()
        .await
        .ok()?
        .bytes()
        .await
        .ok()?;
    let body: serde_json::Value = serde_json::from_slice(&answer).ok()?;
    body.get("sequencer")?.as_str().map(str::to_owned)
}

/// Runs `l2node health`.
pub(crate) async fn run(args: HealthArgs) -> ExitCode {
    let targets: Vec<String> = if args.rpc.is_empty() {
        DEFAULT_TARGETS.iter().map(|s| s.to_string()).collect()
    } else {
        args.rpc.clone()
    };
    let reference_url = match &args.reference {
        Some(url) => Some(url.clone()),
        None => sequencer_among(&targets).await,
    };
    let reference = match &reference_url {
        Some(url) => match Client::connect(url).await {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("the reference {url} is unusable: {e}");
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    let mut rows = Vec::new();
    for url in &targets {
        // The sequencer taken as the reference is checked against nothing but itself.
        let own = args.reference.is_none() && reference_url.as_deref() == Some(url.as_str());
        let reference = reference.as_ref().filter(|_| !own);
        rows.push(check_one(url, reference, args.max_lag).await);
    }
    // Without --rpc, a default port with nothing behind it is skipped (the devnet may run one
    // implementation only), and said so.
    let skipped: Vec<String> = if args.rpc.is_empty() {
        rows.iter()
            .filter(|r| !r.reachable)
            .map(|r| r.url.clone())
            .collect()
    } else {
        Vec::new()
    };
    let reachable = rows.iter().filter(|r| r.reachable).count();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).expect("rows serialize")
        );
    } else {
        let reference = reference_url.as_deref().map(|url| Reference {
            url,
            given: args.reference.is_some(),
        });
        print_table(&rows, &skipped, args.max_lag, reference);
    }
    if reachable == 0 {
        ExitCode::from(2)
    } else if rows
        .iter()
        .filter(|r| !skipped.contains(&r.url))
        .all(|r| r.healthy)
    {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Without `--reference`, the node among `targets` that seals blocks (it answers
/// `eth_coinbase`): on a devnet the followers are checked against their sequencer. In a
/// sequencer group every member holds the key, and the leader is the one at the highest block
/// (its standbys follow it).
async fn sequencer_among(targets: &[String]) -> Option<String> {
    let mut best: Option<(u64, &String)> = None;
    for url in targets {
        let head = tokio::time::timeout(CHECK_TIMEOUT, async {
            let client = Client::connect(url).await.ok()?;
            client.sealer().await?;
            client.block_number().await.ok()
        })
        .await;
        if let Ok(Some(head)) = head {
            if best.is_none_or(|(b, _)| head > b) {
                best = Some((head, url));
            }
        }
    }
    best.map(|(_, url)| url.clone())
}

/// The reference the block numbers were compared with.
struct Reference<'a> {
    url: &'a str,
    /// Named by `--reference` (else: the sequencer found among the nodes).
    given: bool,
}

fn print_table(rows: &[Row], skipped: &[String], max_lag: u64, reference: Option<Reference<'_>>) {
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mark = |ok: bool| match (ok, color) {
        (true, true) => "\x1b[32mok\x1b[0m",
        (false, true) => "\x1b[31mFAIL\x1b[0m",
        (true, false) => "ok",
        (false, false) => "FAIL",
    };
    println!(
        "{:<28} {:<34} {:<16} {:<10} verdict",
        "node",
        format!("block number (max lag {max_lag})"),
        "eth_syncing",
        "peers"
    );
    for r in rows {
        if skipped.contains(&r.url) {
            println!(
                "{:<28} not running, skipped ({})",
                r.url,
                r.error.as_deref().unwrap_or("unreachable")
            );
            continue;
        }
        let Some(h) = &r.health else {
            println!(
                "{:<28} {} unreachable: {}",
                r.url,
                mark(false),
                r.error.as_deref().unwrap_or("")
            );
            continue;
        };
        let reference = match &reference {
            Some(Reference { url, given: false }) if *url == r.url => " (the sequencer)".into(),
            Some(Reference { url, given }) => {
                h.reference_block_number
                    .map_or(" (reference unreachable)".into(), |n| {
                        if *given {
                            format!(" vs {n}")
                        } else {
                            format!(" vs {n} at {url}")
                        }
                    })
            }
            None => " (no reference)".into(),
        };
        println!(
            "{:<28} {:<34} {:<16} {:<10} {}",
            r.url,
            format!("{} {}{reference}", mark(h.block_number_ok), h.block_number),
            format!(
                "{} {}",
                mark(h.syncing_ok),
                if h.syncing_ok { "false" } else { "syncing" }
            ),
            format!("{} {}", mark(h.peers_ok), h.peers),
            match (&r.sequencer, h.healthy()) {
                (Some(role), true) => format!("healthy ({role})"),
                (Some(role), false) => format!("unhealthy ({role})"),
                (None, true) => "healthy".into(),
                (None, false) => "unhealthy".into(),
            }
        );
    }
}
