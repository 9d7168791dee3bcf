//! `eval balance rejudge DIR`: a finished practical study's verdicts and convergence
//! recomputed from its own games under today's definitions (docs/studies.md), without
//! replaying a game. When a definition changes, the committed studies follow it at no cost
//! and say so: the JSON keeps the command that played the games, gains `rejudged` (the
//! command that recomputed them and the verdicts it replaced), and the Markdown names both.
//!
//! What it trusts: the games and each class's interval in the study's JSON, as the study
//! wrote them. What it recomputes: the komi model from the games (the same bootstrap draws,
//! so only a changed definition changes it), each reference player's verdict
//! (`method_verdict`) and the convergence over the players. A player that was not a
//! reference player keeps its `n/a`.

use super::convergence::converged;
use super::{komi_study, method_verdict, report, PlayerStudy, Verdict};
use crate::error::EvalError;
use crate::study::report::{command_line, write_files};
use std::path::Path;

/// Recompute the verdicts and convergence of the practical study in `dir` and rewrite its
/// JSON, Markdown and SVG; returns the Markdown. Nothing is written when the study cannot be
/// read whole.
pub fn rejudge(dir: &Path) -> Result<String, EvalError> {
    let path = dir.join("practical.json");
    let text = std::fs::read_to_string(&path).map_err(|source| EvalError::Io {
        path: path.clone(),
        source,
    })?;
    let json_error = |source| EvalError::Json {
        path: path.clone(),
        source,
    };
    let mut json: serde_json::Value = serde_json::from_str(&text).map_err(json_error)?;
    if json["study"] != "practical" {
        return Err(EvalError::Config(format!(
            "{}: field `study` is {}, not \"practical\": only a practical study is rejudged",
            path.display(),
            json["study"]
        )));
    }
    let made_by = json["command"]
        .as_str()
        .unwrap_or("(no command recorded)")
        .to_string();
    let mut studies: Vec<PlayerStudy> =
        serde_json::from_value(json["players"].take()).map_err(json_error)?;
    let before: Vec<Verdict> = studies.iter().map(|s| s.verdict.clone()).collect();
    for s in &mut studies {
        s.komi = s
            .komi
            .take()
            .map(|k| komi_study(&s.classes, &k.komis, k.bootstrap_seed));
        if s.reference.is_reference() {
            s.verdict = method_verdict(&s.classes, s.classes_in_all, s.komi.as_ref());
        }
    }
    // As the study decided it from its game: a komi pie's classes each carry their komi
    // (measure.rs), a pie's none; one komi studied gives no komi model but is still a komi pie.
    let komi_pie = studies
        .iter()
        .any(|s| s.classes.iter().any(|c| c.komi.is_some()));
    let convergence = converged(&studies, komi_pie);
    let by = command_line();
    json["players"] = serde_json::to_value(&studies).expect("studies serialise");
    json["convergence"] = serde_json::to_value(&convergence).expect("convergence serialises");
    json["rejudged"] = serde_json::json!({ "by": by, "verdicts_before": before });
    let md = format!(
        "{}\nMade by `{made_by}`; its verdicts and convergence recomputed from its games by `{by}` under the definitions of docs/studies.md.\n",
        report::markdown(&studies, &convergence)
    );
    write_files(dir, "practical", &json, &report::svg(&studies), &md)?;
    Ok(md)
}
