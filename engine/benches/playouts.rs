//! Random playouts as Ludii plays them (the full legal list at every decision, a uniform
//! choice), and legal-action generation per position, for Lifeline sizes 5, 7 and 12 under
//! strong pie. Throughput is reported in playouts per second.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use engine::lifeline::{Balance, Lifeline, LifelineOptions};
use engine::playout::{random_playout, random_playout_count};
use engine::Game;
use rand::SeedableRng;

fn playouts(c: &mut Criterion) {
    let mut group = c.benchmark_group("lifeline_random_playout");
    group.throughput(Throughput::Elements(1));
    for size in [5, 7, 12] {
        let start = Lifeline::new(LifelineOptions::new(size, Balance::Strong)).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut buf = Vec::with_capacity(1024);
        group.bench_function(format!("size{size}_strong"), |b| {
            b.iter(|| {
                let mut g = start.clone();
                black_box(random_playout_count(&mut g, &mut rng, &mut buf))
            })
        });
    }
    group.finish();
}

fn legal_generation(c: &mut Criterion) {
    let mut group = c.benchmark_group("lifeline_legal_actions");
    for size in [5, 7, 12] {
        // Positions sampled along random games, so the figure is an average over game phases.
        let start = Lifeline::new(LifelineOptions::new(size, Balance::Strong)).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        let mut buf = Vec::new();
        let mut positions = Vec::new();
        for _ in 0..20 {
            let mut g = start.clone();
            let actions = random_playout(&mut g.clone(), &mut rng, &mut buf);
            for a in actions {
                positions.push(g.clone());
                g.apply(a);
            }
        }
        group.throughput(Throughput::Elements(positions.len() as u64));
        group.bench_function(format!("size{size}_per_position"), |b| {
            b.iter(|| {
                for p in &positions {
                    p.legal_actions(&mut buf);
                    black_box(buf.len());
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, playouts, legal_generation);
criterion_main!(benches);
