//! Weight export: every parameter under its module path, metadata, and an example that another
//! implementation (ONNX through scripts/export_onnx.py) reproduces.

use burn::tensor::Device;
use engine::GameConfig;
use ndarray::ArrayD;
use ndarray_npy::NpzReader;
use net::model::Model;
use net::network::NetConfig;
use std::path::PathBuf;

/// A random two-block network for Lifeline side 4.
fn small_model(seed: u64) -> (GameConfig, Model) {
    let game: GameConfig =
        serde_json::from_str(r#"{"game":"lifeline","options":{"size":4}}"#).unwrap();
    let net = NetConfig {
        blocks: 2,
        channels: 8,
        head_channels: 4,
        value_hidden: 8,
        pool_every: 2,
    };
    let model = Model::random(&game, &net, &Device::flex(), seed).unwrap();
    (game, model)
}

#[test]
fn exported_weights_are_named_and_reproducible_in_onnx() {
    let (game, model) = small_model(3);
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
    if python_has("onnx, onnxruntime", "LIFELINE_REQUIRE_ONNX") {
        let onnx = dir.join("model.onnx");
        run_script("export_onnx.py", &[&out, &onnx]);
        assert!(onnx.is_file());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn safetensors_hold_exactly_the_parameters_in_pytorch_names_and_layouts() {
    let (_, model) = small_model(5);
    let dir = std::env::temp_dir().join(format!("lifeline-zero-st-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("model.safetensors");
    let n = train::export::export_safetensors(&model, &out).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    let len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    assert_eq!(len % 8, 0, "the data starts aligned");
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + len]).unwrap();
    let data = &bytes[8 + len..];
    let burn = train::export::parameters(&model.for_inference());
    let torch = train::export::torch_parameters(&model.for_inference());
    assert_eq!(n, burn.len());
    let header = header.as_object().unwrap();
    assert_eq!(
        header.len(),
        burn.len() + 1,
        "the parameters and the metadata, nothing else"
    );
    let meta: serde_json::Value =
        serde_json::from_str(header["__metadata__"]["lifeline_zero"].as_str().unwrap()).unwrap();
    assert_eq!(meta["game"]["game"], "lifeline");
    assert_eq!(meta["network"]["channels"], 8);
    let mut spans = Vec::new();
    for (name, shape, values) in &torch {
        let t = &header[name];
        assert_eq!(t["dtype"], "F32");
        let offsets: Vec<usize> = serde_json::from_value(t["data_offsets"].clone()).unwrap();
        spans.push((offsets[0], offsets[1]));
        let stored: Vec<f32> = data[offsets[0]..offsets[1]]
            .chunks(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(&stored, values, "{name}");
        assert_eq!(
            serde_json::from_value::<Vec<usize>>(t["shape"].clone()).unwrap(),
            *shape
        );
    }
    // In whatever order the writer chose, the tensors tile the data: no gap, no overlap.
    spans.sort();
    let mut end = 0;
    for (start, stop) in spans {
        assert_eq!(start, end, "tensors follow each other");
        end = stop;
    }
    assert_eq!(end, data.len(), "no bytes after the last tensor");
    // PyTorch's names: batch norm weight and bias, no gamma or beta.
    assert!(header.contains_key("stem.norm.weight") && header.contains_key("stem.norm.bias"));
    assert!(!header
        .keys()
        .any(|k| k.ends_with(".gamma") || k.ends_with(".beta")));
    // Linear weights are (out, in): the transpose of burn's (in, out).
    let (_, bshape, bvalues) = burn.iter().find(|p| p.0 == "value_out.weight").unwrap();
    let (_, tshape, tvalues) = torch.iter().find(|p| p.0 == "value_out.weight").unwrap();
    assert_eq!((tshape[0], tshape[1]), (bshape[1], bshape[0]));
    for r in 0..bshape[0] {
        for c in 0..bshape[1] {
            assert_eq!(tvalues[c * bshape[0] + r], bvalues[r * bshape[1] + c]);
        }
    }
    // The `safetensors` package reads it as the npz export's parameters (CI installs it and
    // sets LIFELINE_REQUIRE_SAFETENSORS=1).
    if python_has("numpy, safetensors", "LIFELINE_REQUIRE_SAFETENSORS") {
        let npz = dir.join("model.npz");
        train::export::export(&model, &npz).unwrap();
        // With onnx and onnxruntime, the ONNX export of the same weights too: its
        // initializers must be the safetensors tensors.
        if python_has("onnx, onnxruntime", "LIFELINE_REQUIRE_ONNX") {
            let onnx = dir.join("model.onnx");
            run_script("export_onnx.py", &[&npz, &onnx]);
            run_script("check_export.py", &[&npz, &out, &onnx]);
        } else {
            run_script("check_export.py", &[&npz, &out]);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether python3 can import `modules`. Where it cannot, the variable `required_by` (which CI
/// sets) must be unset: the Python half of a test may skip itself only where it is optional.
fn python_has(modules: &str, required_by: &str) -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-c", &format!("import {modules}")])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var(required_by).is_err(),
            "{required_by} is set but python3 cannot import {modules}"
        );
        engine::testing::report_skip(&format!(
            "train/tests/export.rs, the Python half of an export test ({modules} missing)"
        ));
    }
    ok
}

/// Run `scripts/NAME` with `args`; fails the test with the script's output unless it succeeds.
fn run_script(name: &str, args: &[&std::path::Path]) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts")
        .join(name);
    let o = std::process::Command::new("python3")
        .arg(&script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{name}: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `train export` as a user runs it: ONNX through the scripts the binary carries (run from a
/// folder without them), and a path that is not a regular file refused before anything is
/// written there.
#[test]
fn the_binary_exports_onnx_and_refuses_a_path_that_is_not_a_file() {
    let (_, model) = small_model(4);
    let dir = std::env::temp_dir().join(format!("lifeline-zero-export-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let checkpoint = dir.join("checkpoint");
    model.save(&checkpoint).unwrap();
    let export = |out: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_train"))
            .current_dir(&dir)
            .args(["export", "--model"])
            .arg(&checkpoint)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };
    let folder = dir.join("a-folder.onnx");
    std::fs::create_dir_all(&folder).unwrap();
    let o = export(&folder);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && stderr.contains("not a regular file"),
        "{stderr}"
    );
    assert!(folder.is_dir(), "the folder is left as it was");
    if python_has("numpy, onnx, onnxruntime", "LIFELINE_REQUIRE_ONNX") {
        let onnx = dir.join("model.onnx");
        let o = export(&onnx);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(std::fs::metadata(&onnx).unwrap().len() > 1000);
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("tmp"))
            .collect();
        assert!(left.is_empty(), "temporary files left: {left:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
