//! How a study's files are written, whichever study made them: `OUT/NAME.json` with the
//! command that made it and what its intervals cover, `OUT/NAME.svg`, and `OUT/NAME.md`
//! ending with the command; then the pieces kept for a resume are removed
//! ([`crate::study::resume`]).

use crate::error::EvalError;
use crate::study::balance::INTERVALS;
use crate::study::ladder::{self, Convergence};
use std::path::Path;

/// The command line as a reader can paste it back into a shell.
pub fn command_line() -> String {
    std::env::args()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,".contains(c))
            {
                a
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Write `OUT/NAME.json` (with the study's name, the command and `intervals`), `.svg` and
/// `.md`; returns the Markdown.
pub(crate) fn write(
    out: &Path,
    name: &str,
    mut json: serde_json::Value,
    intervals: &str,
    svg: &str,
    md: &str,
) -> Result<String, EvalError> {
    let command = command_line();
    json["study"] = name.into();
    json["command"] = command.clone().into();
    json["intervals"] = intervals.into();
    let md = format!("{md}\nMade by `{command}`.\n");
    write_files(out, name, &json, svg, &md)?;
    // Every figure is in the files now: the pieces kept for a resume are not needed.
    crate::study::resume::forget(out);
    Ok(md)
}

/// A study's three files, `NAME.json` (pretty, the record) first, then its SVG and Markdown.
pub(crate) fn write_files(
    out: &Path,
    name: &str,
    json: &serde_json::Value,
    svg: &str,
    md: &str,
) -> Result<(), EvalError> {
    let text = serde_json::to_string_pretty(json).expect("studies serialise") + "\n";
    run::write_atomic(&out.join(format!("{name}.json")), text.as_bytes())?;
    run::write_atomic(&out.join(format!("{name}.svg")), svg.as_bytes())?;
    run::write_atomic(&out.join(format!("{name}.md")), md.as_bytes())?;
    Ok(())
}

/// [`write`] for a study judged over a ladder of players: its JSON gains the `convergence`,
/// and its Markdown opens with the ladder's headline and ends with its table.
pub(crate) fn write_with_ladder(
    out: &Path,
    name: &str,
    mut json: serde_json::Value,
    ladder: &[Convergence],
    svg: &str,
    md: &str,
) -> Result<String, EvalError> {
    json["convergence"] = serde_json::to_value(ladder).expect("convergence serialises");
    let md = ladder::headline(ladder) + md + &ladder::table(ladder);
    write(out, name, json, INTERVALS, svg, &md)
}

/// SVG pictures next to each other in one SVG (nested `<svg>` elements).
pub(crate) fn side_by_side(pictures: Vec<String>) -> String {
    let size = |svg: &str, attr: &str| -> f64 {
        svg.split(&format!("{attr}=\""))
            .nth(1)
            .and_then(|r| r.split('"').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    let (mut x, mut height, mut inner) = (0.0, 0.0f64, String::new());
    for p in &pictures {
        let (w, h) = (size(p, "width"), size(p, "height"));
        inner.push_str(&p.replacen("<svg ", &format!("<svg x=\"{x}\" y=\"0\" "), 1));
        x += w;
        height = height.max(h);
    }
    format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{x}\" height=\"{height}\">{inner}</svg>\n")
}
