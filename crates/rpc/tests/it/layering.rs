//! No import circle inside a crate. Between crates the compiler keeps the edges (`Cargo.toml`);
//! inside one, sibling modules could still import each other in a circle, so for every module
//! of every workspace crate this test builds the graph of its direct sub-modules (an edge when
//! any file under one names the other through a `crate::` or `super::` path, test code
//! excluded) and checks it has no cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module path from the crate root, e.g. `["rpc_server", "accept"]` (empty = the root).
type ModPath = Vec<String>;

/// Expands the `use`-style path starting at `src` (just after `crate::` or `super::`) into the
/// module paths it names: `a::{b::C, d}` gives `a::b::C` and `a::d`.
fn expand(src: &str) -> Vec<Vec<String>> {
    fn parse(chars: &[char], i: &mut usize) -> Vec<Vec<String>> {
        let mut prefix = Vec::new();
        let mut name = String::new();
        while *i < chars.len() {
            let c = chars[*i];
            if c.is_alphanumeric() || c == '_' {
                name.push(c);
                *i += 1;
            } else if c == ':' && chars.get(*i + 1) == Some(&':') {
                prefix.push(std::mem::take(&mut name));
                *i += 2;
            } else if c == '{' {
                *i += 1;
                let mut out = Vec::new();
                loop {
                    while *i < chars.len() && chars[*i].is_whitespace() {
                        *i += 1;
                    }
                    if *i >= chars.len() || chars[*i] == '}' {
                        *i += 1;
                        break;
                    }
                    for tail in parse(chars, i) {
                        out.push(prefix.iter().cloned().chain(tail).collect());
                    }
                    while *i < chars.len() && chars[*i] != ',' && chars[*i] != '}' {
                        *i += 1;
                    }
                    if *i < chars.len() && chars[*i] == ',' {
                        *i += 1;
                    }
                }
                return out;
            } else {
                break;
            }
        }
        if !name.is_empty() {
            prefix.push(name);
        }
        vec![prefix]
    }
    let chars: Vec<char> = src.chars().collect();
    parse(&chars, &mut 0)
}

/// The module paths a file at module `module` (a `mod.rs`/`lib.rs` is its directory's module)
/// names through `crate::` and `super::`, before its `#[cfg(test)]` module.
fn references(source: &str, module: &ModPath) -> Vec<ModPath> {
    let code: String = source
        .split("#[cfg(test)]")
        .next()
        .unwrap_or_default()
        .lines()
        // Comments (doc links included) import nothing.
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let code = code.as_str();
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        if code[..i].ends_with("super::") || code[..i].ends_with('$') {
            continue;
        }
        out.extend(expand(&code[i + "crate::".len()..]));
    }
    // `super::` names the parent of the file's module (a mod.rs is its directory's module).
    let parent_of_file: &[String] = module.split_last().map_or(&[], |(_, p)| p);
    for (i, _) in code.match_indices("super::") {
        if code[..i].ends_with("super::") {
            continue;
        }
        let mut base: Vec<String> = parent_of_file.to_vec();
        let mut rest = &code[i + "super::".len()..];
        while let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
        }
        for tail in expand(rest) {
            out.push(base.iter().cloned().chain(tail).collect());
        }
    }
    out
}

/// Every module of a crate (from its files) and the module paths each names.
fn crate_modules(src: &Path) -> BTreeMap<ModPath, Vec<ModPath>> {
    fn walk(dir: &Path, at: &ModPath, out: &mut BTreeMap<ModPath, Vec<ModPath>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                let mut sub = at.clone();
                sub.push(stem);
                walk(&path, &sub, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let is_dir_module = stem == "mod" || (stem == "lib" && at.is_empty());
                let module = if is_dir_module {
                    at.clone()
                } else {
                    let mut m = at.clone();
                    m.push(stem);
                    m
                };
                let refs = references(&std::fs::read_to_string(&path).unwrap(), &module);
                out.entry(module).or_default().extend(refs);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, &Vec::new(), &mut out);
    out
}

/// Cycles among the direct sub-modules of each module: `(parent, cycle member)`.
fn cycles(modules: &BTreeMap<ModPath, Vec<ModPath>>) -> Vec<String> {
    let mut found = Vec::new();
    let parents: BTreeSet<ModPath> = modules
        .keys()
        .filter_map(|m| m.split_last().map(|(_, p)| p.to_vec()))
        .collect();
    for parent in parents {
        let depth = parent.len();
        // child name -> the children it names
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (module, refs) in modules {
            if module.len() <= depth || module[..depth] != parent[..] {
                continue;
            }
            let child = &module[depth];
            let edges = graph.entry(child.clone()).or_default();
            for r in refs {
                if r.len() > depth && r[..depth] == parent[..] && &r[depth] != child {
                    edges.insert(r[depth].clone());
                }
            }
        }
        let known: BTreeSet<String> = graph.keys().cloned().collect();
        for edges in graph.values_mut() {
            edges.retain(|e| known.contains(e) && e != "test_utils");
        }
        for start in graph.keys() {
            let mut seen = BTreeSet::new();
            let mut stack: Vec<&String> = graph[start].iter().collect();
            while let Some(m) = stack.pop() {
                if m == start {
                    found.push(format!(
                        "crate::{} has {start} in a circle: {graph:?}",
                        parent.join("::")
                    ));
                    break;
                }
                if seen.insert(m.clone()) {
                    stack.extend(graph.get(m).into_iter().flatten());
                }
            }
        }
    }
    found
}

#[test]
fn no_crate_has_an_import_circle() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut checked = 0;
    for entry in std::fs::read_dir(&crates).unwrap() {
        let src = entry.unwrap().path().join("src");
        if !src.is_dir() {
            continue;
        }
        let modules = crate_modules(&src);
        let found = cycles(&modules);
        assert!(
            found.is_empty(),
            "import circle in {}: {found:#?}",
            src.display()
        );
        checked += 1;
    }
    assert!(
        checked >= 6,
        "found only {checked} crates under {}",
        crates.display()
    );
}

#[test]
fn the_checker_sees_sibling_circles() {
    let mut modules = BTreeMap::new();
    let m = |s: &str| s.split("::").map(str::to_owned).collect::<ModPath>();
    modules.insert(m("a::x"), references("use super::y::Y;", &m("a::x")));
    modules.insert(
        m("a::y"),
        references("use crate::a::{z::Z, w};", &m("a::y")),
    );
    modules.insert(
        m("a::z"),
        references("fn f() { crate::a::x::g() }", &m("a::z")),
    );
    assert_eq!(cycles(&modules).len(), 3, "{modules:?}");
    modules.insert(m("a::z"), references("use super::super::b;", &m("a::z")));
    assert!(cycles(&modules).is_empty(), "{modules:?}");
}
