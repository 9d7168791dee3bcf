//! `engine solve growth` as a user runs it: a short walk on side 3 writes its table, its fits,
//! growth.json and growth.svg; the table fitted again with `--rows` gives the same fits; a
//! damaged table is refused with its file and line named.

use std::path::Path;
use std::process::Command;

fn engine(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(args)
        .output()
        .expect("the engine binary runs")
}

/// A fresh folder of this test's own under the system's temporary folder.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("growth-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn fits(stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| l.starts_with("nodes:") || l.starts_with("strategy:"))
        .map(|l| l.split(", ").next().unwrap_or(l).to_string())
        .collect()
}

#[test]
fn a_walk_writes_its_report_and_its_table_fits_again_the_same() {
    let dir = scratch("walk");
    let out = dir.join("walk");
    let game = r#"{"game":"lifeline","options":{"size":3,"balance":"weak"}}"#;
    let walk = engine(&[
        "solve",
        "growth",
        "--game",
        game,
        "--games",
        "2",
        "--threads",
        "2",
        "--seconds",
        "2",
        "--table-mib",
        "16",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        walk.status.success(),
        "{}",
        String::from_utf8_lossy(&walk.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("growth.json")).unwrap()).unwrap();
    assert_eq!(report["opening_empty"], 18);
    let rows = report["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    let svg = std::fs::read_to_string(out.join("growth.svg")).unwrap();
    assert!(
        svg.matches("<circle").count() >= rows.len(),
        "every proved row is drawn"
    );

    let table = dir.join("walk.tsv");
    std::fs::write(&table, &walk.stdout).unwrap();
    let again = engine(&[
        "solve",
        "growth",
        "--game",
        game,
        "--rows",
        table.to_str().unwrap(),
    ]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    // The fits' factors and extrapolations (the rates differ: a fit again takes no time).
    assert_eq!(fits(&again.stdout), fits(&walk.stdout));
    assert_eq!(fits(&walk.stdout).len(), 2);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_damaged_table_is_refused_with_its_file_and_line() {
    let dir = scratch("damaged");
    let table = dir.join("damaged.tsv");
    std::fs::write(
        &table,
        "0\t20\t14\twhite\t27793\t921\t0.35\t79000\n0\t19\t15\twhite\tNaN\t1\t1\t1\n",
    )
    .unwrap();
    let run = engine(&["solve", "growth", "--rows", table.to_str().unwrap()]);
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        err.contains("damaged.tsv") && err.contains("line 2") && err.contains("nodes"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let none = engine(&[
        "solve",
        "growth",
        "--rows",
        Path::new("Cargo.toml").to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&none.stderr).contains("no rows"));
    std::fs::remove_dir_all(dir).unwrap();
}
