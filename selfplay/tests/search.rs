//! The search with a uniform evaluator: wins when it can, avoids immediate losses, counts
//! visits consistently, keeps value signs across multi-decision turns, reuses its tree.

use engine::lifeline::{Balance, Lifeline, LifelineOptions, LifelinePosition};
use engine::{Action, Game, Player};
use rand::{Rng, SeedableRng};
use selfplay::search::{Search, SearchConfig, UniformEvaluator};

fn config(visits: u32) -> SearchConfig {
    SearchConfig {
        visits,
        batch: 4,
        ..SearchConfig::default()
    }
}

fn position(_size: usize, to_move: Player, black: &[&str], white: &[&str]) -> LifelinePosition {
    LifelinePosition {
        to_move,
        black: black.iter().map(|s| s.to_string()).collect(),
        white: white.iter().map(|s| s.to_string()).collect(),
        turns: 10,
        placement_turns: 10,
        stones_placed: 10,
        pending: None,
        swapped: false,
        komi_left: 0,
    }
    .clone()
}

fn search(
    g: &Lifeline,
    visits: u32,
    seed: u64,
) -> (Search<Lifeline>, selfplay::search::SearchResult) {
    let mut s = Search::new(config(visits), g.clone());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let r = s.run(&mut UniformEvaluator, false, &mut rng).unwrap();
    (s, r)
}

fn wins_at_once(g: &Lifeline, a: Action) -> bool {
    let mut h = g.clone();
    h.apply(a);
    h.outcome().is_some_and(|o| o.winner == Some(g.to_move()))
}

#[test]
fn finds_an_immediate_win() {
    // White's b2 seals a1 and cuts e3 off: Black is left without stones and loses.
    let pos = position(3, Player::White, &["a1", "e3"], &["b1", "a2", "e5"]);
    let g = Lifeline::from_position(LifelineOptions::new(3, Balance::Strong), &pos).unwrap();
    let (_, r) = search(&g, 400, 1);
    assert!(wins_at_once(&g, r.best()), "played {:?}", r.best());
    assert!(r.value > 0.5, "the root value sees the win: {}", r.value);
}

#[test]
fn visit_counts_add_up() {
    let g = Lifeline::new(LifelineOptions::new(4, Balance::Strong)).unwrap();
    let (_, r) = search(&g, 300, 2);
    let sum: u32 = r.children.iter().map(|c| c.1).sum();
    assert_eq!(r.root_visits, 300);
    assert_eq!(
        sum + 1,
        r.root_visits,
        "one visit expands the root, every other goes to a child"
    );
}

#[test]
fn keeps_the_sign_across_a_double_placement() {
    // Black's double placement (after White swapped): a2 and b2 together seal White's a1; e5
    // is then White's only group, dies too, and White has nothing left. Neither stone alone
    // wins, so the search must value the second decision from Black's point of view as well.
    let mut pos = position(3, Player::Black, &["b1", "e3"], &["a1", "e5"]);
    pos.turns = 2;
    pos.placement_turns = 1;
    pos.stones_placed = 2;
    pos.swapped = true;
    let mut g = Lifeline::from_position(LifelineOptions::new(3, Balance::Strong), &pos).unwrap();
    assert!(g.is_double_turn());
    let (mut s, r) = search(&g, 3000, 3);
    let first = r.best();
    let names = |a| g.action_to_string(a);
    assert!(
        ["a2", "b2"].contains(&names(first).as_str()),
        "first stone {}",
        names(first)
    );
    assert!(r.value > 0.5, "root value {}", r.value);
    s.advance(first);
    g.apply(first);
    assert_eq!(g.to_move(), Player::Black);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    let r2 = s.run(&mut UniformEvaluator, false, &mut rng).unwrap();
    assert!(
        wins_at_once(&g, r2.best()),
        "second stone {}",
        g.action_to_string(r2.best())
    );
}

#[test]
fn avoids_moves_that_lose_at_once() {
    // Positions from random games where some moves give the opponent an immediate win and
    // others do not: the search must pick one of the others.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let mut checked = 0;
    let mut legal = Vec::new();
    let mut replies = Vec::new();
    'games: for _ in 0..400 {
        let mut g = Lifeline::new(LifelineOptions::new(3, Balance::Strong)).unwrap();
        while g.outcome().is_none() {
            g.legal_actions(&mut legal);
            if g.ply() >= 4 && legal.len() >= 2 {
                let losing: Vec<bool> = legal
                    .iter()
                    .map(|&a| {
                        let mut h = g.clone();
                        h.apply(a);
                        if h.outcome().is_some() {
                            return false;
                        }
                        h.legal_actions(&mut replies);
                        replies.iter().any(|&b| wins_at_once(&h, b))
                    })
                    .collect();
                let n_losing = losing.iter().filter(|&&l| l).count();
                let any_win = legal.iter().any(|&a| wins_at_once(&g, a));
                if n_losing > 0 && n_losing < legal.len() && !any_win {
                    let (_, r) = search(&g, 1500, checked);
                    let k = legal.iter().position(|&a| a == r.best()).unwrap();
                    assert!(
                        !losing[k],
                        "played {} which loses at once",
                        g.action_to_string(r.best())
                    );
                    checked += 1;
                    if checked == 8 {
                        break 'games;
                    }
                    continue 'games;
                }
            }
            let a = legal[rng.gen_range(0..legal.len())];
            g.apply(a);
        }
    }
    assert!(checked >= 4, "found only {checked} test positions");
}

#[test]
fn tree_reuse_keeps_the_subtree() {
    let g = Lifeline::new(LifelineOptions::new(4, Balance::Weak)).unwrap();
    let (mut s, r) = search(&g, 400, 5);
    let best = r.best();
    let child_visits = r.children.iter().find(|c| c.0 == best).unwrap().1;
    s.advance(best);
    assert_eq!(s.root_visits(), child_visits);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(6);
    let r2 = s.run(&mut UniformEvaluator, true, &mut rng).unwrap();
    assert_eq!(r2.root_visits, 400);
}

#[test]
fn bad_search_configs_name_the_field() {
    let bad = SearchConfig {
        visits: 0,
        ..SearchConfig::default()
    };
    assert!(bad.validate().unwrap_err().contains("visits"));
    let bad = SearchConfig {
        dirichlet_fraction: 2.0,
        ..SearchConfig::default()
    };
    assert!(bad.validate().unwrap_err().contains("dirichlet_fraction"));
    let bad = SearchConfig {
        play_considered: 0,
        ..SearchConfig::default()
    };
    assert!(bad
        .validate()
        .unwrap_err()
        .contains("search.play_considered"));
    let parsed: Result<SearchConfig, _> = serde_json::from_str(r#"{"vists": 3}"#);
    assert!(parsed.unwrap_err().to_string().contains("vists"));
}

#[test]
fn gumbel_root_finds_the_win_with_few_visits_and_improves_the_policy() {
    let pos = position(3, Player::White, &["a1", "e3"], &["b1", "a2", "e5"]);
    let g = Lifeline::from_position(LifelineOptions::new(3, Balance::Strong), &pos).unwrap();
    let cfg = SearchConfig {
        visits: 48,
        batch: 4,
        gumbel: true,
        gumbel_considered: 16,
        ..SearchConfig::default()
    };
    let mut s = Search::new(cfg, g.clone());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
    let r = s.run(&mut UniformEvaluator, false, &mut rng).unwrap();
    assert_eq!(r.root_visits, 48);
    let chosen = r.gumbel_action.expect("a Gumbel search chooses its action");
    assert!(
        wins_at_once(&g, chosen),
        "chose {}",
        g.action_to_string(chosen)
    );
    let policy = r.policy();
    let total: f32 = policy.iter().map(|p| p.1).sum();
    assert!((total - 1.0).abs() < 1e-4);
    let best = policy.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
    assert!(
        wins_at_once(&g, best.0),
        "the improved policy favours the win"
    );
    let uniform = 1.0 / policy.len() as f32;
    assert!(
        best.1 > 2.0 * uniform,
        "improved policy {:?} is sharper than the uniform prior",
        best.1
    );
}

/// A Gumbel root over 2 candidates with 8 visits, one leaf at a time.
fn two_candidate_gumbel() -> SearchConfig {
    SearchConfig {
        visits: 8,
        batch: 1,
        gumbel: true,
        gumbel_considered: 2,
        ..SearchConfig::default()
    }
}

/// The root's children with at least one visit, in a fixed order.
fn visited_children(r: &selfplay::search::SearchResult) -> Vec<Action> {
    let mut kids: Vec<Action> = r.children.iter().filter(|c| c.1 > 0).map(|c| c.0).collect();
    kids.sort_by_key(|a| format!("{a:?}"));
    kids
}

/// The Gumbel root's noise is self-play's exploration: without it (play) the considered actions
/// are the top of the priors, so every seed gives the same decision; with it they are sampled,
/// so different seeds consider different actions. Either way the move to play is sequential
/// halving's choice.
#[test]
fn a_gumbel_root_is_deterministic_without_noise_and_explores_with_it() {
    let g = Lifeline::new(LifelineOptions::new(3, Balance::Strong)).unwrap();
    let cfg = two_candidate_gumbel();
    let visited = |noise: bool, seed: u64| {
        let mut s = Search::new(cfg.clone(), g.clone());
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let r = s.run(&mut UniformEvaluator, noise, &mut rng).unwrap();
        assert_eq!(
            Some(r.best()),
            r.gumbel_action,
            "best() is the Gumbel choice"
        );
        (visited_children(&r), r.best())
    };
    let plain: Vec<_> = (0..6).map(|seed| visited(false, seed)).collect();
    assert!(plain.iter().all(|p| *p == plain[0]), "{plain:?}");
    assert_eq!(plain[0].0.len(), 2, "two considered actions: {plain:?}");
    let noisy: Vec<_> = (0..6).map(|seed| visited(true, seed)).collect();
    assert!(noisy.iter().any(|p| p.0 != noisy[0].0), "{noisy:?}");
}

/// A root is prepared once per decision: a second `run` on the same root does not restart
/// sequential halving (which would spend the new visits on a fresh draw of actions).
#[test]
fn a_second_run_on_the_same_root_keeps_its_gumbel_draw() {
    let g = Lifeline::new(LifelineOptions::new(3, Balance::Strong)).unwrap();
    let cfg = two_candidate_gumbel();
    let mut s = Search::new(cfg, g.clone());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let first = s.run(&mut UniformEvaluator, true, &mut rng).unwrap();
    s.set_visits(16);
    let second = s.run(&mut UniformEvaluator, true, &mut rng).unwrap();
    assert_eq!(second.root_visits, 16);
    assert_eq!(
        visited_children(&first),
        visited_children(&second),
        "{second:?}"
    );
}

/// A balance study values an opening with the pie's swap declined: the excluded action gets
/// no visits and is not a root child, the visits still add up, and the next decision (after
/// `advance`) may take it again.
#[test]
fn an_action_excluded_at_the_root_is_never_searched() {
    let mut g = Lifeline::new(LifelineOptions::new(3, Balance::Weak)).unwrap();
    g.apply(Action::Cell(g.board().parse_cell("c3").unwrap()));
    let mut legal = Vec::new();
    g.legal_actions(&mut legal);
    assert!(
        legal.contains(&Action::Swap),
        "White may swap after Black's stone"
    );
    for gumbel in [false, true] {
        let cfg = SearchConfig {
            gumbel,
            ..config(64)
        };
        let mut s = Search::new(cfg.clone(), g.clone());
        s.exclude_at_root(Action::Swap);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let r = s.run(&mut UniformEvaluator, false, &mut rng).unwrap();
        assert!(
            r.children.iter().all(|c| c.0 != Action::Swap),
            "gumbel {gumbel}"
        );
        assert_eq!(r.children.len(), legal.len() - 1);
        let visits: u32 = r.children.iter().map(|c| c.1).sum();
        assert_eq!(visits + 1, r.root_visits, "gumbel {gumbel}: {r:?}");
        let priors: f32 = r.children.iter().map(|c| c.2).sum();
        assert!((priors - 1.0).abs() < 1e-4, "priors renormalised: {priors}");
        // Without the exclusion the swap is a root child.
        let mut free = Search::new(cfg, g.clone());
        let r = free.run(&mut UniformEvaluator, false, &mut rng).unwrap();
        assert!(r.children.iter().any(|c| c.0 == Action::Swap));
    }
    // The exclusion is this decision's only.
    let mut s = Search::new(
        config(8),
        Lifeline::new(LifelineOptions::new(3, Balance::Weak)).unwrap(),
    );
    s.exclude_at_root(Action::Swap);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    s.run(&mut UniformEvaluator, false, &mut rng).unwrap();
    s.advance(Action::Cell(g.board().parse_cell("c3").unwrap()));
    let r = s.run(&mut UniformEvaluator, false, &mut rng).unwrap();
    assert!(r.children.iter().any(|c| c.0 == Action::Swap));
}
