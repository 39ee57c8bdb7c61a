//! The README's examples run against a dev node and print what the README shows.
//!
//! Two kinds of example are run, in the order the README gives them, on one fresh
//! `l2node run --dev` (mining on each transaction):
//! - in ```` ```console ```` blocks, each `$ l2node estimate|send ...` command (with its
//!   `VAR=value \` prefix and continuation lines) runs as a real process against the node
//!   (`L2NODE_RPC_URL`, `TZ=UTC`), and its output must equal the lines under it;
//! - in ```` ```sh ```` blocks, each `cast rpc METHOD ARG...` (arguments as cast reads them:
//!   JSON when they parse as JSON, else strings), `cast publish RAW` or `cast block-number` is
//!   sent to the node; where a `# <JSON>` line follows, the answer must equal it, and where a
//!   `# error: <text>` line follows, the node must refuse it with that text.
//!
//! What differs from run to run is masked on both sides before comparing: times and durations
//! of the quota window, Unix timestamps (`takenAt`, `windowResetsAt`), the Karma epoch
//! (`epoch`, `epochEndsAt`), ISO times (`timestamp`) and transaction hashes.
//! Commands that need something a dev node does not have (cargo, another chain, a second node,
//! a reference URL) are not examples of these kinds.

use std::process::Command;

use jsonrpsee::{core::client::ClientT, core::params::ArrayParams};
use serde_json::Value;

use crate::common::{client, start};

/// A runnable example: the command or call and the output the README shows.
#[derive(Debug)]
enum Example {
    /// A `$ l2node ...` line of a console block: environment, arguments, expected output.
    Cli {
        env: Vec<(String, String)>,
        args: Vec<String>,
        expected: String,
    },
    /// A `cast` line of a sh block: the method, its parameters, and what the README shows under
    /// it: the answer (`# <JSON>`) or the start of the error message (`# error: <text>`).
    Rpc {
        method: String,
        params: Vec<Value>,
        expected: Option<Value>,
        error: Option<String>,
    },
}

/// The README's examples in order.
fn examples(readme: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let mut lines = readme.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(lang) = line.strip_prefix("```") else {
            continue;
        };
        let mut block = Vec::new();
        for l in lines.by_ref() {
            if l.starts_with("```") {
                break;
            }
            block.push(l);
        }
        match lang {
            "console" => out.extend(console_examples(&block)),
            "sh" => out.extend(sh_examples(&block)),
            _ => {}
        }
    }
    out
}

fn console_examples(block: &[&str]) -> Vec<Example> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < block.len() {
        let Some(first) = block[i].strip_prefix("$ ") else {
            i += 1;
            continue;
        };
        let mut command = first.to_owned();
        while command.ends_with('\\') {
            command.pop();
            i += 1;
            command.push_str(block[i].trim());
        }
        i += 1;
        let start = i;
        while i < block.len() && !block[i].starts_with("$ ") {
            i += 1;
        }
        let expected = block[start..i].join("\n").trim_end().to_owned();
        let mut env = Vec::new();
        let mut words = command.split_whitespace().peekable();
        while let Some((k, v)) = words.peek().and_then(|w| w.split_once('=')) {
            env.push((k.to_owned(), v.to_owned()));
            words.next();
        }
        if words.next() != Some("l2node") {
            continue;
        }
        out.push(Example::Cli {
            env,
            args: words.map(str::to_owned).collect(),
            expected,
        });
    }
    out
}

fn sh_examples(block: &[&str]) -> Vec<Example> {
    let mut out = Vec::new();
    for (i, line) in block.iter().enumerate() {
        let Some(words) = shell_words(line) else {
            continue;
        };
        let (method, args) = match words.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            ["cast", "rpc", method, ref args @ ..] => (method.to_owned(), args.to_vec()),
            ["cast", "block-number", ..] => ("eth_blockNumber".to_owned(), vec![]),
            ["cast", "publish", raw, ..] => ("eth_sendRawTransaction".to_owned(), vec![raw]),
            _ => continue,
        };
        let params = args
            .iter()
            .take_while(|a| !a.starts_with("--"))
            .map(|a| serde_json::from_str(a).unwrap_or_else(|_| Value::String((*a).to_owned())))
            .collect();
        let shown = block.get(i + 1).and_then(|next| next.strip_prefix("# "));
        let error = shown
            .and_then(|s| s.strip_prefix("error: "))
            .map(str::to_owned);
        let expected = shown
            .filter(|_| error.is_none())
            .map(|json| serde_json::from_str(json).expect("the README's answer is JSON"));
        out.push(Example::Rpc {
            method,
            params,
            expected,
            error,
        });
    }
    out
}

/// The words of a shell line with single quotes (all the README uses); `None` for a comment.
fn shell_words(line: &str) -> Option<Vec<String>> {
    // A trailing `  # comment` is not part of the command.
    let line = line.split("   #").next().unwrap_or_default().trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let (mut words, mut word, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    Some(words)
}

/// Masks what differs from run to run: window times and durations, Unix timestamps, the Karma
/// epoch and hashes.
fn mask(text: &str) -> String {
    use std::sync::LazyLock;
    static VARYING: LazyLock<[(regex::Regex, &str); 5]> = LazyLock::new(|| {
        [
            (
                regex::Regex::new(r"at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \w+, in (\d+[dhms] ?)+")
                    .unwrap(),
                "at <time>, in <duration> ",
            ),
            (
                regex::Regex::new(r#""(takenAt|windowResetsAt)":\d+"#).unwrap(),
                r#""$1":<time>"#,
            ),
            (
                regex::Regex::new(r#""(epoch|epochEndsAt)":"0x[0-9a-f]+""#).unwrap(),
                r#""$1":<time>"#,
            ),
            (
                regex::Regex::new(r#""timestamp":"[0-9T:-]+Z""#).unwrap(),
                r#""timestamp":<time>"#,
            ),
            (regex::Regex::new(r"0x[0-9a-f]{64}").unwrap(), "<hash>"),
        ]
    });
    VARYING.iter().fold(text.to_owned(), |t, (re, with)| {
        re.replace_all(&t, *with).into_owned()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readme_examples_print_what_the_readme_shows() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md at the repository root");
    let examples = examples(&readme);
    let clis = examples
        .iter()
        .filter(|e| matches!(e, Example::Cli { .. }))
        .count();
    let answers = examples
        .iter()
        .filter(|e| {
            matches!(
                e,
                Example::Rpc {
                    expected: Some(_),
                    ..
                }
            )
        })
        .count();
    assert!(clis >= 4 && answers >= 2, "examples found: {examples:#?}");

    let dir = tempfile::tempdir().unwrap();
    let node = start(&dir.path().join("data"));
    for example in examples {
        match example {
            Example::Cli {
                env,
                args,
                expected,
            } => {
                let out = Command::new(env!("CARGO_BIN_EXE_l2node"))
                    .args(&args)
                    .envs(env)
                    .env("L2NODE_RPC_URL", &node.url)
                    .env("TZ", "UTC")
                    .env_remove("NO_COLOR")
                    .output()
                    .unwrap();
                let printed = String::from_utf8_lossy(&out.stdout);
                assert!(
                    out.status.success(),
                    "l2node {args:?} failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                assert_eq!(
                    mask(printed.trim_end()),
                    mask(&expected),
                    "`l2node {}` prints something else than the README shows",
                    args.join(" ")
                );
            }
            Example::Rpc {
                method,
                params,
                expected,
                error,
            } => {
                let mut array = ArrayParams::new();
                for p in &params {
                    array.insert(p).unwrap();
                }
                let answer = client(&node.url).request::<Value, _>(&method, array).await;
                if let Some(error) = error {
                    let got = answer.expect_err("the README shows an error").to_string();
                    assert!(got.contains(&error), "{method}: {got} does not say {error}");
                    continue;
                }
                let answer = answer.unwrap_or_else(|e| panic!("{method} {params:?}: {e}"));
                if let Some(expected) = expected {
                    assert_eq!(
                        mask(&answer.to_string()),
                        mask(&expected.to_string()),
                        "{method} {params:?} answers something else than the README shows"
                    );
                }
            }
        }
    }
}

#[test]
fn masking_hides_only_what_changes_between_runs() {
    let a = "refreshes at 2026-11-24 00:00:00 UTC, in 22h 45m (without Karma it stays premium).\n\
             Hash       0x59a01cf17fc6ae6b03d26ed1a384205a15f7dfa4631309461ab991763fb78328\n\
             {\"takenAt\":1795396487,\"windowResetsAt\":1795478400,\"gasLimit\":\"0x5208\"}";
    let b = "refreshes at 2026-11-25 00:00:00 UTC, in 3h 1m (without Karma it stays premium).\n\
             Hash       0x0000000000000000000000000000000000000000000000000000000000000001\n\
             {\"takenAt\":1,\"windowResetsAt\":2,\"gasLimit\":\"0x5208\"}";
    assert_eq!(mask(a), mask(b));
    assert_ne!(mask(a), mask(&b.replace("0x5208", "0x5dc0")));
    assert_ne!(mask(a), mask(&b.replace("stays premium", "stays free")));
}
