//! The policy-value network: shapes for every game, masking, save/load, and the evaluator.

use burn::tensor::{Bool, Device, Tensor, TensorData};
use engine::{Action, AnyGame, Game, GameConfig};
use net::model::{Model, NetEvaluator};
use net::network::{masked_log_softmax, NetConfig};
use rand::SeedableRng;
use selfplay::search::{Evaluation, Evaluator};

fn small_net() -> NetConfig {
    NetConfig {
        blocks: 2,
        channels: 8,
        head_channels: 4,
        value_hidden: 8,
        pool_every: 1,
    }
}

fn games() -> Vec<GameConfig> {
    [
        r#"{"game":"lifeline","options":{"size":3}}"#,
        r#"{"game":"lifeline","options":{"size":5,"balance":"komi","komi":3}}"#,
        r#"{"game":"vigilance","options":{"board":"hex_xs_39"}}"#,
        r#"{"game":"vigilance","options":{"board":"SQ-4 (64) Adjacent","captures":false}}"#,
    ]
    .iter()
    .map(|s| serde_json::from_str(s).unwrap())
    .collect()
}

/// A few positions of a random game (the start, and some later ones).
fn positions(cfg: &GameConfig, n: usize) -> Vec<AnyGame> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let mut out = Vec::new();
    engine::testing::random_game(&cfg.start().unwrap(), &mut rng, |before, _, _| {
        if out.len() < n {
            out.push(before.clone())
        }
    });
    out
}

fn encode_batch(ps: &[AnyGame]) -> (Vec<f32>, Vec<f32>, usize, usize) {
    let b = ps[0].board();
    let (planes, h, w) = (ps[0].num_planes(), b.height(), b.width());
    let mut inputs = vec![0f32; ps.len() * planes * h * w];
    for (g, chunk) in ps.iter().zip(inputs.chunks_mut(planes * h * w)) {
        g.encode(ndarray::ArrayViewMut3::from_shape((planes, h, w), chunk).unwrap());
    }
    let mut mask = vec![0f32; h * w];
    for &c in b.cells() {
        mask[b.grid_index(c)] = 1.0;
    }
    (inputs, mask, h, w)
}

#[test]
fn outputs_have_the_shapes_of_every_game() {
    let device = Device::flex();
    for cfg in games() {
        let model = Model::random(&cfg, &small_net(), &device, 1)
            .unwrap()
            .for_inference();
        let ps = positions(&cfg, 3);
        let (inputs, mask, h, w) = encode_batch(&ps);
        let (policy, value) = model.run(inputs, &mask, ps.len(), h, w);
        assert_eq!(
            policy.len(),
            ps.len() * ps[0].policy_len(),
            "{}",
            cfg.label()
        );
        assert_eq!(value.len(), ps.len() * 3);
        for wdl in value.chunks(3) {
            assert!(
                (wdl.iter().sum::<f32>() - 1.0).abs() < 1e-4,
                "win/draw/loss probabilities sum to 1"
            );
            assert!(wdl.iter().all(|p| p.is_finite() && *p >= 0.0));
        }
        // The full forward pass: ownership is exactly zero off the board and within [-1, 1] on it.
        let planes = ps[0].num_planes();
        let (inputs, mask, _, _) = encode_batch(&ps);
        let x = Tensor::<4>::from_data(
            TensorData::new(inputs, [ps.len(), planes, h, w]),
            &model.device,
        );
        let m = Tensor::<4>::from_data(TensorData::new(mask.clone(), [1, 1, h, w]), &model.device)
            .repeat_dim(0, ps.len());
        let out = model.net().forward(x, m);
        assert_eq!(
            out.policy.dims(),
            [ps.len(), h * w + engine::game::GLOBAL_ACTIONS.len()]
        );
        assert_eq!(out.value.dims(), [ps.len(), 3]);
        assert_eq!(out.ownership.dims(), [ps.len(), h, w]);
        let own = out.ownership.into_data().try_into_vec::<f32>().unwrap();
        for (i, o) in own.iter().enumerate() {
            if mask[i % (h * w)] == 0.0 {
                assert_eq!(
                    *o,
                    0.0,
                    "ownership off the board at grid index {}",
                    i % (h * w)
                );
            } else {
                assert!(o.abs() <= 1.0);
            }
        }
    }
}

#[test]
fn one_network_serves_every_board_size_of_a_game() {
    let device = Device::flex();
    let small: GameConfig =
        serde_json::from_str(r#"{"game":"lifeline","options":{"size":3}}"#).unwrap();
    let model = Model::random(&small, &small_net(), &device, 2)
        .unwrap()
        .for_inference();
    for size in [3, 4, 6] {
        let cfg: GameConfig = serde_json::from_str(&format!(
            r#"{{"game":"lifeline","options":{{"size":{size}}}}}"#
        ))
        .unwrap();
        let ps = positions(&cfg, 2);
        let (inputs, mask, h, w) = encode_batch(&ps);
        let (policy, value) = model.run(inputs, &mask, ps.len(), h, w);
        assert_eq!(policy.len(), ps.len() * ps[0].policy_len());
        assert!(value.iter().all(|v| v.is_finite()));
    }
}

#[test]
fn masked_softmax_gives_illegal_entries_no_mass() {
    let device = Device::flex();
    let logits = Tensor::<2>::from_data(
        TensorData::new(vec![5.0f32, 1.0, 9.0, 2.0, 0.5, 3.0], [1, 6]),
        &device,
    );
    let legal = Tensor::<2, Bool>::from_data(
        TensorData::new(vec![false, true, false, true, true, false], [1, 6]),
        &device,
    );
    let p: Vec<f32> = masked_log_softmax(logits, legal)
        .exp()
        .into_data()
        .try_into_vec()
        .unwrap();
    assert!(
        p[0] < 1e-12 && p[2] < 1e-12 && p[5] < 1e-12,
        "illegal entries get no mass: {p:?}"
    );
    let total = p[1] + p[3] + p[4];
    assert!((total - 1.0).abs() < 1e-5);
    let z = 1f32.exp() + 2f32.exp() + 0.5f32.exp();
    assert!(
        (p[3] - 2f32.exp() / z).abs() < 1e-5,
        "softmax over the legal entries only"
    );
}

#[test]
fn the_evaluator_gives_priors_over_legal_actions_only() {
    let device = Device::flex();
    for cfg in games() {
        let model = Model::random(&cfg, &small_net(), &device, 3)
            .unwrap()
            .for_inference();
        let ps = positions(&cfg, 4);
        let legal: Vec<Vec<Action>> = ps
            .iter()
            .map(|g| {
                let mut l = Vec::new();
                g.legal_actions(&mut l);
                l
            })
            .collect();
        let mut out: Vec<Evaluation> = Vec::new();
        let mut ev = NetEvaluator::new(&model);
        ev.evaluate(&ps, &legal, &mut out);
        assert_eq!(out.len(), ps.len());
        for (e, l) in out.iter().zip(&legal) {
            assert_eq!(e.priors.len(), l.len(), "one prior per legal action");
            assert!((e.priors.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            assert!((-1.0..=1.0).contains(&e.value));
        }
        assert_eq!(ev.stats.positions, ps.len() as u64);
    }
}

#[test]
fn a_batch_mixing_board_sizes_is_evaluated_as_each_board_alone() {
    let device = Device::flex();
    let size = |n: usize| -> GameConfig {
        serde_json::from_str(&format!(
            r#"{{"game":"lifeline","options":{{"size":{n}}}}}"#
        ))
        .unwrap()
    };
    let model = Model::random(&size(4), &small_net(), &device, 3)
        .unwrap()
        .for_inference();
    let legal_of = |ps: &[AnyGame]| -> Vec<Vec<Action>> {
        ps.iter()
            .map(|g| {
                let mut l = Vec::new();
                g.legal_actions(&mut l);
                l
            })
            .collect()
    };
    let (three, four, five) = (
        positions(&size(3), 3),
        positions(&size(4), 3),
        positions(&size(5), 2),
    );
    // Interleaved, as the leaves of games of several sizes come from self-play.
    let mixed: Vec<AnyGame> = [
        &three[0], &four[0], &five[0], &three[1], &four[1], &three[2], &five[1], &four[2],
    ]
    .into_iter()
    .cloned()
    .collect();
    let mut ev = NetEvaluator::new(&model);
    let mut out = Vec::new();
    ev.evaluate(&mixed, &legal_of(&mixed), &mut out);
    assert_eq!(ev.stats.calls, 3, "one network call per board");
    let mut alone = Vec::new();
    for ps in [&three, &four, &five] {
        let mut o = Vec::new();
        NetEvaluator::new(&model).evaluate(ps, &legal_of(ps), &mut o);
        alone.push(o);
    }
    let expected = [
        &alone[0][0],
        &alone[1][0],
        &alone[2][0],
        &alone[0][1],
        &alone[1][1],
        &alone[0][2],
        &alone[2][1],
        &alone[1][2],
    ];
    for (got, want) in out.iter().zip(expected) {
        assert_eq!(got.priors.len(), want.priors.len());
        assert!(
            (got.value - want.value).abs() < 1e-5,
            "{} {}",
            got.value,
            want.value
        );
        for (a, b) in got.priors.iter().zip(&want.priors) {
            assert!((a - b).abs() < 1e-5, "{a} {b}");
        }
    }
}

#[test]
fn save_and_load_give_identical_outputs() {
    let device = Device::flex();
    let cfg = games().remove(1);
    let model = Model::random(&cfg, &small_net(), &device, 4).unwrap();
    let dir = std::env::temp_dir().join(format!("lifeline-zero-model-{}", std::process::id()));
    let ckpt = dir.join("000000");
    model.save(&ckpt).unwrap();
    let loaded = Model::load(&ckpt, &device).unwrap();
    assert!(
        loaded.meta.weights_checksum.is_some(),
        "saving records the checksum"
    );
    let mut unchecked = loaded.meta.clone();
    unchecked.weights_checksum = None;
    assert_eq!(unchecked, model.meta);
    let ps = positions(&cfg, 5);
    let (inputs, mask, h, w) = encode_batch(&ps);
    let a = model
        .for_inference()
        .run(inputs.clone(), &mask, ps.len(), h, w);
    let b = loaded.for_inference().run(inputs, &mask, ps.len(), h, w);
    assert_eq!(
        a, b,
        "the same input gives the same outputs after a round trip"
    );
    // A different initialisation gives different outputs (the comparison above can fail).
    let other = Model::random(&cfg, &small_net(), &device, 5)
        .unwrap()
        .for_inference();
    let (inputs, mask, h, w) = encode_batch(&ps);
    assert_ne!(other.run(inputs, &mask, ps.len(), h, w).0, a.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn flipped_bytes_in_the_weights_are_refused() {
    let device = Device::flex();
    let cfg = games().remove(0);
    let dir = std::env::temp_dir().join(format!("lifeline-zero-flipped-{}", std::process::id()));
    let ckpt = dir.join("000000");
    Model::random(&cfg, &small_net(), &device, 4)
        .unwrap()
        .save(&ckpt)
        .unwrap();
    let weights = ckpt.join(net::model::WEIGHTS_FILE);
    let mut bytes = std::fs::read(&weights).unwrap();
    let n = bytes.len();
    for k in 0..100 {
        bytes[n - 1 - k * 7 % (n / 2)] ^= 0x5a;
    }
    std::fs::write(&weights, &bytes).unwrap();
    let e = Model::load(&ckpt, &device).unwrap_err().to_string();
    assert!(e.contains("weights.bpk") && e.contains("damaged"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_network_plays_its_own_game_inside_its_training_ranges_only() {
    let device = Device::flex();
    let parse = |s: &str| -> GameConfig { serde_json::from_str(s).unwrap() };
    let square = parse(r#"{"game":"square_lifeline","options":{"size":7}}"#);
    let leblin = parse(r#"{"game":"leblin","options":{"size":7}}"#);
    let mut model = Model::random(&square, &small_net(), &device, 1).unwrap();
    // Square Lifeline and Leblin both have 15 planes: the planes alone cannot tell them apart.
    assert_eq!(
        square.start().unwrap().num_planes(),
        leblin.start().unwrap().num_planes()
    );
    let e = model.meta.plays(&leblin).unwrap_err();
    assert!(e.contains("square") && e.contains("leblin"), "{e}");
    // Komi: its own only, until it is trained over a range; then anything inside the range.
    let komi = |k: u32| {
        parse(&format!(
            r#"{{"game":"square_lifeline","options":{{"size":7,"komi":{k}}}}}"#
        ))
    };
    assert!(model.meta.plays(&komi(0)).is_ok());
    assert!(model
        .meta
        .plays(&komi(2))
        .unwrap_err()
        .contains("komi 0 to 0"));
    model.meta.komi_range = Some([0, 3]);
    assert!(model.meta.plays(&komi(3)).is_ok());
    assert!(model
        .meta
        .plays(&komi(4))
        .unwrap_err()
        .contains("komi 0 to 3"));
    // Size: the one it was trained on.
    let e = model
        .meta
        .plays(&parse(r#"{"game":"square_lifeline","options":{"size":9}}"#))
        .unwrap_err();
    assert!(e.contains("size 7") && e.contains("size 9"), "{e}");
    // Sizes: any of the list it was trained on, the others refused with the list named.
    model.meta.sizes = Some(vec![7, 9]);
    let sized = |n: usize| {
        parse(&format!(
            r#"{{"game":"square_lifeline","options":{{"size":{n}}}}}"#
        ))
    };
    assert!(model.meta.plays(&sized(9)).is_ok());
    let e = model.meta.plays(&sized(11)).unwrap_err();
    assert!(e.contains("sizes 7, 9") && e.contains("size 11"), "{e}");
    let lifeline = parse(r#"{"game":"lifeline","options":{"size":5,"balance":"strong"}}"#);
    let strong = Model::random(&lifeline, &small_net(), &device, 1).unwrap();
    assert!(strong.meta.plays(&lifeline).is_ok());
    assert!(strong
        .meta
        .plays(&parse(
            r#"{"game":"lifeline","options":{"size":5,"balance":"weak"}}"#
        ))
        .is_err());
    // Two configs under one label: the option that differs is named.
    let capped =
        parse(r#"{"game":"lifeline","options":{"size":5,"balance":"strong","max_turns":50}}"#);
    assert_eq!(capped.label(), lifeline.label());
    let e = strong.meta.plays(&capped).unwrap_err();
    assert!(e.contains("max_turns: null trained, 50 asked"), "{e}");
}

#[test]
fn bad_checkpoints_are_refused_with_the_file_named() {
    let device = Device::flex();
    let dir = std::env::temp_dir().join(format!("lifeline-zero-badmodel-{}", std::process::id()));
    let missing = Model::load(&dir.join("nothing"), &device)
        .unwrap_err()
        .to_string();
    assert!(missing.contains("nothing"), "{missing}");
    let cfg = games().remove(0);
    let ckpt = dir.join("000001");
    Model::random(&cfg, &small_net(), &device, 6)
        .unwrap()
        .save(&ckpt)
        .unwrap();
    std::fs::write(ckpt.join("weights.bpk"), b"not a burnpack file").unwrap();
    let e = Model::load(&ckpt, &device).unwrap_err().to_string();
    assert!(e.contains("weights.bpk"), "{e}");
    std::fs::write(ckpt.join("meta.json"), b"{\"game\": 3}").unwrap();
    let e = Model::load(&ckpt, &device).unwrap_err().to_string();
    assert!(e.contains("meta.json"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Moves every weight, bias and batch-norm statistic away from its initial value (variances
/// stay at least 0.3), so folding the batch norm into the convolutions is really exercised.
struct Perturb;

impl burn::module::ModuleMapper for Perturb {
    fn map_float<const D: usize>(
        &mut self,
        param: burn::module::Param<Tensor<D>>,
    ) -> burn::module::Param<Tensor<D>> {
        use burn::tensor::Distribution;
        param.map(|t| {
            let (shape, device) = (t.shape(), t.device());
            t * Tensor::random(shape.clone(), Distribution::Uniform(0.5, 1.5), &device)
                + Tensor::random(shape, Distribution::Uniform(-0.2, 0.2), &device)
        })
    }
}

#[test]
fn fused_cpu_network_matches_the_reference_layers() {
    use burn::module::Module;
    let device = Device::flex();
    let mut configs = games();
    configs
        .push(serde_json::from_str(r#"{"game":"square_lifeline","options":{"size":6}}"#).unwrap());
    configs.push(serde_json::from_str(r#"{"game":"leblin","options":{"size":5}}"#).unwrap());
    for (i, cfg) in configs.iter().enumerate() {
        let mut model = Model::random(cfg, &small_net(), &device, 10 + i as u64).unwrap();
        let net = model.net().clone().map(&mut Perturb);
        model = model.with_net(net);
        let fused = model.for_inference();
        assert_eq!(fused.backend_name(), "fused-cpu");
        let reference = model.for_inference().on_burn_layers();
        let ps = positions(cfg, 5);
        let (inputs, mask, h, w) = encode_batch(&ps);
        let (empty_p, empty_v) = fused.run(Vec::new(), &mask, 0, h, w);
        assert!(empty_p.is_empty() && empty_v.is_empty(), "an empty batch");
        let (p1, v1) = fused.run(inputs.clone(), &mask, ps.len(), h, w);
        let (p2, v2) = reference.run(inputs, &mask, ps.len(), h, w);
        assert_eq!(p1.len(), p2.len());
        let spread = p2.iter().fold(0f32, |m, x| m.max(x.abs()));
        assert!(spread > 0.01, "{}: logits are not all zero", cfg.label());
        for (k, (a, b)) in p1.iter().zip(&p2).enumerate() {
            assert!(
                (a - b).abs() <= 1e-4 * (1.0 + spread),
                "{}: policy entry {k}: fused {a}, reference {b}",
                cfg.label()
            );
        }
        for (a, b) in v1.iter().zip(&v2) {
            assert!(
                (a - b).abs() < 1e-4,
                "{}: value fused {a}, reference {b}",
                cfg.label()
            );
        }
    }
}

/// bf16 on this CPU's bf16 unit (the tiles, or AMD's vector unit: `net::amx::kernel`) computes
/// what f32 computes within bf16's rounding, for every game; on a CPU without one, asking for
/// bf16 gives the f32 network itself. Fails if a bf16
/// convolution reads wrong rows, columns or padding (errors the size of the logits), if the
/// backend does not say what it runs, or if the fallback computes anything else.
#[test]
fn bf16_inference_stays_within_its_rounding_of_f32() {
    use burn::module::Module;
    use net::amx::Precision;
    let device = Device::flex();
    for (i, cfg) in games().iter().enumerate() {
        let mut model = Model::random(cfg, &small_net(), &device, 40 + i as u64).unwrap();
        let net = model.net().clone().map(&mut Perturb);
        model = model.with_net(net);
        let bf16 = model.for_inference_in(Precision::Bf16);
        let f32 = model.for_inference();
        let ps = positions(cfg, 9);
        let (inputs, mask, h, w) = encode_batch(&ps);
        let (p1, v1) = bf16.run(inputs.clone(), &mask, ps.len(), h, w);
        let (p2, v2) = f32.run(inputs, &mask, ps.len(), h, w);
        if !net::amx::available() {
            assert_eq!(bf16.backend_name(), "fused-cpu", "no bf16 unit: f32");
            assert_eq!((p1, v1), (p2, v2), "{}: the fallback is f32", cfg.label());
            continue;
        }
        assert_eq!(bf16.backend_name(), "fused-cpu-bf16");
        // bf16 keeps 8 significant bits: each product of a layer is off by at most 2^-8 of
        // its size, and about a dozen layers lie between the input and a logit, so even
        // errors that all add up stay under 12 x 2^-8 < 5% of the logits' spread (the
        // value's probabilities likewise within 0.05).
        let spread = p2.iter().fold(0f32, |m, x| m.max(x.abs()));
        assert!(spread > 0.01, "{}: logits are not all zero", cfg.label());
        for (k, (a, b)) in p1.iter().zip(&p2).enumerate() {
            assert!(
                (a - b).abs() <= 0.05 * (1.0 + spread),
                "{}: policy entry {k}: bf16 {a}, f32 {b}",
                cfg.label()
            );
        }
        for (a, b) in v1.iter().zip(&v2) {
            assert!(
                (a - b).abs() <= 0.05,
                "{}: value bf16 {a}, f32 {b}",
                cfg.label()
            );
        }
    }
}

/// Turns every parameter into NaN: what a diverged fit leaves.
struct Poison;

impl burn::module::ModuleMapper for Poison {
    fn map_float<const D: usize>(
        &mut self,
        param: burn::module::Param<Tensor<D>>,
    ) -> burn::module::Param<Tensor<D>> {
        param.map(|t| t * f32::NAN)
    }
}

#[test]
fn a_network_with_nan_weights_is_refused_and_its_search_stops_with_an_error() {
    use burn::module::Module;
    use selfplay::search::{Search, SearchConfig};
    let device = Device::flex();
    let cfg = games().remove(0);
    let mut model = Model::random(&cfg, &small_net(), &device, 3).unwrap();
    let ckpt = std::path::Path::new("runs/x/models/000042");
    model.check_finite(&cfg, ckpt).unwrap();
    let net = model.net().clone().map(&mut Poison);
    model = model.with_net(net);
    let e = model.check_finite(&cfg, ckpt).unwrap_err().to_string();
    assert!(e.contains("000042") && e.contains("not finite"), "{e}");
    // A search on it returns an error instead of panicking inside the tree.
    let inference = model.for_inference();
    let mut ev = NetEvaluator::new(&inference);
    let mut search = Search::new(
        SearchConfig {
            visits: 16,
            ..SearchConfig::default()
        },
        cfg.start().unwrap(),
    );
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let e = search
        .run(&mut ev, false, &mut rng)
        .unwrap_err()
        .to_string();
    assert!(e.contains("non-finite"), "{e}");
}

#[test]
fn a_seed_alone_decides_a_random_network_while_other_threads_draw_theirs() {
    let device = Device::flex();
    let cfg = games().remove(1);
    let ps = positions(&cfg, 4);
    let outputs = |seed| {
        let model = Model::random(&cfg, &small_net(), &device, seed).unwrap();
        let (inputs, mask, h, w) = encode_batch(&ps);
        model.for_inference().run(inputs, &mask, ps.len(), h, w).0
    };
    let reference = outputs(7);
    std::thread::scope(|scope| {
        for seed in [100, 200] {
            let cfg = &cfg;
            scope.spawn(move || {
                for _ in 0..4 {
                    Model::random(cfg, &small_net(), &Device::flex(), seed).unwrap();
                }
            });
        }
        for _ in 0..4 {
            assert_eq!(
                outputs(7),
                reference,
                "another thread's draws changed seed 7's network"
            );
        }
    });
}

/// Naming a CUDA device where the driver is missing is one error that names the library and
/// says what to use instead (cudarc would panic at the first CUDA call with its search list).
/// Fails if a missing library were reported as loaded, or if the check refused a library that
/// every glibc system has (then it would refuse the real driver too).
#[cfg(target_os = "linux")]
#[test]
fn a_missing_cuda_driver_is_one_clear_error() {
    use net::model::cuda_driver;
    let e = cuda_driver("libcuda-not-installed-here.so.1").unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with("no CUDA driver: libcuda-not-installed-here.so.1 not found")
            && text.ends_with("use --device cpu"),
        "{text}"
    );
    cuda_driver("libc.so.6").expect("libc loads: the check itself works");
}
