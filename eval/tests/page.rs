//! `eval serve --http`: the page and its command endpoint over real HTTP, bad requests
//! answered without ending the server, and (where chromium, chromedriver and selenium are
//! installed; CI installs them and sets LIFELINE_REQUIRE_BROWSER=1) the page driven in a
//! headless browser by scripts/page_test.py: moves by clicking, analysis, ownership, swap map.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The server, killed when the test ends however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One request on a fresh connection; the response's status line and body.
fn request(address: &str, raw: &str) -> (String, String) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.write_all(raw.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    )
}

fn command(address: &str, line: &str) -> serde_json::Value {
    let raw = format!(
        "POST /command HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{line}",
        line.len()
    );
    let (status, body) = request(address, &raw);
    assert!(status.contains("200"), "{line}: {status}");
    serde_json::from_str(&body).unwrap()
}

#[test]
fn the_page_plays_analyses_and_survives_bad_requests() {
    let dir = std::env::temp_dir().join(format!("eval-page-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let game: engine::GameConfig =
        serde_json::from_str(r#"{"game":"lifeline","options":{"size":3,"balance":"weak"}}"#)
            .unwrap();
    let net = selfplay::net::NetConfig::tiny();
    let device = selfplay::model::parse_device("cpu").unwrap();
    let model = dir.join("net");
    selfplay::model::Model::random(&game, &net, &device, 5)
        .unwrap()
        .save(&model)
        .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_eval"))
        .args(["serve", "--http", "127.0.0.1:0", "--model"])
        .arg(format!("{}@8", model.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let server = Server(child);
    let url = first
        .trim()
        .strip_prefix("serving the page on ")
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_string();
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();

    let (status, page) = request(&address, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(status.contains("200") && page.contains("<title>Lifeline Zero</title>"));
    assert_eq!(command(&address, "name")["text"], "lifeline-zero");
    assert_eq!(command(&address, "play c3")["ok"], true);
    let svg = command(&address, "svg");
    assert_eq!(
        svg["text"]
            .as_str()
            .unwrap()
            .matches(r#"class="stone "#)
            .count(),
        1
    );
    let illegal = command(&address, "play c3");
    assert_eq!(illegal["ok"], false, "{illegal}");
    // The page cannot end the server, nor send two commands at once.
    assert_eq!(command(&address, "quit")["ok"], false);
    assert_eq!(command(&address, "undo\nundo")["ok"], false);
    let (status, _) = request(&address, "GET /nowhere HTTP/1.1\r\n\r\n");
    assert!(status.contains("404"), "{status}");
    let (status, _) = request(&address, "DELETE / HTTP/1.1\r\n\r\n");
    assert!(status.contains("405"), "{status}");
    let (status, _) = request(&address, "garbage\r\n\r\n");
    assert!(status.contains("400"), "{status}");
    let (status, _) = request(
        &address,
        "POST /command HTTP/1.1\r\nContent-Length: 9999999\r\n\r\n",
    );
    assert!(status.contains("400"), "{status}");
    // Still serving, and the position is the one left by the commands above.
    assert_eq!(command(&address, "undo")["ok"], true);
    assert!(command(&address, "showboard")["text"]
        .as_str()
        .unwrap()
        .contains("ply 0"));

    let has_browser = Command::new("python3")
        .args(["-c", "import selenium"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        && ["chromium", "chromedriver"].iter().all(|b| {
            Command::new("sh")
                .args(["-c", &format!("command -v {b}")])
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
    if has_browser {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/page_test.py");
        let o = Command::new("python3")
            .arg(script)
            .arg(&url)
            .args(["--moves", "2", "--ownership", "--screenshot"])
            .arg(dir.join("page.png"))
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(dir.join("page.png").is_file());
    } else {
        assert!(
            std::env::var("LIFELINE_REQUIRE_BROWSER").is_err(),
            "a browser test is required but chromium, chromedriver or selenium is missing"
        );
        eprintln!("chromium/chromedriver/selenium not available: skipped the browser half");
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
