//! moto's S3 server for the tests of a run on a bucket (`bucket.rs`, `faults.rs`).
//!
//! moto comes from PyPI (`moto[server]`), run by `LIFELINE_MOTO_PYTHON` (default `python3`;
//! CI gives it a venv of its own); without it these tests say so and pass, unless
//! `LIFELINE_REQUIRE_MOTO=1` (CI sets it) makes its absence a failure.

use run::store::Bucket;
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// moto's S3 server on a free loopback port, stopped when dropped.
pub struct Moto {
    child: Child,
    pub endpoint: String,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server with bucket `bucket` made, or `None` (said) where moto is not installed.
pub fn moto(bucket: &str) -> Option<Moto> {
    let python = std::env::var("LIFELINE_MOTO_PYTHON").unwrap_or_else(|_| "python3".into());
    let have = Command::new(&python)
        .args(["-c", "import moto.server"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !have {
        assert!(
            std::env::var("LIFELINE_REQUIRE_MOTO").as_deref() != Ok("1"),
            "LIFELINE_REQUIRE_MOTO=1 but {python} cannot import moto (pip install 'moto[server]')"
        );
        engine::testing::report_skip(&format!(
            "train/tests: the run on S3 ({python} cannot import moto: pip install 'moto[server]')"
        ));
        return None;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(&python)
        .args([
            "-m",
            "moto.server",
            "-H",
            "127.0.0.1",
            "-p",
            &port.to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Moto {
        child,
        endpoint: format!("http://127.0.0.1:{port}"),
    };
    let t0 = Instant::now();
    // Make the bucket with a plain PUT (moto checks no signature); it answers once it is up.
    loop {
        if let Some(reply) = plain_put(&format!("127.0.0.1:{port}"), bucket, "") {
            assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
            return Some(server);
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "moto did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A PUT of `body` to `/path` at `host` without a signature (moto checks none), the path sent
/// as it is: its reply, or `None` while nothing listens there.
fn plain_put(host: &str, path: &str, body: &str) -> Option<String> {
    let mut c = std::net::TcpStream::connect(host).ok()?;
    let length = body.len();
    write!(
        c,
        "PUT /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n{body}"
    )
    .unwrap();
    let mut reply = String::new();
    let _ = c.read_to_string(&mut reply);
    Some(reply)
}

impl Moto {
    /// Put an object by its raw (percent-encoded) path, as another S3 client could: keys our
    /// client would refuse to write go in as they are.
    pub fn put_raw(&self, path: &str) {
        let host = self.endpoint.trim_start_matches("http://");
        let reply = plain_put(host, path, "x").expect("moto answers");
        assert!(reply.starts_with("HTTP/1.1 200"), "{path}: {reply}");
    }

    /// The client settings of the tests, as the AWS tools' environment variables.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_ACCESS_KEY_ID", "test".into()),
            ("AWS_SECRET_ACCESS_KEY", "test".into()),
            ("AWS_REGION", "us-east-1".into()),
        ]
    }

    pub fn bucket(&self, url: &str) -> Arc<Bucket> {
        let env = self.env();
        let settings: Vec<(&str, &str)> = env
            .iter()
            .map(|(k, v)| (*k, v.as_str()))
            .map(|(k, v)| match k {
                "AWS_ENDPOINT_URL" => ("aws_endpoint", v),
                "AWS_ALLOW_HTTP" => ("aws_allow_http", v),
                "AWS_ACCESS_KEY_ID" => ("aws_access_key_id", v),
                "AWS_SECRET_ACCESS_KEY" => ("aws_secret_access_key", v),
                _ => ("aws_region", v),
            })
            .collect();
        Arc::new(Bucket::open_with(url, &settings).unwrap())
    }
}

/// The metadata of checkpoint `models/NAME` in `bucket`.
pub fn checkpoint_meta(bucket: &Bucket, name: &str) -> net::model::ModelMeta {
    let key = format!("models/{name}/meta.json");
    let bytes = bucket
        .get(&key)
        .unwrap()
        .unwrap_or_else(|| panic!("no {key}"))
        .0;
    serde_json::from_slice(&bytes).unwrap()
}
