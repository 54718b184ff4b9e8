//! What the documentation cites exists (issue 15): every relative link of README.md, docs/ and
//! the eval READMEs names a file of this repository, and no user-facing text — those documents,
//! any `--help`, any message in the sources — cites a section (`§…`) of a spec the repository
//! does not hold. A rule worth citing has its page under docs/rules/.

use std::path::{Path, PathBuf};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Files under `dir` (recursively) whose name satisfies `keep`, skipping hidden folders, build
/// output and node_modules.
fn files(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if path.is_dir() {
            if name.starts_with('.') || name == "target" || name == "node_modules" {
                continue;
            }
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if keep(&path) {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The documents a user reads.
fn documents() -> Vec<PathBuf> {
    let mut docs = vec![repo().join("README.md")];
    docs.extend(files(&repo().join("docs"), &|p| p.extension().is_some_and(|e| e == "md")));
    docs.extend(files(&repo().join("eval"), &|p| p.file_name().is_some_and(|n| n == "README.md")));
    docs
}

/// The targets of the markdown links `[text](target)` in `text`.
fn link_targets(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            out.push(&rest[..end]);
            rest = &rest[end..];
        }
    }
    out
}

#[test]
fn relative_links_of_the_documents_name_files_of_the_repository() {
    let mut broken = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for target in link_targets(&text) {
            let target = target.split_whitespace().next().unwrap_or_default();
            if target.is_empty()
                || target.starts_with('#')
                || target.contains("://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            let file = target.split('#').next().unwrap_or_default();
            if !doc.parent().unwrap().join(file).exists() {
                broken.push(format!("{}: {target}", doc.strip_prefix(repo()).unwrap().display()));
            }
        }
    }
    assert!(broken.is_empty(), "links to files that do not exist:\n{}", broken.join("\n"));
}

#[test]
fn documents_and_messages_cite_no_spec_section() {
    let mut found = Vec::new();
    for doc in documents() {
        for (n, line) in std::fs::read_to_string(&doc).unwrap().lines().enumerate() {
            if line.contains('§') {
                found.push(format!(
                    "{}:{}: {line}",
                    doc.strip_prefix(repo()).unwrap().display(),
                    n + 1
                ));
            }
        }
    }
    // Messages live in string literals; comments are for the developers of this repository.
    let sources = files(&repo().join("src"), &|p| p.extension().is_some_and(|e| e == "rs"))
        .into_iter()
        .chain(files(&repo().join("crates"), &|p| {
            p.extension().is_some_and(|e| e == "rs")
                && p.components().any(|c| c.as_os_str() == "src")
        }));
    for file in sources {
        for (n, line) in std::fs::read_to_string(&file).unwrap().lines().enumerate() {
            // (`--help` texts, which are doc comments, are checked by running the binary.)
            let code = line.trim_start();
            if !code.starts_with("//") && code.contains('§') {
                found.push(format!(
                    "{}:{}: {line}",
                    file.strip_prefix(repo()).unwrap().display(),
                    n + 1
                ));
            }
        }
    }
    assert!(found.is_empty(), "spec sections cited where users read them:\n{}", found.join("\n"));
}

/// The subcommands clap lists under "Commands:" in one help text.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A wrapped description continues deeper than the two spaces before a name.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|c| c != "help")
        .collect()
}

#[test]
fn help_texts_cite_no_spec_section() {
    let bin = env!("CARGO_BIN_EXE_curator");
    let help = |args: &[String]| {
        let out = std::process::Command::new(bin).args(args).arg("--help").output().unwrap();
        assert!(out.status.success(), "curator {args:?} --help failed");
        String::from_utf8(out.stdout).unwrap()
    };
    // Every command and subcommand, breadth first.
    let mut queue: Vec<Vec<String>> = vec![Vec::new()];
    let mut seen = 0;
    while let Some(args) = queue.pop() {
        let text = help(&args);
        assert!(
            !text.contains('§'),
            "curator {} --help cites a spec section:\n{text}",
            args.join(" ")
        );
        seen += 1;
        for sub in subcommands(&text) {
            let mut next = args.clone();
            next.push(sub);
            queue.push(next);
        }
    }
    assert!(seen > 20, "only {seen} help texts found");
}
