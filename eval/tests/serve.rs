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

/// `eval serve` on the side-3 strong game with `args`, its stdin and stdout piped.
fn server(dir: &std::path::Path, args: &[&str]) -> std::process::Child {
    std::fs::create_dir_all(dir).unwrap();
    let config = dir.join("c.toml");
    std::fs::write(
        &config,
        "game = \"lifeline\"\n[options]\nsize = 3\nbalance = \"strong\"\n[search]\nvisits = 8\n",
    )
    .unwrap();
    Command::new(env!("CARGO_BIN_EXE_eval"))
        .args(["serve", "--config"])
        .arg(&config)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The next response (up to its empty line) on `out`.
fn response(out: &mut impl std::io::BufRead) -> String {
    let mut text = String::new();
    loop {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "ended after {text:?}"
        );
        if line == "\n" {
            return text;
        }
        text += &line;
    }
}

#[test]
fn a_stop_line_ends_a_long_search_and_a_signal_ends_the_server() {
    let dir = std::env::temp_dir().join(format!("eval-serve-stop-{}", std::process::id()));
    let mut child = server(&dir, &["--model", "mcts:8"]);
    let mut input = child.stdin.take().unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    // A search of a million visits, stopped by the line after it: it answers with a move.
    input
        .write_all(b"visits 1000000\n1 genmove\n2 stop\n")
        .unwrap();
    assert_eq!(response(&mut out), "=\n");
    let moved = response(&mut out);
    assert!(moved.starts_with("=1 ") && moved.len() > 4, "{moved}");
    assert_eq!(response(&mut out), "=2\n");
    // The input is still open: only the signal ends the server, and the first one does.
    let pid = child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    let mut waited = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(waited < 600, "SIGTERM did not end eval serve");
        std::thread::sleep(std::time::Duration::from_millis(50));
        waited += 1;
    };
    assert!(!status.success(), "ended by the signal: {status:?}");
    drop(input);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_player_no_tree_can_hold_and_a_public_address_are_refused_at_the_start() {
    let dir = std::env::temp_dir().join(format!("eval-serve-refuse-{}", std::process::id()));
    let refused = |args: &[&str]| {
        let out = server(&dir, args).wait_with_output().unwrap();
        assert!(!out.status.success(), "{args:?} was accepted");
        String::from_utf8(out.stderr).unwrap()
    };
    let huge = refused(&["--model", "mcts:4294967295"]);
    assert!(
        huge.contains("4294967295 visits") && huge.contains("--tree-memory-mb"),
        "{huge}"
    );
    let public = refused(&["--model", "mcts:8", "--http", "0.0.0.0:0"]);
    assert!(public.contains("--allow-remote"), "{public}");
    let _ = std::fs::remove_dir_all(&dir);
}
