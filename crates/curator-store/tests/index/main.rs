//! Index tests over real memory roots in temp folders (agent-qa-memory §3; issue 3 "Must show").
//!
//! `phrase`: agent-qa's phrase mode, every example of §3.3 and the worked example's numbers.
//! `suite`: §3.2 scoping, snapshot and position rules. `refresh`: files added, rewritten in
//! place, deleted; problem files; a corrupt index. `terms`: curator's default mode.
//! `phrase_in_terms`: what phrase mode injects, terms mode injects too (issue 14).

mod duplicates;
mod phrase;
mod phrase_in_terms;
mod refresh;
mod suite;
mod symlinks;
mod terms;
mod util;
mod watch;
