//! Finished practical studies judged again from their own games under today's definitions
//! (docs/studies.md), without replaying a game: one folder in place (`eval balance rejudge
//! DIR`), or several studies of one game into one (`eval balance combine --out OUT DIR...`),
//! whose convergence is then read over all their players. When a definition changes, the
//! committed studies follow it at no cost and say so; when a ladder gains a player, the
//! player's own study joins the earlier ones' instead of every player's games being replayed.
//!
//! What it trusts: the games and each class's interval in the studies' JSON, as the studies
//! wrote them. What it recomputes: the komi model from the games (the same bootstrap draws,
//! so only a changed definition changes it), each reference player's verdict
//! (`method_verdict`) and the convergence over the players. A player that was not a
//! reference player keeps its `n/a`. A rejudged JSON keeps the command that played the games
//! and gains `rejudged` (the command that recomputed them and the verdicts it replaced); a
//! combined one names the command that combined them and, under `combined_from`, each folder
//! and the command that played its games.

use super::convergence::converged;
use super::{komi_study, method_verdict, report, PlayerStudy, Verdict};
use crate::error::EvalError;
use crate::study::report::{command_line, write_files};
use std::path::{Path, PathBuf};

/// One study's JSON and its players, read whole.
struct Read {
    path: PathBuf,
    json: serde_json::Value,
    players: Vec<PlayerStudy>,
}

/// `dir/practical.json`, refused with one line naming the file unless it is a practical study.
fn read(dir: &Path) -> Result<Read, EvalError> {
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
            "{}: field `study` is {}, not \"practical\": only a practical study is judged again",
            path.display(),
            json["study"]
        )));
    }
    let players = serde_json::from_value(json["players"].take()).map_err(json_error)?;
    Ok(Read {
        path,
        json,
        players,
    })
}

/// The command that played a study's games, as its JSON records it.
fn made_by(json: &serde_json::Value) -> String {
    json["command"]
        .as_str()
        .unwrap_or("(no command recorded)")
        .to_string()
}

/// Every player's komi model refitted from its games and every reference player's verdict
/// recomputed; returns the verdicts replaced.
fn judge_again(players: &mut [PlayerStudy]) -> Vec<Verdict> {
    let before = players.iter().map(|s| s.verdict.clone()).collect();
    for s in players {
        s.komi = s
            .komi
            .take()
            .map(|k| komi_study(&s.classes, &k.komis, k.bootstrap_seed));
        if s.reference.is_reference() {
            s.verdict = method_verdict(&s.classes, s.classes_in_all, s.komi.as_ref());
        }
    }
    before
}

/// Whether the players are a komi pie's, as the study decided it from its game: a komi
/// pie's classes each carry their komi (measure.rs), a pie's none; one komi studied gives no
/// komi model but is still a komi pie.
fn komi_pie(players: &[PlayerStudy]) -> bool {
    players
        .iter()
        .any(|s| s.classes.iter().any(|c| c.komi.is_some()))
}

/// Recompute the verdicts and convergence of the practical study in `dir` and rewrite its
/// JSON, Markdown and SVG; returns the Markdown. Nothing is written when the study cannot be
/// read whole.
pub fn rejudge(dir: &Path) -> Result<String, EvalError> {
    let Read {
        mut json,
        mut players,
        ..
    } = read(dir)?;
    let made_by = made_by(&json);
    let before = judge_again(&mut players);
    let convergence = converged(&players, komi_pie(&players));
    let by = command_line();
    json["players"] = serde_json::to_value(&players).expect("studies serialise");
    json["convergence"] = serde_json::to_value(&convergence).expect("convergence serialises");
    json["rejudged"] = serde_json::json!({ "by": by, "verdicts_before": before });
    let md = format!(
        "{}\nMade by `{made_by}`; its verdicts and convergence recomputed from its games by `{by}` under the definitions of docs/studies.md.\n",
        report::markdown(&players, &convergence)
    );
    write_files(dir, "practical", &json, &report::svg(&players), &md)?;
    Ok(md)
}

/// The practical studies in `dirs`, of one game played the same way, judged again and
/// written as one study in `out` with the convergence over their players (those `only`
/// names, or all when it is empty); returns the Markdown. Refused, with nothing written,
/// when a study cannot be read, when the studies are of different games, sampling or komis,
/// when a chosen player appears twice, when `only` names a player no study holds or leaves
/// a study with none, or when `out` is one of them.
pub fn combine(dirs: &[PathBuf], out: &Path, only: &[String]) -> Result<String, EvalError> {
    if dirs.len() < 2 {
        return Err(EvalError::Config(format!(
            "combine takes at least two study folders (got {})",
            dirs.len()
        )));
    }
    // Written into one of its own inputs, the combined study would replace that player's own.
    let same = |dir: &PathBuf| match (dir.canonicalize(), out.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if let Some(dir) = dirs.iter().find(|d| same(d)) {
        return Err(EvalError::Config(format!(
            "--out {} is one of the studies combined ({}): its own study would be written over; name another folder",
            out.display(),
            dir.display()
        )));
    }
    let read: Vec<Read> = dirs.iter().map(|d| read(d)).collect::<Result<_, _>>()?;
    if let Some(r) = read.iter().find(|r| r.players.is_empty()) {
        return Err(EvalError::Config(format!(
            "{}: field `players` is empty",
            r.path.display()
        )));
    }
    let chosen = chosen(&read, only)?;
    let first = chosen[0].0;
    let mut players = of_one_game(&chosen)?;
    judge_again(&mut players);
    let convergence = converged(&players, komi_pie(&players));
    let command = command_line();
    let from: Vec<serde_json::Value> = dirs
        .iter()
        .zip(&read)
        .map(|(dir, r)| serde_json::json!({ "dir": dir, "command": made_by(&r.json) }))
        .collect();
    let json = serde_json::json!({
        "study": "practical",
        "command": command,
        "combined_from": from,
        "definitions": first.json["definitions"],
        "intervals": first.json["intervals"],
        "players": players,
        "convergence": convergence,
    });
    let played: String = dirs
        .iter()
        .zip(&read)
        .map(|(dir, r)| format!("- {}: `{}`\n", dir.display(), made_by(&r.json)))
        .collect();
    let md = format!(
        "{}\nCombined by `{command}` from the studies below, each player's verdict and the convergence recomputed from the games under the definitions of docs/studies.md:\n\n{played}",
        report::markdown(&players, &convergence)
    );
    std::fs::create_dir_all(out).map_err(|source| EvalError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    write_files(out, "practical", &json, &report::svg(&players), &md)?;
    Ok(md)
}

/// The players of `read` that `only` names, each beside its study, in the studies' order; all
/// of them when `only` is empty. A ladder's study may hold players a convergence leaves out
/// (a smaller budget, another seed), so the reader chooses them by name. Refused when a name
/// is in none of the studies (the names they hold are listed), and when a study gives none
/// of the names: it would be listed among those combined while adding nothing.
fn chosen<'a>(
    read: &'a [Read],
    only: &[String],
) -> Result<Vec<(&'a Read, &'a PlayerStudy)>, EvalError> {
    let named = |s: &PlayerStudy| only.is_empty() || only.contains(&s.reference.player);
    let names = |r: &Read| {
        let names: Vec<&str> = r
            .players
            .iter()
            .map(|s| s.reference.player.as_str())
            .collect();
        names.join(", ")
    };
    let held = |name: &String| {
        read.iter()
            .flat_map(|r| &r.players)
            .any(|s| &s.reference.player == name)
    };
    if let Some(missing) = only.iter().find(|name| !held(name)) {
        let all: Vec<String> = read
            .iter()
            .map(|r| format!("{} holds {}", r.path.display(), names(r)))
            .collect();
        return Err(EvalError::Config(format!(
            "--player {missing} is in none of the studies combined ({})",
            all.join("; ")
        )));
    }
    if let Some(r) = read.iter().find(|r| !r.players.iter().any(named)) {
        return Err(EvalError::Config(format!(
            "{}: none of its players ({}) is named by --player: leave the folder out or name one",
            r.path.display(),
            names(r)
        )));
    }
    Ok(read
        .iter()
        .flat_map(|r| {
            r.players
                .iter()
                .filter(move |s| named(s))
                .map(move |s| (r, s))
        })
        .collect())
}

/// The chosen players, each once, refused with the file and field named unless all are of the
/// first one's game, sampling and komis: only then are their figures one ladder's.
fn of_one_game(chosen: &[(&Read, &PlayerStudy)]) -> Result<Vec<PlayerStudy>, EvalError> {
    let (first, model) = chosen[0];
    let komis = |s: &PlayerStudy| s.komi.as_ref().map(|k| k.komis.clone());
    let mut players: Vec<PlayerStudy> = Vec::new();
    for &(r, s) in chosen {
        let differs = |field: &str, theirs: String, ours: String| {
            EvalError::Config(format!(
                "{}: player {}'s field `{field}` is {theirs}, but {} has {ours}: only studies of one game played the same way are combined",
                r.path.display(),
                s.reference.player,
                first.path.display()
            ))
        };
        if s.game != model.game {
            return Err(differs("game", s.game.clone(), model.game.clone()));
        }
        if s.sampling != model.sampling {
            return Err(differs(
                "sampling",
                s.sampling.clone(),
                model.sampling.clone(),
            ));
        }
        if komis(s) != komis(model) {
            let show = |k: Option<Vec<u32>>| format!("{k:?}");
            return Err(differs("komi.komis", show(komis(s)), show(komis(model))));
        }
        if players
            .iter()
            .any(|p| p.reference.player == s.reference.player)
        {
            return Err(EvalError::Config(format!(
                "{}: player {} is already in another study combined: each player once",
                r.path.display(),
                s.reference.player
            )));
        }
        players.push(s.clone());
    }
    Ok(players)
}
