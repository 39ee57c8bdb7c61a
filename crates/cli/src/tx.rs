//! `l2node estimate` and `l2node send`: the client library's quote and send, for people (text,
//! colours on a terminal, a confirmation, a spinner) and for scripts (`--json`, exit codes).
//!
//! Exit codes: 0 done; 1 the node refused, the transaction failed (status 0) or nothing was
//! sent; 2 the node is unreachable (64, a bad command line, comes from argument parsing).

use std::{
    io::{BufRead, IsTerminal, Write},
    process::ExitCode,
    time::{Duration, Instant, SystemTime},
};

use alloy_primitives::{Address, B256, U256};
use alloy_signer_local::PrivateKeySigner;
use anyhow::{anyhow, Context};
use jsonrpsee::{http_client::HttpClientBuilder, ws_client::WsClientBuilder};
use l2node_client::{
    api::{types::KarmaStatus, L2ApiClient},
    Call, Client, ClientError, FeeQuote, FeeState,
};
use serde_json::json;

use crate::{
    args::{EstimateArgs, KeyArgs, SendArgs, TxArgs},
    fees::{self, Style, Summary},
};

/// Exit status: the node refused, the transaction failed, or nothing was sent.
const EXIT_FAILED: u8 = 1;
/// Exit status: the node could not be reached.
const EXIT_UNREACHABLE: u8 = 2;
/// How often the receipt is asked for.
const RECEIPT_POLL: Duration = Duration::from_millis(200);
/// Time limit of the best-effort Karma status asked for the text.
const STATUS_TIMEOUT: Duration = Duration::from_secs(10);

/// A command that did not succeed: its exit status and what to tell.
struct Failure {
    code: u8,
    error: anyhow::Error,
}

impl Failure {
    fn failed(error: anyhow::Error) -> Self {
        Self {
            code: EXIT_FAILED,
            error,
        }
    }

    /// A client error while `doing` something, with the exit status its kind gives.
    fn client(e: ClientError, url: &str, doing: &'static str) -> Self {
        let code = exit_code(&e);
        let error = if code == EXIT_UNREACHABLE {
            anyhow!("cannot reach the node at {url}: {e}")
        } else {
            match &e {
                ClientError::Rpc {
                    data: Some(data), ..
                } => anyhow!("{e} (data {data})"),
                _ => anyhow!(e),
            }
            .context(doing)
        };
        Self { code, error }
    }
}

/// 2 when the node was not reached (transport error or timeout), else 1.
fn exit_code(e: &ClientError) -> u8 {
    match e {
        ClientError::Transport(_) | ClientError::Timeout => EXIT_UNREACHABLE,
        ClientError::Exhausted { last, .. } => exit_code(last),
        _ => EXIT_FAILED,
    }
}

/// Prints `f` on stderr and returns its exit status.
fn report(result: Result<(), Failure>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            let st = Style::new(std::io::stderr().is_terminal());
            eprintln!("{} {:#}", st.red("error:"), f.error);
            ExitCode::from(f.code)
        }
    }
}

fn call_of(from: Address, tx: &TxArgs) -> Call {
    Call {
        from,
        to: tx.to,
        value: tx.value,
        data: tx.data.clone(),
    }
}

/// The sender's Karma status, asked on the side to name the tier and the quota in the text;
/// `None` when the node does not answer it (a chain without Karma, an older node).
async fn karma_status(url: &str, who: Address) -> Option<KarmaStatus> {
    let ask = async {
        if url.starts_with("ws://") || url.starts_with("wss://") {
            let c = WsClientBuilder::default()
                .request_timeout(STATUS_TIMEOUT)
                .build(url)
                .await
                .ok()?;
            L2ApiClient::karma_status(&c, who, None).await.ok()
        } else {
            let c = HttpClientBuilder::default()
                .request_timeout(STATUS_TIMEOUT)
                .build(url)
                .ok()?;
            L2ApiClient::karma_status(&c, who, None).await.ok()
        }
    };
    tokio::time::timeout(STATUS_TIMEOUT, ask)
        .await
        .ok()
        .flatten()
}

/// Connects and takes a quote for `call` (with the sender's status when the text needs it).
async fn quote(
    url: &str,
    call: &Call,
    with_status: bool,
) -> Result<(Client, FeeQuote, Option<KarmaStatus>), Failure> {
    let client = Client::connect(url)
        .await
        .map_err(|e| Failure::client(e, url, "connecting"))?;
    let (quote, status) = tokio::join!(client.estimate(call), async {
        if with_status {
            karma_status(url, call.from).await
        } else {
            None
        }
    });
    let quote = quote.map_err(|e| Failure::client(e, url, "estimating the transaction"))?;
    Ok((client, quote, status))
}

fn summary<'a>(call: &Call, status: Option<&'a KarmaStatus>) -> Summary<'a> {
    Summary {
        from: call.from,
        to: call.to,
        value: call.value,
        data_len: call.data.len(),
        status,
    }
}

/// `l2node estimate`.
pub(crate) async fn estimate(args: EstimateArgs) -> ExitCode {
    report(estimate_inner(args).await)
}

async fn estimate_inner(args: EstimateArgs) -> Result<(), Failure> {
    let call = call_of(args.from, &args.tx);
    let (_client, quote, status) = quote(&args.tx.rpc, &call, !args.tx.json).await?;
    if args.tx.json {
        println!("{}", fees::quote_json(call.from, &quote));
    } else {
        let st = Style::new(std::io::stdout().is_terminal());
        print!(
            "{}",
            fees::render_text(
                &summary(&call, status.as_ref()),
                &quote,
                SystemTime::now(),
                st
            )
        );
    }
    Ok(())
}

/// The signing key from `--private-key` / `L2NODE_PRIVATE_KEY` or a keystore.
fn load_signer(key: &KeyArgs) -> anyhow::Result<PrivateKeySigner> {
    if let Some(hex) = &key.private_key {
        // The message must not repeat the key.
        return hex.trim().parse::<PrivateKeySigner>().map_err(|_| {
            anyhow!("--private-key (or L2NODE_PRIVATE_KEY) is not a 32-byte hex private key")
        });
    }
    let path = key
        .keystore
        .as_ref()
        .context("pass --private-key or --keystore")?;
    let password = match &key.password_file {
        Some(f) => {
            let text = std::fs::read_to_string(f)
                .with_context(|| format!("reading the password file {}", f.display()))?;
            text.trim_end_matches(['\n', '\r']).to_owned()
        }
        None => match std::env::var("L2NODE_KEYSTORE_PASSWORD") {
            Ok(p) => p,
            Err(_) if std::io::stdin().is_terminal() => {
                eprint!("Password for {}: ", path.display());
                console::Term::stderr()
                    .read_secure_line()
                    .context("reading the password")?
            }
            Err(_) => {
                return Err(anyhow!(
                    "--keystore needs --password-file (or L2NODE_KEYSTORE_PASSWORD) when stdin is \
                     not a terminal"
                ))
            }
        },
    };
    PrivateKeySigner::decrypt_keystore(path, password)
        .with_context(|| format!("cannot decrypt the keystore {}", path.display()))
}

/// Asks `question` on the terminal; true on y/yes.
fn confirm(question: &str) -> bool {
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// `l2node send`.
pub(crate) async fn send(args: SendArgs) -> ExitCode {
    report(send_inner(args).await)
}

async fn send_inner(args: SendArgs) -> Result<(), Failure> {
    let url = args.tx.rpc.as_str();
    let json = args.tx.json;
    let interactive = std::io::stdin().is_terminal();
    if !args.yes && !interactive {
        return Err(Failure::failed(anyhow!(
            "not sending: stdin is not a terminal, so nobody can confirm; pass --yes to send \
             without confirmation"
        )));
    }
    let signer = load_signer(&args.key).map_err(Failure::failed)?;
    let call = call_of(signer.address(), &args.tx);
    let out = Style::new(std::io::stdout().is_terminal());
    let (client, shown, status) = quote(url, &call, !json || !args.yes).await?;
    let text = |st| {
        fees::render_text(
            &summary(&call, status.as_ref()),
            &shown,
            SystemTime::now(),
            st,
        )
    };
    if !json {
        print!("{}", text(out));
        let _ = std::io::stdout().flush();
    }
    if !args.yes {
        if json {
            // stdout carries only the JSON result: the quote goes with the question.
            eprint!("{}", text(Style::new(std::io::stderr().is_terminal())));
        }
        let question = match shown.state {
            FeeState::Gasless => "Send this free transaction?".to_owned(),
            _ => format!("Send it and pay up to {}?", fees::eth(shown.max_cost())),
        };
        if !confirm(&question) {
            return Err(Failure::failed(anyhow!("not sent")));
        }
    }

    // Client::send takes a fresh quote right before signing (and on each retry).
    let sent = client
        .send(&call, &signer)
        .await
        .map_err(|e| Failure::client(e, url, "sending the transaction"))?;
    let changed = sent.quote.state != shown.state
        || sent.quote.max_fee_per_gas != shown.max_fee_per_gas
        || sent.quote.gas_limit != shown.gas_limit;
    if !json {
        if changed {
            println!(
                "{} the quote changed before signing: sent as {}",
                out.yellow("Note:"),
                match sent.quote.state {
                    FeeState::Gasless => "a free transaction".to_owned(),
                    _ => format!(
                        "{} at most ({} max fee per gas)",
                        fees::eth(sent.quote.max_cost()),
                        fees::gwei(sent.quote.max_fee_per_gas)
                    ),
                }
            );
        }
        let attempts = if sent.attempts > 1 {
            format!(" (after {} attempts)", sent.attempts)
        } else {
            String::new()
        };
        println!("{} {}{attempts}", out.dim("Hash      "), sent.hash);
        let _ = std::io::stdout().flush();
    }

    let receipt = wait_for_receipt(&client, url, sent.hash, Duration::from_secs(args.timeout))
        .await
        .inspect_err(|_| {
            if json {
                println!(
                    "{}",
                    json!({ "hash": sent.hash, "attempts": sent.attempts, "blockNumber": null,
                            "status": null, "quote": fees::quote_json(call.from, &sent.quote) })
                );
            }
        })?;
    let fee = U256::from(receipt.gas_used) * U256::from(receipt.effective_gas_price);
    let ok = receipt.status();
    if json {
        println!(
            "{}",
            json!({
                "hash": sent.hash,
                "attempts": sent.attempts,
                "blockNumber": receipt.block_number,
                "status": u8::from(ok),
                "gasUsed": format!("{:#x}", receipt.gas_used),
                "effectiveGasPrice": format!("{:#x}", receipt.effective_gas_price),
                "feePaid": format!("{fee:#x}"),
                "quote": fees::quote_json(call.from, &sent.quote),
            })
        );
    } else {
        let row = |k: &str, v: String| println!("{} {v}", out.dim(&format!("{k:<10}")));
        row(
            "Block",
            receipt
                .block_number
                .map_or_else(|| "?".to_owned(), |n| n.to_string()),
        );
        row(
            "Status",
            if ok {
                out.green("1 (success)")
            } else {
                out.red("0 (failed: reverted)")
            },
        );
        row("Gas used", fees::grouped(receipt.gas_used));
        row(
            "Fee paid",
            if fee.is_zero() {
                format!("0 {} (free transaction)", fees::NATIVE)
            } else {
                format!(
                    "{} ({} gas x {})",
                    fees::eth(fee),
                    fees::grouped(receipt.gas_used),
                    fees::gwei(receipt.effective_gas_price)
                )
            },
        );
    }
    if ok {
        Ok(())
    } else {
        Err(Failure::failed(anyhow!(
            "transaction {} failed (status 0)",
            sent.hash
        )))
    }
}

/// Polls for the receipt of `hash` until `timeout`: a spinner when stderr is a terminal, else a
/// line now and then. Transport errors are retried until the time is up.
async fn wait_for_receipt(
    client: &Client,
    url: &str,
    hash: B256,
    timeout: Duration,
) -> Result<alloy_rpc_types_eth::TransactionReceipt, Failure> {
    let started = Instant::now();
    let spinner = std::io::stderr().is_terminal().then(|| {
        let s = indicatif::ProgressBar::new_spinner();
        s.set_message(format!("waiting for the receipt of {hash}"));
        s.enable_steady_tick(Duration::from_millis(100));
        s
    });
    if spinner.is_none() {
        eprintln!("waiting for the receipt of {hash}");
    }
    let mut last_line = Instant::now();
    let mut last_error: Option<ClientError>;
    let result = loop {
        match client.receipt(hash).await {
            Ok(Some(r)) => break Ok(r),
            Ok(None) => {
                last_error = None;
                // Refused after it was sent (by the sequencer, or a peer): say why, no waiting.
                if let Ok(Some(e)) = client.exclusion(hash).await {
                    break Err(Failure::failed(anyhow!(
                        "transaction {hash} will not be mined: refused at stage {} (block {}, {}): {}",
                        e.tx_rejection_stage,
                        e.block_number,
                        e.timestamp,
                        e.reason_message
                    )));
                }
            }
            Err(e) if exit_code(&e) == EXIT_UNREACHABLE => last_error = Some(e),
            Err(e) => break Err(Failure::client(e, url, "asking for the receipt")),
        }
        if started.elapsed() >= timeout {
            break Err(match last_error {
                Some(e) => Failure::client(e, url, "asking for the receipt"),
                None => Failure::failed(anyhow!(
                    "transaction {hash} was sent but not mined within {}s; it may still be",
                    timeout.as_secs()
                )),
            });
        }
        if spinner.is_none() && last_line.elapsed() >= Duration::from_secs(10) {
            eprintln!(
                "still waiting for the receipt ({}s)",
                started.elapsed().as_secs()
            );
            last_line = Instant::now();
        }
        tokio::time::sleep(RECEIPT_POLL).await;
    };
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    result
}
