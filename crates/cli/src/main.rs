//! The `l2node` binary: run a node, import a chain, estimate and send transactions, check health.

mod args;
mod db;
mod fees;
mod health;
mod logging;
mod tx;

use std::{process::ExitCode, sync::Arc, time::Instant};

use anyhow::Context;
use l2node_node::chainspec::ChainSpec;
use l2node_node::dev;
use l2node_node::import;

use args::{Cli, Command, DevnetArgs, ImportArgs, RunArgs};

/// mimalloc instead of glibc malloc: the RPC path allocates many small short-lived buffers
/// (JSON, EVM frames) across threads, where glibc's per-thread arenas cost ~10% of a request.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    l2node_node::tune_allocator();
    match run_command() {
        Ok(code) => code,
        Err(e) => {
            // The error and its causes on one line, each said once, never a Rust backtrace.
            let mut line = e.to_string();
            for cause in e.chain().skip(1).map(|c| c.to_string()) {
                if !line.contains(&cause) {
                    line = format!("{line}: {cause}");
                }
            }
            eprintln!("Error: {line}");
            ExitCode::FAILURE
        }
    }
}

fn run_command() -> anyhow::Result<ExitCode> {
    let (cli, warnings) = Cli::load(std::env::args().collect())?;
    logging::init(cli.log.log_format, &cli.log.log_level);
    for warning in warnings {
        tracing::warn!(target: "l2node", "{warning}");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Command::Run(args) => runtime.block_on(run(*args)).map(|()| ExitCode::SUCCESS),
        Command::Import(args) => import_chain(args).map(|()| ExitCode::SUCCESS),
        Command::Estimate(args) => Ok(runtime.block_on(tx::estimate(args))),
        Command::Send(args) => Ok(runtime.block_on(tx::send(*args))),
        Command::Health(args) => Ok(runtime.block_on(health::run(args))),
        Command::Devnet(args) => runtime.block_on(devnet(*args)).map(|()| ExitCode::SUCCESS),
        Command::Db(args::DbCommand::Stats(args)) => db::stats(&args).map(|()| ExitCode::SUCCESS),
    }
}

async fn devnet(args: DevnetArgs) -> anyhow::Result<()> {
    // The groups convert once per node: the same options, each node's role, directory and
    // ports (`DevnetArgs::sequencer` / `follower`).
    let cfg = args.sequencer()?;
    print_dev_banner(&cfg);
    let sequencer = l2node_launch::spawn(cfg)
        .await
        .context("starting the sequencer")?;
    let bootnode = sequencer
        .p2p
        .as_ref()
        .context("the sequencer runs peer-to-peer")?
        .local_addr()
        .clone();
    let follower = l2node_launch::spawn(args.follower(&bootnode)?)
        .await
        .context("starting the follower")?;
    for (role, node) in [("sequencer", &sequencer), ("follower", &follower)] {
        let p2p = node.p2p.as_ref().map(|p| p.local_addr().to_string());
        println!(
            "  {role:<9}  http://{}  ws://{}  p2p {}",
            node.rpc
                .http_addr
                .map(|a| a.to_string())
                .unwrap_or_default(),
            node.rpc.ws_addr.map(|a| a.to_string()).unwrap_or_default(),
            p2p.unwrap_or_default()
        );
    }
    if let Some(a) = sequencer.rpc.http_addr {
        println!("  dashboard: http://{a}/ (open it in a browser; the follower has one too)");
    }
    println!("  data: {} (Ctrl-C stops both)", args.data_dir().display());
    shutdown_signal().await;
    tracing::info!(target: "l2node", "shutting down");
    follower.stop().await;
    sequencer.stop().await;
    Ok(())
}

async fn run(args: RunArgs) -> anyhow::Result<()> {
    let cfg = args.into_config()?;
    if args_is_dev(&cfg) {
        print_dev_banner(&cfg);
    }
    let handle = l2node_launch::spawn(cfg)
        .await
        .context("starting the node")?;
    if let Some(p) = &handle.p2p {
        tracing::info!(target: "l2node", "peer-to-peer on {} (use it in other nodes' --bootnodes)", p.local_addr());
    }
    if let Some(a) = handle.rpc.http_addr {
        tracing::info!(target: "l2node", "HTTP JSON-RPC on http://{a}");
    }
    if let Some(a) = handle.rpc.ws_addr {
        tracing::info!(target: "l2node", "WebSocket JSON-RPC on ws://{a}");
    }
    if let Some(a) = handle.rpc.http_addr {
        tracing::info!(target: "l2node", "dashboard on http://{a}/ (open it in a browser)");
    }
    shutdown_signal().await;
    tracing::info!(target: "l2node", "shutting down");
    handle.stop().await;
    Ok(())
}

/// Whether the node runs the dev chain (`--dev`: it holds the dev accounts' keys); a genesis
/// that only reuses the dev chain id is not one.
fn args_is_dev(cfg: &l2node_launch::NodeConfig) -> bool {
    !cfg.rpc.unlocked.is_empty()
}

fn print_dev_banner(cfg: &l2node_launch::NodeConfig) {
    println!("l2node dev chain");
    println!(
        "  chain id: {} ({:#x})",
        cfg.spec.chain_id, cfg.spec.chain_id
    );
    println!("  mnemonic: {}", l2node_node::constants::DEV_MNEMONIC);
    println!(
        "  accounts ({} ETH each):",
        l2node_node::constants::DEV_ACCOUNT_BALANCE_ETH
    );
    let tiers = cfg
        .spec
        .karma
        .as_ref()
        .map(|k| k.tiers.clone())
        .unwrap_or_default();
    for (i, s) in dev::dev_accounts().iter().enumerate() {
        let karma = dev::DEV_ACCOUNT_KARMA[i];
        let balance = alloy_primitives::U256::from(karma) * l2node_node::karma::config::ONE_KARMA;
        let tier = l2node_node::karma::policy::tier_of(balance, &tiers)
            .map(|(_, t)| format!("{} ({} free tx/day)", t.name, t.tx_per_epoch))
            .unwrap_or_default();
        println!(
            "    ({i}) {} key 0x{}  {} KARMA -> {tier}",
            s.address(),
            alloy_primitives::hex::encode(s.to_bytes()),
            fees::grouped(karma)
        );
    }
    if let Some(k) = &cfg.spec.karma {
        println!(
            "  karma: Karma {} KarmaTiers {}; premium from {} wei per gas; l2_estimateGas quotes the fees",
            k.karma_contract, k.tiers_contract, k.premium_threshold
        );
    }
    if let Some(k) = &cfg.signer {
        println!("  sequencer: {}", k.address());
    }
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("install SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

fn import_chain(args: ImportArgs) -> anyhow::Result<()> {
    let genesis = args.genesis()?;
    let spec = Arc::new(
        ChainSpec::from_genesis_file(genesis)
            .with_context(|| format!("reading genesis {}", genesis.display()))?,
    );
    let chain = l2node_node::chain::open_chain_with_cache(
        &args.data_dir(),
        spec,
        args.storage.db_cache_size,
        args.storage.window()?,
        l2node_storage::DEFAULT_PROOF_WINDOW,
    )?;
    let started = Instant::now();
    let bar = logging::progress_bar();
    let mut last_line = Instant::now();
    let done = import::import_file(&chain, &args.file, |p| {
        if let Some(bar) = &bar {
            bar.set_length(p.total as u64);
            bar.set_position(p.offset as u64);
            bar.set_message(format!("block {}", p.number));
        } else if last_line.elapsed().as_secs() >= 5 {
            tracing::info!(target: "l2node::import", block = p.number, imported = p.imported, bytes = p.offset, total = p.total, "importing");
            last_line = Instant::now();
        }
    })
    .with_context(|| format!("importing {}", args.file.display()))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    // The last blocks' trie nodes, still in memory: the next start need not rebuild them.
    chain.storage().flush_trie()?;
    let head = chain.head();
    tracing::info!(
        target: "l2node::import",
        imported = done.imported,
        skipped = done.skipped,
        head = head.header.number,
        hash = %head.hash,
        secs = started.elapsed().as_secs_f64(),
        "import complete"
    );
    Ok(())
}
