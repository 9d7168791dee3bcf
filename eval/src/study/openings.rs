//! Black's first turns by class, and the first player's best: the decision a balance study
//! measures, valued for the player who makes it rather than sampled.
//!
//! A first turn is one stone (weak and komi pie) or a pair of stones (strong pie); turns that a
//! symmetry of the board maps onto each other form one class, valued once. Each class is valued
//! by the player's search from the position after it, with White's swap excluded: under a pie
//! rule White's value there is always a win (it can swap a good opening), which would hide the
//! opening's own value. The classes worth playing (within a margin of the best by search) are
//! then played out from their opening, the pie's swap declined, and Black picks the best:
//! without a pie the highest score, with one the most balanced class, since White answers an
//! opening better than even by swapping it (a score p for the opener becomes min(p, 1 - p)).

use crate::error::EvalError;
use crate::matches::{play_games, MatchOptions};
use crate::players::{Brain, Contestant, RolloutEvaluator};
use crate::score::Score;
use engine::board::Board;
use engine::{Action, AnyGame, Cell, Game, GameConfig, Player};
use net::model::NetEvaluator;
use rand::SeedableRng;
use selfplay::search::Search;
use serde::{Deserialize, Serialize};

/// Black's first turn: every legal stone, or every legal unordered pair.
pub fn first_turns(start: &AnyGame) -> Vec<Vec<Cell>> {
    let mut legal = Vec::new();
    start.legal_actions(&mut legal);
    let firsts: Vec<Cell> = legal
        .iter()
        .filter_map(|a| match a {
            Action::Cell(c) => Some(*c),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for &a in &firsts {
        let mut g = start.clone();
        g.apply(Action::Cell(a));
        if g.to_move() != Player::Black || g.outcome().is_some() {
            out.push(vec![a]);
            continue;
        }
        g.legal_actions(&mut legal);
        out.extend(legal.iter().filter_map(|x| match x {
            Action::Cell(b) if *b > a => Some(vec![a, *b]),
            _ => None,
        }));
    }
    out
}

/// The smallest image of `cells` under the board's symmetries (sorted): one key per class.
pub fn orbit_key(board: &Board, cells: &[Cell]) -> Vec<Cell> {
    board
        .symmetries()
        .iter()
        .map(|s| {
            let mut v: Vec<Cell> = cells.iter().map(|&c| s.apply(c)).collect();
            v.sort_unstable();
            v
        })
        .min()
        .expect("every board has the identity")
}

/// The class of a turn written by its cells' names (`a1`, `c2`; a turn as `a1+c2` splits on
/// `+`): its orbit key, `None` when a name is no cell of `board`.
pub fn class_of<'a>(board: &Board, names: impl IntoIterator<Item = &'a str>) -> Option<Vec<Cell>> {
    let cells: Option<Vec<Cell>> = names.into_iter().map(|c| board.parse_cell(c)).collect();
    Some(orbit_key(board, &cells?))
}

/// The classes of Black's first turns: each key with the number of turns in its class, in
/// the order the classes are first met.
pub fn classes(start: &AnyGame) -> Vec<(Vec<Cell>, usize)> {
    let board = start.board();
    let mut out: Vec<(Vec<Cell>, usize)> = Vec::new();
    for turn in first_turns(start) {
        let key = orbit_key(board, &turn);
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => out.push((key, 1)),
        }
    }
    out
}

/// `a1+c2`.
pub fn turn_name(board: &Board, cells: &[Cell]) -> String {
    cells
        .iter()
        .map(|&c| board.cell_name(c))
        .collect::<Vec<_>>()
        .join("+")
}

/// Black's value (in [-1, 1]) of the position after `cells`, by `player`'s search, with the
/// pie's swap excluded: the opening's own value for the player who made it.
pub fn value_after(
    start: &AnyGame,
    cells: &[Cell],
    player: &Contestant,
    seed: u64,
) -> Result<f64, EvalError> {
    let mut g = start.clone();
    for &c in cells {
        g.apply(Action::Cell(c));
    }
    if let Some(o) = g.outcome() {
        return Ok(o.value_for(Player::Black) as f64);
    }
    let Some(cfg) = player.search_config() else {
        return Err(EvalError::Config(
            "the random player has no values: use mcts:N or a checkpoint".into(),
        ));
    };
    // PUCT: its root value follows the best moves, where a Gumbel root's also averages the
    // considered moves it halves away.
    let cfg = cfg.puct(cfg.visits);
    let mut search = Search::new(cfg, g.clone());
    search.exclude_at_root(Action::Swap);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let result = match &player.brain {
        Brain::Net { model, .. } => search.run(&mut NetEvaluator::new(model), false, &mut rng),
        _ => search.run(&mut RolloutEvaluator::new(seed), false, &mut rng),
    };
    let value = result
        .map_err(|source| EvalError::Search {
            player: player.info.name.clone(),
            source,
        })?
        .value;
    // The search's value is for the player to move.
    Ok(if g.to_move() == Player::Black {
        value
    } else {
        -value
    } as f64)
}

/// How studies play their games.
#[derive(Clone, Debug, PartialEq)]
pub struct StudyOptions {
    /// Games per opening class played out (and from the empty board).
    pub games: usize,
    /// Plies after the decisions a study measures that are sampled (see
    /// [`MatchOptions::sample_plies`]): without them a network plays one game over and over.
    pub sample_plies: u32,
    /// Sampled plies choose among actions within this search value of the best.
    pub sample_margin: f32,
    /// Opening classes more than this far (search value, in [-1, 1]) from the best one are
    /// pruned instead of played out.
    pub margin: f64,
    /// At most this many opening classes are played out.
    pub max_classes: usize,
    pub games_in_flight: usize,
    pub seed: u64,
    pub progress: bool,
    /// Where finished pieces are kept for a study run again after a stop
    /// ([`crate::study::resume`]); none: nothing kept.
    pub resume: Option<std::path::PathBuf>,
}

impl Default for StudyOptions {
    fn default() -> Self {
        StudyOptions {
            games: 100,
            sample_plies: 2,
            sample_margin: 0.1,
            margin: 0.5,
            max_classes: 8,
            games_in_flight: 16,
            seed: 1,
            progress: false,
            resume: None,
        }
    }
}

/// Black's score in a game record: 1 win, 0.5 draw or unfinished, 0 loss.
fn black_score(record: &engine::record::GameRecord) -> f64 {
    match record.result.as_ref().map(|r| r.winner) {
        Some(Some(Player::Black)) => 1.0,
        Some(Some(Player::White)) => 0.0,
        _ => 0.5,
    }
}

/// One game of a study: Black's score, whether White swapped, and its actions.
#[derive(Clone, Debug, PartialEq)]
pub struct Played {
    pub black: f64,
    pub swapped: bool,
    pub actions: Vec<String>,
}

/// `player` against itself, `opts.games` games from `prefix` (the empty board when empty),
/// White's swap declined when `decline_swap`.
pub(crate) fn play_study(
    game: &GameConfig,
    player: &Contestant,
    prefix: &[engine::Action],
    decline_swap: bool,
    opts: &StudyOptions,
) -> Result<Vec<Played>, EvalError> {
    if opts.games == 0 {
        return Err(EvalError::Config(
            "a study needs at least one game (--games)".into(),
        ));
    }
    let match_opts = MatchOptions {
        games: opts.games,
        opening_plies: 0,
        games_in_flight: opts.games_in_flight,
        seed: opts.seed,
        progress: opts.progress,
        sample_plies: opts.sample_plies,
        prefix: prefix.to_vec(),
        sample_margin: Some(opts.sample_margin),
        decline_swap,
        stop: run::Stop::on_signal(),
    };
    let label = format!("{} {}", game.label(), player.info.name);
    let bar = run::progress::bar(opts.games as u64, "games", opts.progress).with_message(label);
    let results = play_games(game, player, player, 0, opts.games, &match_opts, Some(&bar))?;
    bar.finish_and_clear();
    Ok(played(&results))
}

/// What a study keeps of each game of a match.
pub(crate) fn played(results: &[crate::matches::GameResult]) -> Vec<Played> {
    results
        .iter()
        .map(|r| Played {
            black: black_score(&r.record),
            swapped: r.record.actions.iter().any(|a| a == "swap"),
            actions: r.record.actions.clone(),
        })
        .collect()
}

/// Black's score in `games`, each distinct game counted once.
pub fn score_of(games: &[Played]) -> Score {
    Score::of_values(&distinct(games, |g| g.black), games.len() as u64)
}

/// `f` of each distinct game of `games` (games with the same actions count once).
pub(crate) fn distinct(games: &[Played], f: impl Fn(&Played) -> f64) -> Vec<f64> {
    let mut seen = std::collections::HashSet::new();
    games
        .iter()
        .filter(|g| seen.insert(&g.actions))
        .map(f)
        .collect()
}

/// Whether a game has a pie decision (White may swap on its first turn).
pub fn has_swap(game: &GameConfig) -> bool {
    match game {
        GameConfig::Lifeline(o) => o.balance != engine::lifeline::Balance::Komi,
        GameConfig::Vigilance(_) | GameConfig::Leblin(_) => false,
        GameConfig::SquareLifeline(_) => false,
    }
}

/// One class of Black's first turns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpeningClass {
    /// Its representative turn (`c3`, or `a1+c2` for a pair).
    pub opening: String,
    /// First turns in the class.
    pub turns: usize,
    /// The search's value for the player who made it, in [-1, 1], White's swap excluded.
    pub value: f64,
    /// Not played out: its value was more than the study's margin from the best class's (or
    /// the study's `max_classes` were played already).
    pub pruned: bool,
    /// The opener's score in games played from it (the swap declined); `None` when pruned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub played: Option<Score>,
}

/// The first player's best first turn in one game, by one player.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BestOpening {
    /// Whether White may swap the opening (then Black's best is the most balanced class).
    pub pie: bool,
    /// Every class, the one Black chooses first, then the others by how well they serve it.
    pub classes: Vec<OpeningClass>,
    /// The class Black chooses.
    pub best: String,
    /// Black's score with it after White's best reply (under a pie, min(p, 1 - p) of the
    /// opener's score p). Its interval runs from the highest lower bound to the highest upper
    /// bound of the classes played: where every class's interval holds its score, the best
    /// score lies in it, so it covers the choice among classes too.
    pub black: Score,
    /// The opener's score p of the best class, swap declined: under a pie, how far the most
    /// balanced opening is from even (White swaps it when p > 0.5).
    pub opener: Score,
    /// Classes pruned by search value, and the margin that pruned them.
    pub pruned: usize,
    pub margin: f64,
    /// Which plies were sampled, and how.
    pub sampling: String,
}

/// How good a class's search value is for Black, who chooses it: its value, or under a pie
/// how close it is to even (White swaps a good opening).
fn merit(pie: bool, value: f64) -> f64 {
    if pie {
        -value.abs()
    } else {
        value
    }
}

/// Black's score after White's best reply to an opening the opener scores `p` with.
fn after_reply(pie: bool, p: f64) -> f64 {
    if pie {
        p.min(1.0 - p)
    } else {
        p
    }
}

/// [`after_reply`] of every score in `[lo, hi]`: its lowest and highest value.
fn reply_bounds(pie: bool, (lo, hi): (f64, f64)) -> (f64, f64) {
    if !pie {
        return (lo, hi);
    }
    let top = if lo <= 0.5 && 0.5 <= hi {
        0.5
    } else {
        after_reply(true, lo).max(after_reply(true, hi))
    };
    (after_reply(true, lo).min(after_reply(true, hi)), top)
}

/// Everything that decides a best opening: a study run again finds it kept under this key
/// ([`crate::study::resume`]).
#[derive(Serialize)]
struct OpeningKey<'a> {
    game: &'a GameConfig,
    player: &'a crate::results::PlayerInfo,
    weights: Option<&'a str>,
    search: Option<&'a selfplay::search::SearchConfig>,
    games: usize,
    sample_plies: u32,
    sample_margin: f32,
    margin: f64,
    max_classes: usize,
    games_in_flight: usize,
    seed: u64,
}

/// The first player's best opening in `game` by `player`, and the distinct games of the class
/// chosen (Black's score in each: the komi study fits its curve to them). Kept in
/// `opts.resume` when it is done, and read back from there by a study run again.
pub fn best_opening(
    game: &GameConfig,
    player: &Contestant,
    opts: &StudyOptions,
) -> Result<(BestOpening, Vec<f64>), EvalError> {
    let key = OpeningKey {
        game,
        player: &player.info,
        weights: player.weights_checksum(),
        search: player.search_config(),
        games: opts.games,
        sample_plies: opts.sample_plies,
        sample_margin: opts.sample_margin,
        margin: opts.margin,
        max_classes: opts.max_classes,
        games_in_flight: opts.games_in_flight,
        seed: opts.seed,
    };
    crate::study::resume::remembered(opts.resume.as_deref(), &key, || {
        play_best_opening(game, player, opts)
    })
}

fn play_best_opening(
    game: &GameConfig,
    player: &Contestant,
    opts: &StudyOptions,
) -> Result<(BestOpening, Vec<f64>), EvalError> {
    let start = game
        .start()
        .map_err(|e| EvalError::Config(format!("{}: {e}", game.label())))?;
    let pie = has_swap(game);
    let valued = value_classes(&start, pie, player, opts)?;
    let top = valued.first().map_or(0.0, |v| merit(pie, v.2));
    let classes = valued.len().min(opts.max_classes) as u64;
    let bar = run::progress::bar(classes, "classes", opts.progress).with_message(format!(
        "openings {} {}",
        game.label(),
        player.info.name
    ));
    let mut classes = Vec::new();
    let mut chosen_games: Option<(f64, Vec<Played>)> = None;
    for (k, (key, turns, value)) in valued.into_iter().enumerate() {
        let keep = k < opts.max_classes.max(1) && merit(pie, value) >= top - opts.margin;
        let played = if keep {
            let prefix: Vec<Action> = key.iter().map(|&c| Action::Cell(c)).collect();
            let class_opts = StudyOptions {
                seed: opts.seed.wrapping_add(7919 * k as u64),
                progress: false,
                games: games_per_class(player, opts),
                ..opts.clone()
            };
            let games = play_study(game, player, &prefix, pie, &class_opts)?;
            bar.inc(1);
            let score = score_of(&games);
            // Black's choice: the played class with the best score after White's reply.
            let merit = after_reply(pie, score.estimate);
            let better = match &chosen_games {
                Some((best, _)) => merit > *best,
                None => true,
            };
            if better {
                chosen_games = Some((merit, games));
                classes.insert(
                    0,
                    OpeningClass::new(&start, &key, turns, value, Some(score)),
                );
                continue;
            }
            Some(score)
        } else {
            None
        };
        classes.push(OpeningClass::new(&start, &key, turns, value, played));
    }
    bar.finish_and_clear();
    let chosen = chosen_games
        .expect("the best class by search is always played")
        .1;
    let best = BestOpening {
        pie,
        best: classes[0].opening.clone(),
        black: best_after_reply(pie, &classes),
        opener: classes[0]
            .played
            .clone()
            .expect("the chosen class was played"),
        pruned: classes.iter().filter(|c| c.played.is_none()).count(),
        margin: opts.margin,
        classes,
        sampling: sampling_note(opts, pie),
    };
    Ok((best, distinct(&chosen, |g| g.black)))
}

/// A deterministic player without sampled plies plays one game over and over: it plays it once.
pub(crate) fn games_per_class(player: &Contestant, opts: &StudyOptions) -> usize {
    if opts.sample_plies == 0 && player.deterministic() {
        1
    } else {
        opts.games
    }
}

/// Every class of Black's first turns with its search value, the best for Black first.
fn value_classes(
    start: &AnyGame,
    pie: bool,
    player: &Contestant,
    opts: &StudyOptions,
) -> Result<Vec<(Vec<Cell>, usize, f64)>, EvalError> {
    let mut valued = Vec::new();
    for (k, (key, turns)) in classes(start).into_iter().enumerate() {
        let value = value_after(start, &key, player, opts.seed.wrapping_add(k as u64))?;
        valued.push((key, turns, value));
    }
    valued.sort_by(|a, b| merit(pie, b.2).total_cmp(&merit(pie, a.2)));
    Ok(valued)
}

impl OpeningClass {
    fn new(
        start: &AnyGame,
        key: &[Cell],
        turns: usize,
        value: f64,
        played: Option<Score>,
    ) -> OpeningClass {
        OpeningClass {
            opening: turn_name(start.board(), key),
            turns,
            value,
            pruned: played.is_none(),
            played,
        }
    }
}

/// Black's score with the first of `classes` (its choice) after White's best reply. The
/// interval runs from the highest lower bound to the highest upper bound over the classes
/// played: where each holds its class's score, the best of those scores lies in it.
fn best_after_reply(pie: bool, classes: &[OpeningClass]) -> Score {
    let played: Vec<&Score> = classes.iter().filter_map(|c| c.played.as_ref()).collect();
    let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    for s in &played {
        let (l, h) = reply_bounds(pie, s.bounds());
        lo = lo.max(l);
        hi = hi.max(h);
    }
    Score::with_bounds(
        after_reply(pie, played[0].estimate),
        lo,
        hi,
        played.iter().map(|s| s.games).sum(),
        played.iter().map(|s| s.distinct_games).sum(),
    )
}

/// What a study's JSON says about the plies it sampled.
pub fn sampling_note(opts: &StudyOptions, pie: bool) -> String {
    let after = if pie {
        "Black's first turn and White's swap decision (declined)"
    } else {
        "Black's first turn"
    };
    if opts.sample_plies == 0 {
        return format!(
            "no plies sampled: every game from an opening is the player's best line after {after}"
        );
    }
    format!(
        "the {} plies after {after} sampled in proportion to visits among the actions whose search value is within {} of the search's choice; the decisions measured are never sampled",
        opts.sample_plies, opts.sample_margin
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(s: &str) -> GameConfig {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn first_turns_are_single_stones_or_pairs_by_balance() {
        let weak = game(r#"{"game":"lifeline","options":{"size":3,"balance":"weak"}}"#)
            .start()
            .unwrap();
        assert_eq!(first_turns(&weak).len(), 19, "every cell of side 3");
        assert_eq!(classes(&weak).len(), 4, "4 classes of cells on side 3");
        let strong = game(r#"{"game":"lifeline","options":{"size":3,"balance":"strong"}}"#)
            .start()
            .unwrap();
        let pairs = first_turns(&strong);
        assert!(pairs.iter().all(|p| p.len() == 2 && p[0] < p[1]));
        // Adjacent pairs are illegal on an empty board (one dead group): 19*18/2 - 42 edges.
        assert_eq!(pairs.len(), 171 - 42);
        let c = classes(&strong);
        assert_eq!(c.len(), 17, "17 classes of legal pairs on side 3");
        assert_eq!(c.iter().map(|x| x.1).sum::<usize>(), pairs.len());
    }

    #[test]
    fn an_orbit_key_is_the_same_for_every_image() {
        let g = game(r#"{"game":"lifeline","options":{"size":4,"balance":"strong"}}"#)
            .start()
            .unwrap();
        let b = g.board();
        let pair = [b.parse_cell("a1").unwrap(), b.parse_cell("c2").unwrap()];
        let key = orbit_key(b, &pair);
        for s in b.symmetries() {
            let image: Vec<Cell> = pair.iter().map(|&c| s.apply(c)).collect();
            assert_eq!(orbit_key(b, &image), key);
        }
    }

    #[test]
    fn under_a_pie_the_best_reply_halves_an_opening_and_keeps_its_interval() {
        let close = |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).abs() + (a.1 - b.1).abs() < 1e-12;
        assert!((after_reply(true, 0.9) - 0.1).abs() < 1e-12);
        assert_eq!(after_reply(false, 0.9), 0.9);
        // An interval across one half reaches one half.
        assert!(close(reply_bounds(true, (0.3, 0.8)), (0.2, 0.5)));
        assert!(close(reply_bounds(true, (0.7, 0.9)), (0.1, 0.3)));
        assert!(merit(true, 0.1) > merit(true, -0.6));
        assert!(merit(false, 0.1) < merit(false, 0.6));
    }
}
