//! The reference timings of `scripts/bench_reference.py` (onnxruntime inference, JAX and
//! PyTorch training of the same architecture), run side by side with ours by `selfplay
//! bench-net --reference` and `train bench --reference`.

use net::network::NetConfig;
use std::path::Path;

/// The shape of the network's input and output.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub planes: usize,
    pub height: usize,
    pub width: usize,
    pub policy_len: usize,
}

/// Run the script in `mode` ("infer", "train" or "train-torch") for `net`; returns what it
/// printed.
pub fn run_reference(
    mode: &str,
    shape: Shape,
    net: &NetConfig,
    batches: &[usize],
    seconds: f64,
) -> Result<String, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/bench_reference.py");
    let batches = batches
        .iter()
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let args: [(&str, String); 12] = [
        ("--mode", mode.to_string()),
        ("--planes", shape.planes.to_string()),
        ("--height", shape.height.to_string()),
        ("--width", shape.width.to_string()),
        ("--policy-len", shape.policy_len.to_string()),
        ("--blocks", net.blocks.to_string()),
        ("--channels", net.channels.to_string()),
        ("--head-channels", net.head_channels.to_string()),
        ("--value-hidden", net.value_hidden.to_string()),
        ("--pool-every", net.pool_every.to_string()),
        ("--batches", batches),
        ("--seconds", seconds.to_string()),
    ];
    let mut cmd = std::process::Command::new("python3");
    cmd.arg(&script);
    for (k, v) in &args {
        cmd.arg(k).arg(v);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether `python3` can import `module` (an optional reference, such as PyTorch).
pub fn python_has(module: &str) -> bool {
    std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `median M of N rounds (r1 r2 …)`: the summary of ratios taken in alternating rounds,
/// sorted in place.
pub fn median_of_rounds(ratios: &mut [f64]) -> String {
    ratios.sort_by(f64::total_cmp);
    let list = ratios
        .iter()
        .map(|r| format!("{r:.2}"))
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "median {:.2} of {} rounds ({list})",
        ratios[ratios.len() / 2],
        ratios.len()
    )
}

/// The rate on a line `"<label> batch N: R unit"` of the script's output, for batch `batch`.
pub fn rate_at(text: &str, label: &str, batch: usize) -> Option<f64> {
    text.lines().find_map(|line| {
        let rest = line
            .strip_prefix(label)?
            .trim_start()
            .strip_prefix("batch")?;
        let (b, r) = rest.split_once(':')?;
        (b.trim().parse::<usize>().ok()? == batch).then_some(())?;
        r.split_whitespace().next()?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_median_of_rounds_is_the_middle_ratio_with_every_round_listed() {
        let mut r = [1.3, 0.9, 1.1];
        assert_eq!(
            super::median_of_rounds(&mut r),
            "median 1.10 of 3 rounds (0.90 1.10 1.30)"
        );
    }

    #[test]
    fn rates_are_read_from_the_scripts_lines() {
        let text = "onnxruntime batch    1:      1613 positions/s\nonnxruntime batch   16:      5143 positions/s\njax train batch  256:     270.5 samples/s\n";
        assert_eq!(super::rate_at(text, "onnxruntime", 16), Some(5143.0));
        assert_eq!(super::rate_at(text, "onnxruntime", 64), None);
        assert_eq!(super::rate_at(text, "jax train", 256), Some(270.5));
    }
}
