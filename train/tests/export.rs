//! Weight export: every parameter under its module path, metadata, and an example that another
//! implementation (ONNX through scripts/export_onnx.py) reproduces.

use burn::tensor::Device;
use engine::GameConfig;
use ndarray::ArrayD;
use ndarray_npy::NpzReader;
use selfplay::model::Model;
use selfplay::net::NetConfig;
use std::path::PathBuf;

#[test]
fn exported_weights_are_named_and_reproducible_in_onnx() {
    let game: GameConfig =
        serde_json::from_str(r#"{"game":"lifeline","options":{"size":4}}"#).unwrap();
    let net = NetConfig {
        blocks: 2,
        channels: 8,
        head_channels: 4,
        value_hidden: 8,
        pool_every: 2,
    };
    let model = Model::random(&game, &net, &Device::flex(), 3).unwrap();
    let dir = std::env::temp_dir().join(format!("lifeline-zero-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("model.npz");
    let n = train::export::export(&model, &out).unwrap();
    let params = train::export::parameters(&model.for_inference());
    assert_eq!(n, params.len());
    let mut npz = NpzReader::new(std::fs::File::open(&out).unwrap()).unwrap();
    let names = npz.names().unwrap();
    for expected in [
        "param/stem.conv.weight",
        "param/stem.norm.running_var",
        "param/blocks.1.pool.weight",
        "param/policy_cells.bias",
        "param/value_out.weight",
        "meta",
        "example/input",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    assert!(
        !names.iter().any(|n| n.starts_with("param/blocks.0.pool")),
        "block 0 has no pooling with pool_every = 2"
    );
    let stem: ArrayD<f32> = npz.by_name("param/stem.conv.weight").unwrap();
    let planes = engine::Game::num_planes(&game.start().unwrap());
    assert_eq!(stem.shape(), &[8, planes, 3, 3]);
    let (_, _, data) = params.iter().find(|p| p.0 == "stem.conv.weight").unwrap();
    assert_eq!(
        stem.iter().copied().collect::<Vec<_>>(),
        *data,
        "the stored values are the model's"
    );

    // Another implementation reproduces burn's outputs from the file alone.
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/export_onnx.py");
    let has_onnx = std::process::Command::new("python3")
        .args(["-c", "import onnx, onnxruntime"])
        .status()
        .is_ok_and(|s| s.success());
    if has_onnx {
        let o = std::process::Command::new("python3")
            .arg(&script)
            .arg(&out)
            .arg(dir.join("model.onnx"))
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(dir.join("model.onnx").is_file());
    } else {
        assert!(
            std::env::var("LIFELINE_REQUIRE_ONNX").is_err(),
            "onnx and onnxruntime are required but python3 cannot import them"
        );
        eprintln!("onnx/onnxruntime not available: skipped the ONNX half of this test");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
