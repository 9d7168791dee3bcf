//! Random playouts as for Lifeline (the full legal list at every decision, a uniform choice)
//! for Square Lifeline 9 and 13 and Leblin 13 and 19, in playouts per second, and legal-action
//! generation per position.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use engine::leblin::{Leblin, LeblinOptions};
use engine::playout::{random_playout, random_playout_count};
use engine::square::{SquareLifeline, SquareOptions};
use engine::Game;
use rand::SeedableRng;

fn bench_playouts<G: Game>(c: &mut Criterion, group: &str, name: &str, start: G) {
    let mut group = c.benchmark_group(group);
    group.throughput(Throughput::Elements(1));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let mut buf = Vec::with_capacity(1024);
    group.bench_function(name, |b| {
        b.iter(|| {
            let mut g = start.clone();
            black_box(random_playout_count(&mut g, &mut rng, &mut buf))
        })
    });
    group.finish();
}

fn bench_legal<G: Game>(c: &mut Criterion, group: &str, name: &str, start: G) {
    let mut group = c.benchmark_group(group);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
    let mut buf = Vec::new();
    let mut positions = Vec::new();
    for _ in 0..10 {
        let mut g = start.clone();
        let actions = random_playout(&mut g.clone(), &mut rng, &mut buf);
        for a in actions {
            positions.push(g.clone());
            g.apply(a);
        }
    }
    group.throughput(Throughput::Elements(positions.len() as u64));
    group.bench_function(name, |b| {
        b.iter(|| {
            for p in &positions {
                p.legal_actions(&mut buf);
                black_box(buf.len());
            }
        })
    });
    group.finish();
}

fn playouts(c: &mut Criterion) {
    for size in [9, 13] {
        let g = SquareLifeline::new(SquareOptions::new(size)).unwrap();
        bench_playouts(c, "square_random_playout", &format!("size{size}"), g);
    }
    for size in [13, 19] {
        let g = Leblin::new(LeblinOptions::new(size)).unwrap();
        bench_playouts(c, "leblin_random_playout", &format!("size{size}"), g);
    }
}

fn legal(c: &mut Criterion) {
    for size in [9, 13] {
        let g = SquareLifeline::new(SquareOptions::new(size)).unwrap();
        bench_legal(
            c,
            "square_legal_actions",
            &format!("size{size}_per_position"),
            g,
        );
    }
    for size in [13, 19] {
        let g = Leblin::new(LeblinOptions::new(size)).unwrap();
        bench_legal(
            c,
            "leblin_legal_actions",
            &format!("size{size}_per_position"),
            g,
        );
    }
}

criterion_group!(benches, playouts, legal);
criterion_main!(benches);
