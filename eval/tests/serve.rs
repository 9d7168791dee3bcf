//! `eval serve` as a client sees it: a scripted session over stdin and stdout, one response
//! per command line, errors that do not end the session.

use std::io::Write;
use std::process::{Command, Stdio};

#[test]
fn a_scripted_session_gets_one_response_per_command() {
    let dir = std::env::temp_dir().join(format!("eval-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("c.toml");
    std::fs::write(
        &config,
        "game = \"lifeline\"\n[options]\nsize = 3\nbalance = \"strong\"\n[search]\nvisits = 8\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_eval"))
        .args(["serve", "--model", "mcts:8", "--config"])
        .arg(&config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let script = "1 name\nprotocol_version\nplay a1\n2 play a1\nnonsense here\ngenmove\nanalyze\nundo\nshowboard\n3 quit\nname\n";
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let responses: Vec<&str> = text.split("\n\n").filter(|r| !r.is_empty()).collect();
    // Ten command lines before quit's own, and nothing after quit.
    assert_eq!(responses.len(), 10, "{text}");
    assert_eq!(responses[0], "=1 lifeline-zero");
    assert_eq!(responses[1], "= 1");
    assert_eq!(responses[2], "=");
    assert!(
        responses[3].starts_with("?2 "),
        "a1 again is illegal: {text}"
    );
    assert!(responses[4].starts_with("? unknown command"), "{text}");
    assert!(
        responses[5].starts_with("= ") && responses[5].len() > 2,
        "{text}"
    );
    let analysis: serde_json::Value = serde_json::from_str(&responses[6][2..]).unwrap();
    assert!(analysis["moves"].as_array().is_some_and(|m| !m.is_empty()));
    assert_eq!(responses[7], "=");
    assert!(
        responses[8].contains("ply 1"),
        "undo took back the generated move: {text}"
    );
    assert_eq!(responses[9], "=3");
    let _ = std::fs::remove_dir_all(&dir);
}
