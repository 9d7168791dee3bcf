use engine::lifeline::*;
use engine::Game;
use rand::{Rng, SeedableRng};
use std::time::Instant;
fn main() {
    for size in [5usize, 7] {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let start = Lifeline::new(LifelineOptions::new(size, Balance::Strong)).unwrap();
        let mut t = [0f64; 3]; let mut n = [0usize; 3]; let mut ta = 0f64;
        let mut buf = Vec::new();
        for _ in 0..200 {
            let mut g = start.clone();
            while g.outcome().is_none() {
                let k = if g.ply() < 4 { 0 } else if g.ply() < 30 { 1 } else { 2 };
                let t0 = Instant::now();
                g.legal_actions(&mut buf);
                t[k] += t0.elapsed().as_secs_f64(); n[k] += 1;
                let a = buf[rng.gen_range(0..buf.len())];
                let t1 = Instant::now();
                g.apply(a);
                ta += t1.elapsed().as_secs_f64();
            }
        }
        println!("size {size}: opening {:.1} us x {}, early {:.1} us x {}, late {:.1} us x {}, apply total {:.1} ms, legal total {:.1} ms",
            t[0]/n[0] as f64*1e6, n[0], t[1]/n[1] as f64*1e6, n[1], t[2]/n[2].max(1) as f64*1e6, n[2], ta*1e3, (t[0]+t[1]+t[2])*1e3);
    }
}
