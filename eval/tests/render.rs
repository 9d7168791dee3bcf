//! `eval render`: a game record becomes one SVG per position, a position one SVG; bad input is
//! an error naming the file.

use engine::Game;
use std::process::Command;

fn render(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_eval"))
        .arg("render")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn records_and_positions_are_drawn() {
    let dir = std::env::temp_dir().join(format!("eval-render-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let games = dir.join("games.jsonl");
    std::fs::write(
        &games,
        concat!(
            r#"{"game":"lifeline","options":{"size":3,"balance":"weak"},"actions":["c3","a1","e5"],"result":null}"#,
            "\n",
            r#"{"game":"lifeline","options":{"size":3,"balance":"weak"},"actions":["c3"],"result":null}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let o = render(&[games.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "games-000.svg",
            "games-001.svg",
            "games-002.svg",
            "games-003.svg"
        ]
    );
    let last = std::fs::read_to_string(out.join("games-003.svg")).unwrap();
    let doc = roxmltree::Document::parse(&last).unwrap();
    let stones = doc
        .descendants()
        .filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("stone")))
        .count();
    assert_eq!(stones, 3);
    // One position of Square Lifeline, described as the engine writes it.
    let config: engine::GameConfig =
        serde_json::from_str(r#"{"game":"square_lifeline","options":{"size":5}}"#).unwrap();
    let mut g = config.start().unwrap();
    for a in ["a1", "b2"] {
        let action = g.parse_action(a).unwrap();
        g.try_apply(action).unwrap();
    }
    let description = g.describe();
    let position = dir.join("position.json");
    let mut file = serde_json::to_value(&config).unwrap();
    file["position"] = description.clone();
    std::fs::write(&position, file.to_string()).unwrap();
    let o = render(&[position.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("position-")
        })
        .expect("the position's picture");
    let text = std::fs::read_to_string(svg).unwrap();
    let count = |key: &str| description[key].as_array().unwrap().len();
    assert_eq!(
        text.matches(r#"class="stone black""#).count(),
        count("black")
    );
    assert_eq!(
        text.matches(r#"class="stone white""#).count(),
        count("white")
    );
    assert!(count("black") + count("white") > 0);
    // Bad input: the file and what is wrong are named, nothing is drawn.
    let bad = dir.join("bad.jsonl");
    std::fs::write(
        &bad,
        r#"{"game":"lifeline","options":{"size":3,"balance":"weak"},"actions":["c3","c3"],"result":null}"#,
    )
    .unwrap();
    let o = render(&[bad.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("bad.jsonl"), "{e}");
    let o = render(&[
        games.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--game",
        "5",
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("holds 2 records"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
