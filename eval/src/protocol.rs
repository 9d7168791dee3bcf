//! `eval serve`: a line protocol on stdin and stdout in the spirit of GTP, so that other
//! programs (a GUI, a tournament manager, a script) can ask a player for moves and analyses.
//!
//! Every command line gets exactly one response: `= TEXT` on success or `? MESSAGE` on error,
//! ended by an empty line. As in GTP, a line may start with a numeric id, which the response
//! repeats (`12 genmove` → `=12 e5`); empty lines and lines starting with `#` are ignored. An
//! unknown command, a malformed or illegal action, or a line of garbage gets an error and the
//! session goes on. Commands:
//!
//! | command | response |
//! |---|---|
//! | `name`, `version`, `protocol_version` | who answers |
//! | `list_commands`, `known_command NAME` | the commands |
//! | `game JSON` | switch game (`{"game":"lifeline","options":{"size":5}}`) and clear |
//! | `clear` (`clear_board`) | back to the start |
//! | `setposition JSON` | a position in the engine's notation ([`engine::GameConfig::setup`]) |
//! | `play [COLOUR] ACTION` | play an action (`e5`, `swap`, `komi`, `prisoner`) |
//! | `undo` | take back the last action |
//! | `genmove [COLOUR]` | search, play and return the most visited action |
//! | `analyze` | one JSON line: the value for the player to move and, per searched action, visits, prior, value and principal variation; for a network also `ownership`, per cell, from Black's view (1: Black's at the end) |
//! | `showboard` | the position's description (JSON), the player to move, the ply and the result |
//! | `legal` | every legal action |
//! | `svg [ownership]` | the position as one SVG ([`crate::render::position_svg`]); `ownership`: with the network's ownership as an overlay |
//! | `swapmap` | the swap map of the game's openings by the player's own search, as SVG ([`crate::swapmap`]) |
//! | `result` | `black`, `white`, `draw` with the reason, or `none` |
//! | `visits [N]` | visits (playouts for `mcts:N`) per search; without N, the current number |
//! | `time_per_move SECONDS` | search each decision for that long instead (0: back to visits) |
//! | `quit` | ends the session |

use crate::players::{Brain, Contestant, RolloutEvaluator};
use engine::{Action, AnyGame, Game, GameConfig, Player};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use selfplay::model::NetEvaluator;
use selfplay::search::{Search, SearchConfig};
use std::collections::HashMap;
use std::io::{BufRead, Write};

/// The commands, in `list_commands` order.
pub const COMMANDS: [&str; 21] = [
    "name",
    "version",
    "protocol_version",
    "list_commands",
    "known_command",
    "game",
    "clear",
    "clear_board",
    "setposition",
    "play",
    "undo",
    "genmove",
    "analyze",
    "showboard",
    "legal",
    "svg",
    "swapmap",
    "result",
    "visits",
    "time_per_move",
    "quit",
];

/// Longest principal variation `analyze` reports.
const PV_LEN: usize = 10;

/// One client's session: the game, the positions played so far, and the player answering.
pub struct Session {
    game: GameConfig,
    /// The starting (or set-up) position first, the current one last.
    history: Vec<AnyGame>,
    /// The action that made each position of `history` after the first, as written.
    moves: Vec<String>,
    player: Contestant,
    visits: u32,
    /// Search each decision this long instead of for `visits` visits.
    time_per_move: Option<std::time::Duration>,
    seed: u64,
}

/// What a command line asks of the session.
#[derive(Debug, PartialEq)]
pub enum Reply {
    Ok(String),
    Err(String),
    /// `quit`: answered, then the session ends.
    Quit,
}

impl Session {
    /// A session of `game` answered by `player` (which must be able to play it).
    pub fn new(game: GameConfig, player: Contestant, seed: u64) -> Result<Session, String> {
        let visits = player.search_config().map_or(1, |c| c.visits);
        let mut s = Session {
            history: Vec::new(),
            moves: Vec::new(),
            game: game.clone(),
            player,
            visits,
            time_per_move: None,
            seed,
        };
        s.set_game(game)?;
        Ok(s)
    }

    fn current(&self) -> &AnyGame {
        self.history
            .last()
            .expect("a session always holds a position")
    }

    fn set_game(&mut self, game: GameConfig) -> Result<(), String> {
        if let Brain::Net { model, .. } = &self.player.brain {
            model
                .meta
                .plays(&game)
                .map_err(|why| format!("{} cannot play this game: {why}", self.player.info.name))?;
        }
        let start = game.start().map_err(|e| e.to_string())?;
        self.game = game;
        self.reset(start);
        Ok(())
    }

    /// Start again from `position`.
    fn reset(&mut self, position: AnyGame) {
        self.history = vec![position];
        self.moves.clear();
    }

    /// `next`, reached from the current position by `action`, becomes the current position.
    fn push(&mut self, next: AnyGame, action: String) {
        self.history.push(next);
        self.moves.push(action);
    }

    /// Answer one line (without its id).
    pub fn handle(&mut self, line: &str) -> Reply {
        let (name, args) = match line.trim().split_once(char::is_whitespace) {
            Some((n, a)) => (n, a.trim()),
            None => (line.trim(), ""),
        };
        if name == "quit" {
            return Reply::Quit;
        }
        // A bug must not end a client's session: it becomes that command's error.
        let answer =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.command(name, args)));
        match answer {
            Ok(Ok(text)) => Reply::Ok(text),
            Ok(Err(why)) => Reply::Err(why),
            Err(_) => Reply::Err(format!("internal error in `{name}`")),
        }
    }

    fn command(&mut self, name: &str, args: &str) -> Result<String, String> {
        match name {
            "name" => Ok("lifeline-zero".into()),
            "version" => Ok(env!("CARGO_PKG_VERSION").into()),
            "protocol_version" => Ok("1".into()),
            "list_commands" => Ok(COMMANDS.join("\n")),
            "known_command" => Ok(COMMANDS.contains(&args).to_string()),
            "game" => {
                let game: GameConfig = serde_json::from_str(args).map_err(|e| {
                    format!("expected a game such as {{\"game\":\"lifeline\",\"options\":{{\"size\":5}}}}: {e}")
                })?;
                self.set_game(game)?;
                Ok(self.game.label())
            }
            "clear" | "clear_board" => {
                self.history.truncate(1);
                self.moves.clear();
                Ok(String::new())
            }
            "setposition" => {
                let g = self.game.setup(args).map_err(|e| e.to_string())?;
                self.reset(g);
                Ok(String::new())
            }
            "play" => self.play(args),
            "undo" => {
                if self.history.len() < 2 {
                    return Err("nothing to undo".into());
                }
                self.history.pop();
                self.moves.pop();
                Ok(String::new())
            }
            "genmove" => self.genmove(args),
            "analyze" => self.analyze(),
            "showboard" => Ok(self.showboard()),
            "legal" => {
                let g = self.current();
                let mut legal = Vec::new();
                if g.outcome().is_none() {
                    g.legal_actions(&mut legal);
                }
                let names: Vec<String> = legal.iter().map(|&a| g.action_to_string(a)).collect();
                Ok(names.join(" "))
            }
            "svg" => self.svg(args),
            "swapmap" => self.swapmap(),
            "result" => Ok(result_text(self.current())),
            "visits" if args.is_empty() => Ok(self.visits.to_string()),
            "visits" => match args.parse::<u32>() {
                Ok(n) if (1..=1_000_000).contains(&n) => {
                    self.visits = n;
                    Ok(String::new())
                }
                _ => Err(format!(
                    "visits takes a number from 1 to 1000000 (got `{args}`)"
                )),
            },
            "time_per_move" => match args.parse::<f64>() {
                Ok(0.0) => {
                    self.time_per_move = None;
                    Ok(String::new())
                }
                Ok(t) if t > 0.0 && t <= 3600.0 => {
                    self.time_per_move = Some(std::time::Duration::from_secs_f64(t));
                    Ok(String::new())
                }
                _ => Err(format!(
                    "time_per_move takes seconds from 0 (off) to 3600 (got `{args}`)"
                )),
            },
            "" => Err("empty command".into()),
            _ => Err(format!(
                "unknown command `{}` (list_commands lists them)",
                name.escape_debug()
            )),
        }
    }

    /// `ACTION` or `COLOUR ACTION`: the colour, when given, must be the player to move.
    fn play(&mut self, args: &str) -> Result<String, String> {
        let mut words = args.split_whitespace();
        let (colour, action) = match (words.next(), words.next(), words.next()) {
            (Some(a), None, _) => (None, a),
            (Some(c), Some(a), None) => (Some(c), a),
            _ => return Err("play takes an action, optionally after a colour: play e5".into()),
        };
        self.check_colour(colour)?;
        let mut g = self.current().clone();
        let action = g.parse_action(action).map_err(|e| e.to_string())?;
        g.try_apply(action).map_err(|e| e.to_string())?;
        let text = g.action_to_string(action);
        self.push(g, text);
        Ok(String::new())
    }

    fn check_colour(&self, colour: Option<&str>) -> Result<(), String> {
        let Some(c) = colour else { return Ok(()) };
        let wanted = match c.to_ascii_lowercase().as_str() {
            "b" | "black" => Player::Black,
            "w" | "white" => Player::White,
            _ => {
                return Err(format!(
                    "`{}` is not a colour (black or white)",
                    c.escape_debug()
                ))
            }
        };
        let to_move = self.current().to_move();
        if wanted != to_move {
            return Err(format!("{to_move} is to move, not {wanted}"));
        }
        Ok(())
    }

    fn genmove(&mut self, args: &str) -> Result<String, String> {
        self.check_colour((!args.is_empty()).then_some(args))?;
        let g = self.current().clone();
        if g.outcome().is_some() {
            return Err("the game is over".into());
        }
        let action = match &self.player.brain {
            Brain::Random => {
                let mut legal = Vec::new();
                g.legal_actions(&mut legal);
                legal[self.rng().gen_range(0..legal.len())]
            }
            _ => self.search(&g)?.result().best(),
        };
        let mut next = g.clone();
        next.apply(action);
        let text = g.action_to_string(action);
        self.push(next, text.clone());
        Ok(text)
    }

    fn analyze(&mut self) -> Result<String, String> {
        let g = self.current().clone();
        if g.outcome().is_some() {
            return Err("the game is over".into());
        }
        if matches!(self.player.brain, Brain::Random) {
            return Err("the random player does not analyse: serve mcts:N or a network".into());
        }
        let search = self.search(&g)?;
        let result = search.result();
        let name = |a: Action| g.action_to_string(a);
        let moves: Vec<serde_json::Value> = search
            .analysis(PV_LEN)
            .into_iter()
            .filter(|m| m.visits > 0)
            .map(|m| {
                serde_json::json!({
                    "action": name(m.action),
                    "visits": m.visits,
                    "prior": m.prior,
                    "value": m.value,
                    "pv": m.pv.iter().map(|&a| name(a)).collect::<Vec<_>>(),
                })
            })
            .collect();
        let mut analysis = serde_json::json!({
            "to_move": g.to_move().to_string(),
            "value": result.value,
            "visits": result.root_visits,
            "moves": moves,
        });
        if let Some(ownership) = self.ownership(&g) {
            let rounded = ownership
                .into_iter()
                .map(|(cell, v)| (cell, serde_json::json!((v * 1000.0).round() / 1000.0)))
                .collect::<serde_json::Map<_, _>>();
            analysis["ownership"] = serde_json::Value::Object(rounded);
        }
        Ok(analysis.to_string())
    }

    /// The network's ownership of each cell of `g`, from Black's view (1: Black's at the
    /// end), by cell name; `None` for players without a network.
    fn ownership(&self, g: &AnyGame) -> Option<HashMap<String, f64>> {
        let Brain::Net { model, .. } = &self.player.brain else {
            return None;
        };
        // The head gives the mover's view.
        let sign = if g.to_move() == Player::Black {
            1.0
        } else {
            -1.0
        };
        let grid = model.ownership(g);
        let board = g.board();
        Some(
            board
                .cells()
                .iter()
                .map(|&c| (board.cell_name(c), sign * grid[board.grid_index(c)] as f64))
                .collect(),
        )
    }

    /// `svg [ownership]`: the current position, the last move ringed and its captures crossed.
    fn svg(&self, args: &str) -> Result<String, String> {
        let g = self.current();
        // `moves` is one shorter than `history`: a last move has the position before it.
        let mut marks = match self.moves.last() {
            Some(last) => {
                let before = &self.history[self.history.len() - 2];
                crate::render::marks_of_move(before, g, last, self.game.label())
            }
            None => crate::render::Marks {
                title: self.game.label(),
                ..Default::default()
            },
        };
        match args {
            "" => {}
            "ownership" => {
                marks.overlay = self.ownership(g).ok_or_else(|| {
                    format!("{} has no network: no ownership", self.player.info.name)
                })?;
                marks.title += ": ownership (red Black's, blue White's)";
            }
            _ => return Err(format!("svg takes nothing or `ownership` (got `{args}`)")),
        }
        // One line, so that a line-based client reads it whole.
        Ok(crate::render::position_svg(g, &marks).replace('\n', ""))
    }

    /// `swapmap`: the value of each opening of the game for the player who made it, as SVG.
    fn swapmap(&self) -> Result<String, String> {
        if matches!(self.player.brain, Brain::Random) {
            return Err("the random player has no values: serve mcts:N or a network".into());
        }
        let opts = crate::balance::StudyOptions {
            games: 0,
            sample_plies: 0,
            games_in_flight: 1,
            seed: self.seed,
            progress: false,
            ..Default::default()
        };
        let map = crate::swapmap::swap_map(&self.game, &self.player, 0, &opts)
            .map_err(|e| e.to_string())?;
        let board = self.history[0].board();
        Ok(crate::swapmap::swap_map_svg(board, &map).replace('\n', ""))
    }

    /// The player's search of `g` with the session's visits.
    fn search(&self, g: &AnyGame) -> Result<Search<AnyGame>, String> {
        let base = self
            .player
            .search_config()
            .expect("searching players have a search config");
        // PUCT even for a player trained with the Gumbel root: sequential halving needs its
        // whole budget up front, and a time limit does not give one.
        let cfg = SearchConfig {
            visits: self.visits,
            gumbel: false,
            ..base.clone()
        };
        let mut rng = self.rng();
        let seed = rng.gen();
        let mut search = Search::new(cfg, g.clone());
        let named = |e: selfplay::search::SearchError| format!("{}: {e}", self.player.info.name);
        match &self.player.brain {
            Brain::Net { model, .. } => {
                self.search_with(&mut search, &mut NetEvaluator::new(model), &mut rng)
            }
            _ => self.search_with(&mut search, &mut RolloutEvaluator::new(seed), &mut rng),
        }
        .map_err(named)?;
        Ok(search)
    }

    /// Run `search` to the session's visits, or step by step until its time per move is spent.
    fn search_with<E: selfplay::search::Evaluator<AnyGame>>(
        &self,
        search: &mut Search<AnyGame>,
        evaluator: &mut E,
        rng: &mut ChaCha8Rng,
    ) -> Result<(), selfplay::search::SearchError> {
        let Some(limit) = self.time_per_move else {
            return search.run(evaluator, false, rng).map(|_| ());
        };
        let start = std::time::Instant::now();
        // Steps of a few batches, so that the limit is overrun by little.
        let step = 4 * search.config().batch.max(1) as u32;
        let mut target = step;
        // At least one step, so that a decision always has a searched root.
        loop {
            search.set_visits(target);
            search.run(evaluator, false, rng)?;
            // A root short of its target is a tree exhausted (a tiny endgame).
            let exhausted = search.root_visits() < target;
            if exhausted || start.elapsed() >= limit || target >= 10_000_000 {
                return Ok(());
            }
            target += step;
        }
    }

    /// A generator for the current decision: the same position and seed decide the same way.
    fn rng(&self) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(self.current().ply() as u64);
        rng
    }

    fn showboard(&self) -> String {
        let g = self.current();
        format!(
            "{}\nto move: {}, ply {}, result: {}",
            g.describe(),
            g.to_move(),
            g.ply(),
            result_text(g)
        )
    }
}

fn result_text(g: &AnyGame) -> String {
    match g.outcome() {
        None => "none".into(),
        Some(o) => {
            let reason = serde_json::to_value(o.reason)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            match o.winner {
                Some(w) => format!("{w} ({reason})"),
                None => format!("draw ({reason})"),
            }
        }
    }
}

/// The response to one input line, as the protocol writes it (`=ID TEXT` or `?ID MESSAGE`,
/// then an empty line), and whether the session ends; `None` for a line that gets no response
/// (empty, or a `#` comment).
pub fn respond(session: &mut Session, line: &str) -> Option<(String, bool)> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let (id, rest) = match line.split_once(char::is_whitespace) {
        Some((first, rest)) if first.chars().all(|c| c.is_ascii_digit()) => (first, rest),
        _ if line.chars().all(|c| c.is_ascii_digit()) => (line, ""),
        _ => ("", line),
    };
    let (mark, text, quit) = match session.handle(rest) {
        Reply::Ok(t) => ('=', t, false),
        Reply::Err(t) => ('?', t, false),
        Reply::Quit => ('=', String::new(), true),
    };
    // A response never holds an empty line of its own: that would end it early.
    let text = text.replace("\n\n", "\n");
    let sep = if text.is_empty() { "" } else { " " };
    Some((format!("{mark}{id}{sep}{text}\n\n"), quit))
}

/// Serve `input` line by line until `quit` or its end, writing each response to `output` and
/// flushing it (a client waits for it before sending the next command).
pub fn serve(
    session: &mut Session,
    mut input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        if input.read_until(b'\n', &mut bytes)? == 0 {
            return Ok(());
        }
        // Bytes that are not UTF-8 are garbage like any other: an error, not an end.
        let line = String::from_utf8_lossy(&bytes);
        if let Some((text, quit)) = respond(session, &line) {
            output.write_all(text.as_bytes())?;
            output.flush()?;
            if quit {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(player: &str) -> Session {
        let game: GameConfig =
            serde_json::from_str(r#"{"game":"lifeline","options":{"size":3,"balance":"weak"}}"#)
                .unwrap();
        let base = SearchConfig {
            visits: 16,
            ..SearchConfig::default()
        };
        let device = selfplay::model::parse_device("cpu").unwrap();
        let p = Contestant::load(player, &game, &base, 16, &device).unwrap();
        Session::new(game, p, 7).unwrap()
    }

    fn ok(s: &mut Session, line: &str) -> String {
        match s.handle(line) {
            Reply::Ok(t) => t,
            other => panic!("{line}: {other:?}"),
        }
    }

    fn err(s: &mut Session, line: &str) -> String {
        match s.handle(line) {
            Reply::Err(t) => t,
            other => panic!("{line}: expected an error, got {other:?}"),
        }
    }

    #[test]
    fn a_whole_game_against_itself_ends_with_a_result() {
        let mut s = session("mcts:16");
        let mut plies = 0;
        while ok(&mut s, "result") == "none" {
            let action = ok(&mut s, "genmove");
            assert!(!action.is_empty());
            plies += 1;
            assert!(plies < 200, "the game ends");
        }
        let result = ok(&mut s, "result");
        assert!(
            result.starts_with("black") || result.starts_with("white"),
            "{result}"
        );
        assert!(err(&mut s, "genmove").contains("over"));
        // Undo takes back one action at a time, down to the start.
        for _ in 0..plies {
            ok(&mut s, "undo");
        }
        assert!(err(&mut s, "undo").contains("nothing"));
        assert_eq!(ok(&mut s, "result"), "none");
    }

    #[test]
    fn play_undo_setposition_and_analyze() {
        let mut s = session("mcts:16");
        ok(&mut s, "play c3");
        assert!(err(&mut s, "play black c3").contains("white is to move"));
        ok(&mut s, "play white swap");
        let board = ok(&mut s, "showboard");
        assert!(board.contains("ply 2"), "{board}");
        let description = board.lines().next().unwrap().to_string();
        ok(&mut s, "clear");
        assert!(ok(&mut s, "showboard").contains("ply 0"));
        ok(&mut s, &format!("setposition {description}"));
        assert!(ok(&mut s, "showboard").starts_with(&description));
        let analysis: serde_json::Value = serde_json::from_str(&ok(&mut s, "analyze")).unwrap();
        let moves = analysis["moves"].as_array().unwrap();
        assert!(!moves.is_empty(), "{analysis}");
        let visits: u64 = moves.iter().map(|m| m["visits"].as_u64().unwrap()).sum();
        assert!(
            visits >= 15 && visits <= analysis["visits"].as_u64().unwrap(),
            "{analysis}"
        );
        for m in moves {
            let v = m["value"].as_f64().unwrap();
            assert!((-1.0..=1.0).contains(&v), "{m}");
            assert_eq!(
                m["pv"][0], m["action"],
                "the variation starts with its action"
            );
        }
        assert!(moves
            .windows(2)
            .all(|w| w[0]["visits"].as_u64() >= w[1]["visits"].as_u64()));
        ok(&mut s, "visits 4");
        assert!(err(&mut s, "visits 0").contains("visits"));
        // A time per move searches until the time is spent: more than the 4 visits set.
        ok(&mut s, "time_per_move 0.2");
        let timed: serde_json::Value = serde_json::from_str(&ok(&mut s, "analyze")).unwrap();
        assert!(timed["visits"].as_u64().unwrap() > 4, "{timed}");
        assert!(err(&mut s, "time_per_move -1").contains("time_per_move"));
        ok(&mut s, "time_per_move 0");
        let counted: serde_json::Value = serde_json::from_str(&ok(&mut s, "analyze")).unwrap();
        assert!(counted["visits"].as_u64().unwrap() <= 5, "{counted}");
    }

    #[test]
    fn svg_draws_the_position_with_its_last_move_and_cells_to_click() {
        let mut s = session("mcts:16");
        assert_eq!(ok(&mut s, "visits"), "16");
        ok(&mut s, "play c3");
        let svg = ok(&mut s, "svg");
        assert!(!svg.contains('\n'), "one line");
        assert_eq!(svg.matches(r#"class="stone "#).count(), 1, "{svg}");
        // Side 3: 19 cells, each a shape the page can click.
        assert_eq!(svg.matches(r#"class="cell""#).count(), 19, "{svg}");
        assert!(svg.contains(r#"data-cell="c3""#) && svg.contains(r#"class="last""#));
        ok(&mut s, "undo");
        let start = ok(&mut s, "svg");
        assert!(!start.contains(r#"class="stone "#) && !start.contains(r#"class="last""#));
        assert!(err(&mut s, "svg ownership").contains("no network"));
        assert!(err(&mut s, "svg sideways").contains("svg takes"));
        let map = ok(&mut s, "swapmap");
        assert!(map.starts_with("<svg") && map.contains("Swap map"), "{map}");
    }

    #[test]
    fn a_network_reports_ownership_of_every_cell_in_analyze_and_svg() {
        let game: GameConfig =
            serde_json::from_str(r#"{"game":"lifeline","options":{"size":3,"balance":"weak"}}"#)
                .unwrap();
        let net = selfplay::net::NetConfig::tiny();
        let device = selfplay::model::parse_device("cpu").unwrap();
        let dir = std::env::temp_dir().join(format!("protocol-net-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        selfplay::model::Model::random(&game, &net, &device, 3)
            .unwrap()
            .save(&dir)
            .unwrap();
        let spec = format!("{}@8", dir.display());
        let player = Contestant::load(&spec, &game, &SearchConfig::default(), 8, &device).unwrap();
        let mut s = Session::new(game, player, 7).unwrap();
        ok(&mut s, "play c3");
        let analysis: serde_json::Value = serde_json::from_str(&ok(&mut s, "analyze")).unwrap();
        let ownership = analysis["ownership"].as_object().expect("ownership");
        assert_eq!(ownership.len(), 19, "{analysis}");
        assert!(ownership
            .values()
            .all(|v| (-1.0..=1.0).contains(&v.as_f64().unwrap())));
        // The head speaks for the player to move; the reply for Black.
        let g = s.current().clone();
        let grid = match &s.player.brain {
            Brain::Net { model, .. } => model.ownership(&g),
            _ => unreachable!(),
        };
        let c3 = g.board().parse_cell("c3").unwrap();
        let mover = grid[g.board().grid_index(c3)] as f64;
        // White is to move after c3: Black's view is the negated mover's view.
        assert!((ownership["c3"].as_f64().unwrap() + mover).abs() < 1e-3);
        let svg = ok(&mut s, "svg ownership");
        assert!(svg.contains("ownership"), "{svg}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bad_lines_get_errors_and_the_session_goes_on() {
        let mut s = session("random");
        assert!(err(&mut s, "fly to the moon").contains("unknown command"));
        assert!(err(&mut s, "play z9").contains("z9"));
        assert!(err(&mut s, "play e5 e6 e7").contains("play takes"));
        assert!(err(&mut s, "play purple c3").contains("colour"));
        assert!(err(&mut s, "game {not json").contains("expected a game"));
        assert!(err(&mut s, r#"game {"game":"lifeline","options":{"size":99}}"#).contains("size"));
        assert!(err(&mut s, "setposition [1,2]").contains("position"));
        assert!(err(&mut s, "analyze").contains("random"));
        ok(&mut s, "play c3");
        assert_eq!(ok(&mut s, "known_command genmove"), "true");
        assert_eq!(ok(&mut s, "known_command fly"), "false");
        let label = ok(
            &mut s,
            r#"game {"game":"square_lifeline","options":{"size":5}}"#,
        );
        assert!(label.starts_with("square"), "{label}");
        ok(&mut s, "play c3");
    }

    #[test]
    fn ids_are_echoed_and_every_command_line_gets_one_response() {
        let mut s = session("random");
        let (text, quit) = respond(&mut s, "12 name").unwrap();
        assert_eq!(text, "=12 lifeline-zero\n\n");
        assert!(!quit);
        assert_eq!(
            respond(&mut s, "7 play z9").unwrap().0.get(..3),
            Some("?7 ")
        );
        assert!(respond(&mut s, "   ").is_none() && respond(&mut s, "# note").is_none());
        let input = b"name\n\n# c\nbogus\n\xff\xfe\nplay c3\nquit\nname\n".to_vec();
        let mut out = Vec::new();
        serve(&mut s, &input[..], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let responses: Vec<&str> = text.split("\n\n").filter(|r| !r.is_empty()).collect();
        assert_eq!(
            responses,
            [
                "= lifeline-zero",
                "? unknown command `bogus` (list_commands lists them)",
                responses[2],
                "=",
                "="
            ],
            "{text}"
        );
        assert!(
            responses[2].starts_with('?'),
            "non-UTF-8 bytes are an error: {text}"
        );
    }

    #[test]
    fn random_lines_never_end_the_session() {
        let mut s = session("mcts:4");
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let words = [
            "play",
            "genmove",
            "undo",
            "analyze",
            "legal",
            "clear",
            "game",
            "setposition",
            "visits",
            "result",
            "showboard",
            "known_command",
            "black",
            "white",
            "swap",
            "komi",
            "prisoner",
            "c3",
            "a1",
            "e5",
            "z0",
            "{",
            "}",
            "-1",
            "0",
            "99999999999",
            "\u{0}",
            "é",
            "@",
            "quit",
        ];
        for _ in 0..3000 {
            let n = rng.gen_range(0..5);
            let mut line: Vec<&str> = (0..n)
                .map(|_| words[rng.gen_range(0..words.len())])
                .collect();
            if line.first() == Some(&"quit") {
                line.remove(0);
            }
            let line = line.join(" ");
            match respond(&mut s, &line) {
                None => assert!(line.trim().is_empty()),
                Some((text, _)) => {
                    assert!(
                        text.starts_with('=') || text.starts_with('?'),
                        "{line}: {text}"
                    );
                    assert!(!text.contains("internal error"), "{line}: {text}");
                    assert!(text.ends_with("\n\n") && !text[..text.len() - 2].contains("\n\n"));
                }
            }
        }
    }
}
