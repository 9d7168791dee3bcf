//! One opening class measured: the opener's games from it in batches until the sequential
//! test calls the class clear or enough distinct games are played, its win rate and swap
//! category, and the player's search value and raw value head beside them. A class measured
//! once is kept for a resume ([`crate::study::resume`]).

use super::{PracticalOptions, CLEAR, EVEN_BAND};
use crate::elo::Wdl;
use crate::error::EvalError;
use crate::matches::{play_games, MatchOptions};
use crate::players::{Brain, Contestant};
use crate::score::{Estimate, Z95};
use crate::sprt::Decision;
use crate::study::openings::{classes, distinct, has_swap, played, turn_name, value_after, Played};
use engine::{Action, AnyGame, Cell, Game, GameConfig, Player};
use serde::{Deserialize, Serialize};

/// A swap decision (docs/studies.md): from the opener's win rate with the swap declined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    Swap,
    Keep,
    NearEven,
    Undetermined,
}

impl Category {
    /// The category of a win rate's 95% interval.
    pub fn of(interval: &Estimate) -> Category {
        let (lo, hi) = EVEN_BAND;
        if interval.lo >= hi {
            Category::Swap
        } else if interval.hi <= lo {
            Category::Keep
        } else if interval.lo >= lo && interval.hi <= hi {
            Category::NearEven
        } else {
            Category::Undetermined
        }
    }
}

/// The opener's games from one opening (at one komi).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassGames {
    /// The class's representative turn (`c3`, `a1+c2`).
    pub opening: String,
    /// First turns in the class.
    pub turns: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub komi: Option<u32>,
    /// The opener's score in each distinct game, in order of play.
    pub outcomes: Vec<f64>,
    pub games: u64,
    /// Its win rate over distinct games with the Wilson 95% interval (one game included).
    pub win_rate: Estimate,
    pub category: Category,
    /// The sequential test stopped it before `--games`.
    pub stopped_early: bool,
    /// The player's search value for the opener (swap excluded), and the raw value head's
    /// (no search; a network only), both in [-1, 1].
    pub search_value: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_head: Option<f64>,
    /// The solver's result for the opener (swap declined), where it was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact_win: Option<bool>,
}

impl ClassGames {
    /// A clear win or loss against the solver's result: decided by the other side's mistakes.
    pub fn against_the_solver(&self) -> bool {
        matches!(
            (self.exact_win, self.category),
            (Some(false), Category::Swap) | (Some(true), Category::Keep)
        )
    }

    /// On the solver's side of one half.
    pub fn agrees_with_the_solver(&self) -> Option<bool> {
        self.exact_win.map(|w| (self.win_rate.estimate > 0.5) == w)
    }
}

/// A win rate over distinct outcomes with its Wilson 95% interval, whatever their number.
fn win_rate(outcomes: &[f64]) -> Estimate {
    win_rate_at(outcomes, Z95)
}

/// [`win_rate`] with the Wilson interval at `z` (a family's simultaneous intervals); no
/// outcomes: anything, 0.5 [0, 1].
pub(super) fn win_rate_at(outcomes: &[f64], z: f64) -> Estimate {
    Estimate::score_at(outcomes.iter().sum(), outcomes.len() as u64, z).unwrap_or(Estimate {
        estimate: 0.5,
        lo: 0.0,
        hi: 1.0,
    })
}

/// Whether the sequential test has decided a class: clearly won or clearly lost.
fn clear(outcomes: &[f64]) -> bool {
    let wins = outcomes.iter().filter(|&&x| x > 0.75).count() as u64;
    let losses = outcomes.iter().filter(|&&x| x < 0.25).count() as u64;
    let draws = outcomes.len() as u64 - wins - losses;
    let won = CLEAR.status(Wdl::new(wins, draws, losses)).decision == Decision::AcceptH1;
    let lost = CLEAR.status(Wdl::new(losses, draws, wins)).decision == Decision::AcceptH1;
    won || lost
}

/// The player's games from `prefix`, in batches until the sequential test stops them, or
/// `opts.games` of them are distinct, or `opts.max_games` are played: the opener's (Black's)
/// score in each distinct game, the games played, and whether the test stopped them.
fn play_class(
    game: &GameConfig,
    player: &Contestant,
    prefix: &[Action],
    seed: u64,
    opts: &PracticalOptions,
) -> Result<(Vec<f64>, u64, bool), EvalError> {
    let match_opts = MatchOptions {
        games: opts.max_games,
        opening_plies: 0,
        games_in_flight: opts.games_in_flight.max(1),
        seed,
        progress: false,
        sample_plies: opts.sample_plies,
        prefix: prefix.to_vec(),
        sample_margin: Some(opts.sample_margin),
        decline_swap: has_swap(game),
        stop: run::Stop::on_signal(),
    };
    let mut games: Vec<Played> = Vec::new();
    let mut outcomes = Vec::new();
    while outcomes.len() < opts.games && games.len() < opts.max_games {
        let n = opts.batch.min(opts.max_games - games.len());
        let results = play_games(game, player, player, games.len(), n, &match_opts, None)?;
        games.extend(played(&results));
        outcomes = distinct(&games, |g| g.black);
        // Stop only where the stop decides something: a class the Wald test calls clear whose
        // interval has not yet cleared the near-even band would stay undetermined.
        let decided = matches!(
            Category::of(&win_rate(&outcomes)),
            Category::Swap | Category::Keep
        );
        if clear(&outcomes) && decided {
            return Ok((outcomes, games.len() as u64, true));
        }
    }
    Ok((outcomes, games.len() as u64, false))
}

/// The raw value head's value for Black of `g` (no search); `None` for a player without one.
pub(crate) fn value_head(g: &AnyGame, player: &Contestant) -> Option<f64> {
    let Brain::Net { model, .. } = &player.brain else {
        return None;
    };
    if let Some(o) = g.outcome() {
        return Some(o.value_for(Player::Black) as f64);
    }
    let mut legal = Vec::new();
    g.legal_actions(&mut legal);
    let mut out = Vec::new();
    let mut eval = net::model::NetEvaluator::new(model);
    selfplay::search::Evaluator::evaluate(&mut eval, std::slice::from_ref(g), &[legal], &mut out);
    let v = out.first()?.value as f64;
    Some(if g.to_move() == Player::Black { v } else { -v })
}

/// Everything that decides one class's games: a study run again finds them kept under it.
#[derive(Serialize)]
struct ClassKey<'a> {
    game: &'a GameConfig,
    player: &'a crate::results::PlayerInfo,
    weights: Option<&'a str>,
    /// The player's search (its config file's `[search]`): the same weights searched otherwise
    /// play other games, so a study run again with another search plays its classes again.
    search: Option<&'a selfplay::search::SearchConfig>,
    opening: &'a [Cell],
    seed: u64,
    opts: &'a PracticalOptions,
}

/// One class of `game` measured: its games and its values (`search_value`, the player's search
/// value of the class, is computed once by the caller, which orders the classes by it).
fn measure(
    game: &GameConfig,
    start: &AnyGame,
    player: &Contestant,
    (key, turns, search_value): (&[Cell], usize, f64),
    seed: u64,
    opts: &PracticalOptions,
) -> Result<ClassGames, EvalError> {
    let piece = ClassKey {
        game,
        player: &player.info,
        weights: player.weights_checksum(),
        search: player.search_config(),
        opening: key,
        seed,
        opts,
    };
    crate::study::resume::remembered(opts.resume.as_deref(), &piece, || {
        let prefix: Vec<Action> = key.iter().map(|&c| Action::Cell(c)).collect();
        let mut after = start.clone();
        prefix.iter().for_each(|&a| after.apply(a));
        let (outcomes, games, stopped_early) = play_class(game, player, &prefix, seed, opts)?;
        let rate = win_rate(&outcomes);
        Ok(ClassGames {
            opening: turn_name(start.board(), key),
            turns,
            komi: (!has_swap(game)).then(|| game.komi()).flatten(),
            outcomes,
            games,
            win_rate: rate,
            category: Category::of(&rate),
            stopped_early,
            search_value,
            value_head: value_head(&after, player),
            exact_win: None,
        })
    })
}

/// Every class of Black's first turn in `game`, or those `opts.classes` names (at most
/// `opts.max_classes`, closest to even by search value first), measured. Each class keeps its
/// seed whichever are measured.
pub fn measure_classes(
    game: &GameConfig,
    player: &Contestant,
    opts: &PracticalOptions,
    bar: &indicatif::ProgressBar,
) -> Result<(Vec<ClassGames>, usize), EvalError> {
    let start = game
        .start()
        .map_err(|e| EvalError::Config(format!("{}: {e}", game.label())))?;
    let all = classes(&start);
    let mut order: Vec<(usize, f64)> = Vec::with_capacity(all.len());
    for k in named_classes(game, &start, &all, &opts.classes)? {
        order.push((k, value_after(&start, &all[k].0, player, opts.seed)?));
    }
    order.sort_by(|a, b| a.1.abs().total_cmp(&b.1.abs()));
    let take = if opts.max_classes == 0 {
        order.len()
    } else {
        opts.max_classes.min(order.len())
    };
    let mut out = Vec::with_capacity(take);
    for &(k, value) in &order[..take] {
        let (key, turns) = &all[k];
        let seed = opts.seed.wrapping_add(7919 * k as u64);
        out.push(measure(
            game,
            &start,
            player,
            (key, *turns, value),
            seed,
            opts,
        )?);
        bar.inc(1);
    }
    Ok((out, all.len()))
}

/// The indices in `all` of the classes `names` names by their representative turn (as the
/// study's tables print them), or every index when `names` is empty; an error names a class
/// that is not one of `game`'s, with the classes there are, or one named twice (it would be
/// measured twice, on the same seed).
pub(crate) fn named_classes(
    game: &GameConfig,
    start: &AnyGame,
    all: &[(Vec<Cell>, usize)],
    names: &[String],
) -> Result<Vec<usize>, EvalError> {
    if names.is_empty() {
        return Ok((0..all.len()).collect());
    }
    let turns: Vec<String> = all
        .iter()
        .map(|(key, _)| turn_name(start.board(), key))
        .collect();
    let mut seen = std::collections::HashSet::new();
    if let Some(name) = names.iter().find(|n| !seen.insert(n.as_str())) {
        return Err(EvalError::Config(format!(
            "--classes: {name} is named twice"
        )));
    }
    names
        .iter()
        .map(|name| {
            turns.iter().position(|t| t == name).ok_or_else(|| {
                EvalError::Config(format!(
                    "--classes: {name} is not a class of {}'s first turn (its classes: {})",
                    game.label(),
                    turns.join(", ")
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::practical::tests::{doctor_the_kept_piece, interval, weak_side_3};

    /// `--classes` picks classes by the names the tables print, keeps their indices (so their
    /// seeds), and refuses a name that is not a class. Fails if a name matched the wrong class,
    /// an empty list measured fewer than all, or an unknown name were skipped silently.
    #[test]
    fn classes_are_picked_by_their_printed_names() {
        let game = weak_side_3();
        let start = game.start().unwrap();
        let all = classes(&start);
        let name = |k: usize| turn_name(start.board(), &all[k].0);
        let every = named_classes(&game, &start, &all, &[]).unwrap();
        assert_eq!(every, (0..all.len()).collect::<Vec<_>>());
        let last = name(all.len() - 1);
        let first = name(0);
        let picked = named_classes(&game, &start, &all, &[last.clone(), first]).unwrap();
        assert_eq!(picked, [all.len() - 1, 0]);
        let err = named_classes(&game, &start, &all, &["z9".into()]).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("z9") && text.contains(&last), "{text}");
        // A class named twice would be measured twice on its one seed: refused.
        let twice = named_classes(&game, &start, &all, &[last.clone(), last.clone()]);
        let text = twice.unwrap_err().to_string();
        assert!(
            text.contains("named twice") && text.contains(&last),
            "{text}"
        );
    }

    /// `games` counts distinct games: a player that repeats its line plays on to `max_games`,
    /// and no further. Fails if the loop stopped at `games` played (4 here), or ran past the
    /// cap, or counted a repeated game twice.
    #[test]
    fn a_class_plays_until_its_distinct_games_or_the_cap() {
        let game = weak_side_3();
        let net = net::network::NetConfig {
            blocks: 1,
            channels: 8,
            head_channels: 4,
            value_hidden: 8,
            pool_every: 1,
        };
        let device = net::model::parse_device("cpu").unwrap();
        let model = net::model::Model::random(&game, &net, &device, 3).unwrap();
        let base = selfplay::search::SearchConfig::default();
        let player = Contestant::network(&model.for_inference(), "tiny", 4, &base);
        let opts = PracticalOptions {
            games: 4,
            max_games: 12,
            batch: 4,
            // No sampled plies: one network plays one line, a single distinct game.
            sample_plies: 0,
            ..PracticalOptions::default()
        };
        let prefix = [Action::Cell(game.start().unwrap().board().cells()[0])];
        let (outcomes, played, stopped) = play_class(&game, &player, &prefix, 1, &opts).unwrap();
        assert_eq!((outcomes.len(), played, stopped), (1, 12, false));
    }

    /// A class's games are kept in `.resume` under a key that holds the player's search: the
    /// same command again reads them back, another search plays them again. Fails if a kept
    /// class were played again (the doctored piece not read), or if a study whose config
    /// changed the search (another `c_puct`) read the games of the old one.
    #[test]
    fn a_class_is_kept_for_its_player_and_search_only() {
        let game = weak_side_3();
        let start = game.start().unwrap();
        let dir = std::env::temp_dir().join(format!("eval-class-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let opts = PracticalOptions {
            games: 2,
            max_games: 2,
            resume: Some(dir.clone()),
            ..PracticalOptions::default()
        };
        let base = selfplay::search::SearchConfig::default();
        let player = Contestant::mcts(8, &base);
        let class = (&[start.board().cells()[0]][..], 1, 0.0);
        let first = measure(&game, &start, &player, class, 1, &opts).unwrap();
        assert_eq!(first.games, 2);
        doctor_the_kept_piece(&dir, |class| class["games"] = 99.into());
        let again = measure(&game, &start, &player, class, 1, &opts).unwrap();
        assert_eq!(again.games, 99, "the kept class was played again");
        let other_search = selfplay::search::SearchConfig {
            c_puct: base.c_puct * 2.0,
            ..base.clone()
        };
        let other = Contestant::mcts(8, &other_search);
        let replayed = measure(&game, &start, &other, class, 1, &opts).unwrap();
        assert_eq!(
            replayed.games, 2,
            "another search read the old search's games"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Fails if one deterministic game (a network's repeated line) could decide a category.
    #[test]
    fn categories_need_an_interval_clear_of_the_band_and_one_game_decides_nothing() {
        assert_eq!(Category::of(&interval(0.9, 0.7, 0.97)), Category::Swap);
        assert_eq!(Category::of(&interval(0.1, 0.02, 0.3)), Category::Keep);
        assert_eq!(Category::of(&interval(0.5, 0.4, 0.6)), Category::NearEven);
        assert_eq!(
            Category::of(&interval(0.7, 0.55, 0.8)),
            Category::Undetermined
        );
        assert_eq!(Category::of(&win_rate(&[1.0])), Category::Undetermined);
        assert_eq!(Category::of(&win_rate(&[0.0])), Category::Undetermined);
        assert_eq!(Category::of(&win_rate(&[1.0; 16])), Category::Swap);
        assert_eq!(Category::of(&win_rate(&[])), Category::Undetermined);
    }

    /// Fails if the sequential test stopped a class that is not clear, or never stopped one
    /// that is.
    #[test]
    fn the_sequential_test_stops_clear_classes_only() {
        assert!(clear(&[1.0; 16]), "16 straight wins");
        assert!(clear(&[0.0; 16]), "16 straight losses");
        let even: Vec<f64> = (0..64).map(|i| (i % 2) as f64).collect();
        assert!(!clear(&even), "32 wins of 64");
        assert!(!clear(&[1.0, 1.0, 0.0]));
    }
}
