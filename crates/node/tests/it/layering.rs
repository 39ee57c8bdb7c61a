//! The module graph of `l2node-node` points one way: no top-level module reaches itself through
//! `crate::` paths (test code excluded), and `node.rs` (wiring) is imported by nobody.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `crate::x` names used by `source`, before its `#[cfg(test)]` module.
fn crate_refs(source: &str) -> BTreeSet<String> {
    let code = source.split("#[cfg(test)]").next().unwrap_or_default();
    let mut refs = BTreeSet::new();
    // `crate::x::...` paths.
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a::.., b, c::{..}}`: the top-level names of the group.
            let (mut depth, mut name, mut at_top) = (0, String::new(), true);
            for ch in group.chars() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        if !name.is_empty() {
                            refs.insert(std::mem::take(&mut name));
                        }
                        at_top = true;
                    }
                    c if depth == 0 && at_top && (c.is_alphanumeric() || c == '_') => name.push(c),
                    _ if depth == 0 && !name.is_empty() => {
                        refs.insert(std::mem::take(&mut name));
                        at_top = false;
                    }
                    _ => {}
                }
            }
            if !name.is_empty() {
                refs.insert(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            refs.insert(name);
        }
    }
    refs
}

fn collect(dir: &Path, top: Option<&str>, graph: &mut BTreeMap<String, BTreeSet<String>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let module = top.map(str::to_owned).unwrap_or(stem);
        if path.is_dir() {
            collect(&path, Some(&module), graph);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let refs = crate_refs(&std::fs::read_to_string(&path).unwrap());
            graph.entry(module).or_default().extend(refs);
        }
    }
}

#[test]
fn module_graph_has_no_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph = BTreeMap::new();
    collect(&src, None, &mut graph);
    for deps in graph.values_mut() {
        deps.retain(|d| d != "test_utils");
    }
    for (module, deps) in graph.iter_mut() {
        deps.remove(module);
    }
    // Sanity: the parser sees the edges that exist.
    assert!(graph["rpc"].contains("chain"), "{graph:?}");
    assert!(graph["storage"].contains("trie"), "{graph:?}");
    assert!(graph["miner"].contains("pool"), "{graph:?}");
    let importers_of_node: Vec<_> = graph.iter().filter(|(_, d)| d.contains("node")).collect();
    assert!(
        importers_of_node.is_empty(),
        "node.rs is imported: {importers_of_node:?}"
    );
    for start in graph.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&String> = graph[start].iter().collect();
        while let Some(m) = stack.pop() {
            assert_ne!(m, start, "cycle through `{start}` in {graph:?}");
            if seen.insert(m.clone()) {
                stack.extend(graph.get(m).into_iter().flatten());
            }
        }
    }
}
