use engine::lifeline::*;
use engine::{Action, Game, Player, groups::dead_groups};
use rand::{Rng, SeedableRng};
fn diagram(g: &Lifeline) -> String {
    engine::display::render(g.board(), |c| if g.stones(Player::Black).contains(c as usize) {'X'} else if g.stones(Player::White).contains(c as usize) {'O'} else {'.'})
}
fn main() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let mut found = [false; 3];
    for _ in 0..20000 {
        let size = 3;
        let mut g = Lifeline::new(LifelineOptions::new(size, Balance::Strong)).unwrap();
        let mut legal = vec![];
        while g.outcome().is_none() {
            g.legal_actions(&mut legal);
            let a = legal[rng.gen_range(0..legal.len())];
            let before = g.clone();
            g.apply(a);
            if before.pending().is_some() || before.is_double_turn() || before.turns() < 2 { continue }
            let Action::Cell(x) = a else { continue };
            let me = before.to_move();
            let b = g.board();
            let own0 = before.stones(me); let en0 = before.stones(me.opponent());
            let own1 = own0 | engine::bitset::CellSet::single(x as usize);
            let empty1 = *b.on_board() - own1 - en0;
            let dead_own_early = dead_groups(b, own1, empty1);
            let removed_own_old = (own0 - g.stones(me)).len();
            let enemy_removed = (en0 - g.stones(me.opponent())).len();
            let kept = g.stones(me);
            let mut which = None;
            if !found[0] && enemy_removed > 0 && dead_own_early.intersects(&kept) { which = Some(0) }
            else if !found[1] && removed_own_old > 0 && kept.contains(x as usize) && enemy_removed == 0 { which = Some(1) }
            else if !found[2] && enemy_removed > 0 && !kept.contains(x as usize) { which = Some(2) }
            if let Some(w) = which {
                found[w] = true;
                println!("case {w}: {me} plays {}  (enemy removed {enemy_removed}, own old removed {removed_own_old})", b.cell_name(x));
                print!("{}", diagram(&before));
                println!("after:"); print!("{}", diagram(&g));
            }
        }
        if found.iter().all(|&f| f) { break }
    }
}
