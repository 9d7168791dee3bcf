//! The study's Markdown (per player: who it is, the verdict, the komi figures and the table of
//! classes; then the convergence), its SVG (win rates with their intervals, the near-even band
//! shaded), and what its intervals cover.

use super::convergence::Convergence;
use super::measure::ClassGames;
use super::reference::Reference;
use super::{class_label, KomiStudy, PlayerStudy, BOOTSTRAP, EVEN_BAND};
use crate::score::Estimate;
use std::fmt::Write as _;

/// What the study's intervals cover, and what they do not.
pub(crate) const INTERVALS: &str = "95%. A class's win rate has a Wilson interval over its distinct games (one distinct game included, so a single deterministic game decides nothing); with sequential stopping it is approximate. The fair komi's and Black's best's come from 200 bootstrap refits of the pooled logistic, each resampling the distinct games of every (class, komi) cell; the fair komi's always holds the integer komis around it. They cover the sampling of this player's games, not its mistakes: convergence over reference players of other budgets and seeds, and the solver where it reaches, speak to those.";

fn show_opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("–".into(), |v| format!("{v:+.digits$}"))
}

/// The study in Markdown: per player, who it is, the verdict, the komi figures and the table
/// of classes; then the convergence.
pub(crate) fn markdown(studies: &[PlayerStudy], converged: &Convergence) -> String {
    let mut md = String::new();
    for s in studies {
        let _ = writeln!(md, "## {} by {}\n", s.game, s.reference.player);
        let _ = writeln!(md, "**Verdict: {}**\n", s.verdict);
        reference_md(&mut md, &s.reference);
        if let Some([right, of]) = s.cells_right {
            let _ = writeln!(
                md,
                "\nAgainst the solver: {right} of {of} cells on its side of one half."
            );
        }
        if let Some(k) = s.kappa {
            let _ = writeln!(
                md,
                "Cohen's κ of the swap categories against the solver: {k:.2} (of the point estimates alone: {}).",
                show_opt(s.sign_kappa, 2)
            );
        }
        if !s.against_the_solver.is_empty() {
            let _ = writeln!(
                md,
                "Decided against the solver (the other side's mistakes): {}.",
                s.against_the_solver.join(", ")
            );
        }
        if let Some(k) = &s.komi {
            komi_md(&mut md, k);
        }
        classes_md(&mut md, &s.classes);
        let _ = writeln!(md, "\nSampling: {}.\n", s.sampling);
    }
    let _ = writeln!(md, "## Convergence over the players\n\n{converged}");
    md
}

/// Who measured: the player, what it is, and its results against each anchor.
fn reference_md(md: &mut String, r: &Reference) {
    let kind = match &r.not_reference {
        None => "a reference player".to_string(),
        Some(why) => format!("not a reference player ({why})"),
    };
    let _ = writeln!(
        md,
        "Player: {} (step {}, samples {}, weights {}), {kind}.",
        r.player,
        r.step.map_or("–".into(), |v| v.to_string()),
        r.samples.map_or("–".into(), |v| v.to_string()),
        r.weights_checksum.as_deref().unwrap_or("–")
    );
    for a in &r.anchors {
        let _ = writeln!(
            md,
            "- against {}: +{} ={} -{}, score {}, Elo {:+.0} [{:+.0}, {:+.0}]",
            a.anchor,
            a.wins,
            a.draws,
            a.losses,
            a.score.show(),
            a.elo.estimate,
            a.elo.lo,
            a.elo.hi
        );
    }
}

/// The table of every class measured.
fn classes_md(md: &mut String, classes: &[ClassGames]) {
    let _ = writeln!(md, "\n| opening | komi | games | distinct | win rate [95%] | category | search value | value head | solver |");
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|");
    for c in classes {
        let _ = writeln!(
            md,
            "| {} | {} | {}{} | {} | {} | {:?} | {:+.2} | {} | {} |",
            c.opening,
            c.komi.map_or("–".into(), |k| k.to_string()),
            c.games,
            if c.stopped_early { " (stopped)" } else { "" },
            c.outcomes.len(),
            c.win_rate.show(),
            c.category,
            c.search_value,
            show_opt(c.value_head, 2),
            c.exact_win.map_or("–", |w| if w { "win" } else { "loss" }),
        );
    }
}

fn komi_md(md: &mut String, k: &KomiStudy) {
    let Some(m) = &k.model else {
        let _ = writeln!(md, "\nThe komi model could not be fitted.");
        return;
    };
    let show = |e: Option<Estimate>| {
        e.map_or("n/a (no crossing, or its interval open)".into(), |e| {
            format!("{:.2} [{:.2}, {:.2}]", e.estimate, e.lo, e.hi)
        })
    };
    let _ = writeln!(
        md,
        "\nFair komi (pooled logistic, slope {:.2} per komi point, {} of {BOOTSTRAP} refits flat): **{}** by the band over the classes in contention; {} by the percentiles of the refits' crossings (leans up where classes tie); the value head's own crossing: {}.",
        m.fit.slope,
        m.flat_refits,
        show(m.fair_komi_band),
        show(m.fair_komi),
        k.value_head_fair_komi.map_or("none".into(), |v| format!("{v:.2}"))
    );
    let _ = writeln!(
        md,
        "\n| komi | Black's best (model) [95%] | single best class (diagnostic) |"
    );
    let _ = writeln!(md, "|---|---|---|");
    for (komi, e) in &m.best {
        let single = k
            .single_class_max
            .iter()
            .find(|(studied, _)| studied == komi);
        let single = single.map_or(
            "not studied: the model's read between two studied komis".into(),
            |(_, s)| format!("{s:.3}"),
        );
        let _ = writeln!(md, "| {komi} | {} | {single} |", e.show());
    }
}

/// Win rates with their intervals, the near-even band shaded: Black's best by komi under the
/// komi pie (with the value head's crossing marked), every class's win rate under a pie.
pub(crate) fn svg(studies: &[PlayerStudy]) -> String {
    let (w, h, left, top, bottom) = (640.0, 360.0, 50.0, 40.0, 50.0);
    let rows = studies.len().max(1) as f64;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{}" font-family="sans-serif">"#,
        h * rows
    );
    for (i, st) in studies.iter().enumerate() {
        let y0 = h * i as f64;
        let points: Vec<(String, Estimate)> = match st.komi.as_ref().and_then(|k| k.model.as_ref())
        {
            Some(m) => m.best.iter().map(|(k, e)| (k.to_string(), *e)).collect(),
            None => st
                .classes
                .iter()
                .map(|c| (class_label(c), c.win_rate))
                .collect(),
        };
        let plot_h = h - top - bottom;
        let y = |p: f64| y0 + top + (1.0 - p) * plot_h;
        let step = (w - left - 20.0) / points.len().max(1) as f64;
        let _ = write!(
            s,
            r##"<text x="8" y="{:.1}" font-size="13">{} by {}: {}</text><rect x="{left}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#eee"/><line x1="{left}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="gray"/>"##,
            y0 + 18.0,
            crate::render::esc(&st.game),
            crate::render::esc(&st.reference.player),
            crate::render::esc(&st.verdict.to_string().chars().take(70).collect::<String>()),
            y(EVEN_BAND.1),
            w - left - 20.0,
            y(EVEN_BAND.0) - y(EVEN_BAND.1),
            w - 20.0,
            y(0.5),
            y(0.5),
        );
        for (j, (label, e)) in points.iter().enumerate() {
            let x = left + step * (j as f64 + 0.5);
            let _ = write!(
                s,
                r#"<line x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}" stroke="black"/><circle cx="{x:.1}" cy="{:.1}" r="3"/><text x="{x:.1}" y="{:.1}" font-size="9" text-anchor="middle">{}</text>"#,
                y(e.lo),
                y(e.hi),
                y(e.estimate),
                y(0.0) + 14.0,
                crate::render::esc(label)
            );
        }
        for p in [0.0, 0.5, 1.0] {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}" font-size="9" text-anchor="end">{p}</text>"#,
                left - 4.0,
                y(p) + 3.0
            );
        }
    }
    s.push_str("</svg>\n");
    s
}
