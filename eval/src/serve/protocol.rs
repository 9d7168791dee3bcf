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
//! | `swapmap` | the swap map of the game's openings by the player's own search, as SVG ([`crate::study::swapmap`]) |
//! | `result` | `black`, `white`, `draw` with the reason, or `none` |
//! | `visits [N]` | visits (playouts for `mcts:N`) per search; without N, the current number |
//! | `time_per_move SECONDS` | search each decision for that long instead (0: back to visits; at most 600) |
//! | `stop` | stop the search in progress: its command answers at once with what it found so far |
//! | `quit` | ends the session |
//!
//! No request can hold the server: the visits of a search are bounded by the memory its tree
//! may take ([`Session::set_tree_memory`]; `visits N` above that bound is refused), and a
//! search in progress stops early, answering with its best so far, when the driver raises an
//! [`Interrupts`]: a `stop` line on stdin, or over HTTP a newer request or a client gone.
//! A line is at most [`MAX_LINE`] bytes; a longer one is an error that echoes its start only.

use crate::players::{Brain, Contestant, RolloutEvaluator};
use engine::{Action, AnyGame, Game, GameConfig, Player};
use net::model::NetEvaluator;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use selfplay::search::Search;
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The commands, in `list_commands` order.
pub const COMMANDS: [&str; 22] = [
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
    "stop",
    "quit",
];

/// Longest principal variation `analyze` reports.
const PV_LEN: usize = 10;

/// Longest command line accepted (a `setposition` of the largest board takes a few KB).
pub const MAX_LINE: usize = 64 * 1024;

/// The memory a search tree may take unless the server is told otherwise (`--tree-memory-mb`).
pub const DEFAULT_TREE_MEMORY: usize = 2 << 30;

/// Longest time per move accepted, in seconds.
const MAX_TIME_PER_MOVE: f64 = 600.0;

/// Requests to stop a search in progress, counted: a driver raises one for a `stop` line, a
/// newer request or a client gone, and a command's search stops once the count passes the
/// command's ticket ([`Session::set_ticket`]). A count, not a flag, so that a `stop` read
/// before the search it targets has started is not lost, and an old one never stops a later
/// search.
#[derive(Clone, Debug, Default)]
pub struct Interrupts(Arc<AtomicU64>);

impl Interrupts {
    /// Raise one; the count after it, which is the ticket of the request that raised it.
    pub fn raise(&self) -> u64 {
        self.0.fetch_add(1, Ordering::SeqCst) + 1
    }

    pub fn count(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// At most `max` characters of `text`, marked when cut: what an error echoes of a client's
/// input.
pub fn excerpt(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

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
    /// The memory a search tree may take: it bounds the visits of every search.
    tree_memory: usize,
    interrupts: Interrupts,
    /// The interrupts raised before the current command: more stop its search.
    ticket: u64,
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
    /// A session of `game` answered by `player` (which must be able to play it), its search
    /// trees bounded by [`DEFAULT_TREE_MEMORY`].
    pub fn new(game: GameConfig, player: Contestant, seed: u64) -> Result<Session, String> {
        Session::with_tree_memory(game, player, seed, DEFAULT_TREE_MEMORY)
    }

    /// A session whose search trees may take `tree_memory` bytes; refused when the player's
    /// own visits need more.
    pub fn with_tree_memory(
        game: GameConfig,
        player: Contestant,
        seed: u64,
        tree_memory: usize,
    ) -> Result<Session, String> {
        let visits = player.search_config().map_or(1, |c| c.visits);
        let mut s = Session {
            history: Vec::new(),
            moves: Vec::new(),
            game: game.clone(),
            player,
            visits,
            time_per_move: None,
            seed,
            tree_memory,
            interrupts: Interrupts::default(),
            ticket: 0,
        };
        s.set_game(game)?;
        s.set_tree_memory(tree_memory)?;
        Ok(s)
    }

    /// Bound every search tree by `bytes`; refused when the visits already set need more.
    pub fn set_tree_memory(&mut self, bytes: usize) -> Result<(), String> {
        self.tree_memory = bytes;
        let cap = self.visit_cap();
        if self.visits > cap {
            return Err(format!(
                "{} searches {} visits, and a search tree of this game may hold {cap} in {} MB (--tree-memory-mb)",
                self.player.info.name,
                self.visits,
                bytes >> 20
            ));
        }
        Ok(())
    }

    /// The most visits a search of the current game may make within the tree memory.
    fn visit_cap(&self) -> u32 {
        let per_visit = Search::<AnyGame>::bytes_per_visit(self.current().policy_len());
        (self.tree_memory / per_visit).clamp(1, u32::MAX as usize) as u32
    }

    /// The interrupts that stop this session's searches, for the driver to raise.
    pub fn interrupts(&self) -> Interrupts {
        self.interrupts.clone()
    }

    /// The interrupts raised before the next command: only a later one stops its search.
    pub fn set_ticket(&mut self, ticket: u64) {
        self.ticket = ticket;
    }

    fn interrupted(&self) -> bool {
        self.interrupts.count() > self.ticket
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
            "visits" => self.set_visits(args),
            "time_per_move" => match args.parse::<f64>() {
                Ok(0.0) => {
                    self.time_per_move = None;
                    Ok(String::new())
                }
                Ok(t) if t > 0.0 && t <= MAX_TIME_PER_MOVE => {
                    self.time_per_move = Some(std::time::Duration::from_secs_f64(t));
                    Ok(String::new())
                }
                _ => Err(format!(
                    "time_per_move takes seconds from 0 (off) to {MAX_TIME_PER_MOVE} (got `{}`)",
                    excerpt(args, 40)
                )),
            },
            // The driver has raised the interrupt as it read the line; nothing is left to do.
            "stop" => Ok(String::new()),
            "" => Err("empty command".into()),
            _ => Err(format!(
                "unknown command `{}` (list_commands lists them)",
                excerpt(name, 40).escape_debug()
            )),
        }
    }

    /// `visits N`: from 1 to what the tree memory allows on the current game.
    fn set_visits(&mut self, args: &str) -> Result<String, String> {
        let cap = self.visit_cap();
        match args.parse::<u32>() {
            Ok(n) if (1..=cap).contains(&n) => {
                self.visits = n;
                Ok(String::new())
            }
            _ => Err(format!(
                "visits takes a number from 1 to {cap} (the visits a search tree of this game holds in {} MB; --tree-memory-mb) (got `{}`)",
                self.tree_memory >> 20,
                excerpt(args, 40)
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
            _ => self.search(&g)?.0.result().best(),
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
        let (search, stopped) = self.search(&g)?;
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
            "stopped": stopped,
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
    /// An interrupt stops it between two openings' searches, with an error.
    fn swapmap(&self) -> Result<String, String> {
        if matches!(self.player.brain, Brain::Random) {
            return Err("the random player has no values: serve mcts:N or a network".into());
        }
        let opts = crate::study::openings::StudyOptions {
            games: 0,
            sample_plies: 0,
            games_in_flight: 1,
            seed: self.seed,
            progress: false,
            ..Default::default()
        };
        let map = crate::study::swapmap::swap_map(&self.game, &self.player, 0, &opts, &|| {
            self.interrupted()
        })
        .map_err(|e| e.to_string())?;
        let board = self.history[0].board();
        Ok(crate::study::swapmap::swap_map_svg(board, &map).replace('\n', ""))
    }

    /// The player's search of `g` with the session's visits (or time), and whether an
    /// interrupt stopped it early.
    fn search(&self, g: &AnyGame) -> Result<(Search<AnyGame>, bool), String> {
        let base = self
            .player
            .search_config()
            .expect("searching players have a search config");
        // PUCT even for a player trained with the Gumbel root: sequential halving needs its
        // whole budget up front, and neither a time limit nor an interrupt gives one.
        let cfg = base.puct(self.visits);
        let mut rng = self.rng();
        let seed = rng.gen();
        let mut search = Search::new(cfg, g.clone());
        let named = |e: selfplay::search::SearchError| format!("{}: {e}", self.player.info.name);
        let stopped = match &self.player.brain {
            Brain::Net { model, .. } => {
                self.search_with(&mut search, &mut NetEvaluator::new(model), &mut rng)
            }
            _ => self.search_with(&mut search, &mut RolloutEvaluator::new(seed), &mut rng),
        }
        .map_err(named)?;
        Ok((search, stopped))
    }

    /// Run `search` in steps of a few batches to the session's visits, or until its time per
    /// move is spent, never past what the tree memory allows; `true` when an interrupt
    /// stopped it first. The steps are what makes a search stoppable and a time limit
    /// overrun by little; PUCT makes the same tree in steps as in one run.
    fn search_with<E: selfplay::search::Evaluator<AnyGame>>(
        &self,
        search: &mut Search<AnyGame>,
        evaluator: &mut E,
        rng: &mut ChaCha8Rng,
    ) -> Result<bool, selfplay::search::SearchError> {
        let start = std::time::Instant::now();
        let goal = match self.time_per_move {
            Some(_) => self.visit_cap(),
            None => self.visits.min(self.visit_cap()),
        };
        let step = 4 * search.config().batch.max(1) as u32;
        let mut target = step.min(goal);
        // At least one step, so that a decision always has a searched root.
        loop {
            search.set_visits(target);
            search.run(evaluator, false, rng)?;
            // A root short of its target is a tree exhausted (a tiny endgame).
            let exhausted = search.root_visits() < target;
            let timed_out = self.time_per_move.is_some_and(|t| start.elapsed() >= t);
            if exhausted || timed_out || target >= goal {
                return Ok(false);
            }
            if self.interrupted() {
                return Ok(true);
            }
            target = target.saturating_add(step).min(goal);
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

/// One line of input as [`read_line`] reads it.
enum Line {
    Text(String),
    /// The first [`MAX_LINE`] bytes of a longer line; the rest was read and dropped.
    TooLong(String),
    End,
}

/// Read one line of at most `max` bytes (newline included). A longer line is read to its end
/// but only its start is kept, so that no line can take the server's memory.
fn read_line(input: &mut impl BufRead, max: usize) -> std::io::Result<Line> {
    let mut bytes = Vec::new();
    let mut over = false;
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            if bytes.is_empty() && !over {
                return Ok(Line::End);
            }
            break;
        }
        let (take, ended) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = max.saturating_sub(bytes.len());
        bytes.extend_from_slice(&buf[..take.min(room)]);
        over |= take > room;
        input.consume(take);
        if ended {
            break;
        }
    }
    // Bytes that are not UTF-8 are garbage like any other: an error, not an end.
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Ok(if over {
        Line::TooLong(text)
    } else {
        Line::Text(text)
    })
}

/// Whether `line` is the `stop` command (after an optional id).
fn is_stop(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let first = words.next();
    let name = match first {
        Some(id) if id.chars().all(|c| c.is_ascii_digit()) => words.next(),
        _ => first,
    };
    name == Some("stop")
}

/// Serve `input` line by line until `quit` or its end, writing each response to `output` and
/// flushing it (a client waits for it before sending the next command). Every command read is
/// answered, in order, even after the input has ended (a script piped in); a `stop` line
/// stops the search of a command before it, because a reader thread reads ahead of the
/// commands and raises the session's interrupts as it reads one.
pub fn serve(
    session: &mut Session,
    mut input: impl BufRead + Send + 'static,
    mut output: impl Write,
) -> std::io::Result<()> {
    let interrupts = session.interrupts();
    let (lines, incoming) = std::sync::mpsc::channel();
    std::thread::spawn(move || loop {
        let line = read_line(&mut input, MAX_LINE);
        let ticket = match &line {
            Ok(Line::Text(text)) if is_stop(text) => interrupts.raise(),
            _ => interrupts.count(),
        };
        let last = !matches!(line, Ok(Line::Text(_) | Line::TooLong(_)));
        if lines.send((line, ticket)).is_err() || last {
            return;
        }
    });
    for (line, ticket) in incoming {
        session.set_ticket(ticket);
        let response = match line? {
            Line::End => return Ok(()),
            Line::Text(text) => respond(session, &text),
            Line::TooLong(start) => Some((
                format!(
                    "? a line of over {MAX_LINE} bytes, starting `{}`\n\n",
                    excerpt(start.trim(), 40).escape_debug()
                ),
                false,
            )),
        };
        if let Some((text, quit)) = response {
            output.write_all(text.as_bytes())?;
            output.flush()?;
            if quit {
                return Ok(());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use selfplay::search::SearchConfig;

    fn session(player: &str) -> Session {
        let game: GameConfig =
            serde_json::from_str(r#"{"game":"lifeline","options":{"size":3,"balance":"weak"}}"#)
                .unwrap();
        let base = SearchConfig {
            visits: 16,
            ..SearchConfig::default()
        };
        let device = net::model::parse_device("cpu").unwrap();
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
        // An interrupt after its ticket stops it between two openings' searches.
        s.interrupts().raise();
        let e = err(&mut s, "swapmap");
        assert!(e.contains("stopped") && e.contains("swap map"), "{e}");
        // The driver gives the next command a ticket past that interrupt.
        s.set_ticket(s.interrupts().count());
        assert!(
            ok(&mut s, "swapmap").starts_with("<svg"),
            "the next one runs whole"
        );
    }

    #[test]
    fn a_network_reports_ownership_of_every_cell_in_analyze_and_svg() {
        let game: GameConfig =
            serde_json::from_str(r#"{"game":"lifeline","options":{"size":3,"balance":"weak"}}"#)
                .unwrap();
        let net = net::network::NetConfig::tiny();
        let device = net::model::parse_device("cpu").unwrap();
        let dir = std::env::temp_dir().join(format!("protocol-net-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        net::model::Model::random(&game, &net, &device, 3)
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
        serve(&mut s, std::io::Cursor::new(input), &mut out).unwrap();
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

    /// The responses of `serve` to `input`, without their empty lines.
    fn served(s: &mut Session, input: Vec<u8>) -> Vec<String> {
        let mut out = Vec::new();
        serve(s, std::io::Cursor::new(input), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        text.split("\n\n")
            .filter(|r| !r.is_empty())
            .map(String::from)
            .collect()
    }

    #[test]
    fn a_stop_ends_the_search_before_it_and_never_a_later_one() {
        let mut s = session("mcts:16");
        // Raised before the command: its ticket counts it, so the search runs whole.
        let interrupts = s.interrupts();
        interrupts.raise();
        s.set_ticket(interrupts.count());
        let whole: serde_json::Value = serde_json::from_str(&ok(&mut s, "analyze")).unwrap();
        assert_eq!(whole["stopped"], false, "{whole}");
        assert!(whole["visits"].as_u64().unwrap() >= 16, "{whole}");
        // Raised after the command's ticket: the search stops after its first step, with a
        // searched root and an answer.
        ok(&mut s, "visits 1000000");
        interrupts.raise();
        let stopped: serde_json::Value = serde_json::from_str(&ok(&mut s, "analyze")).unwrap();
        assert_eq!(stopped["stopped"], true, "{stopped}");
        let visits = stopped["visits"].as_u64().unwrap();
        assert!((1..1000).contains(&visits), "{stopped}");
        assert!(!ok(&mut s, "genmove").is_empty());
        // Over stdin: the `stop` is read ahead of the commands and stops the search before
        // it, wherever that search is; the command after it searches whole.
        let mut s = session("mcts:16");
        let responses = served(
            &mut s,
            b"visits 1000000\nanalyze\nstop\nvisits 16\nanalyze\n".to_vec(),
        );
        assert_eq!(responses.len(), 5, "{responses:?}");
        let first: serde_json::Value = serde_json::from_str(&responses[1][2..]).unwrap();
        assert_eq!(first["stopped"], true, "{first}");
        assert!(first["visits"].as_u64().unwrap() < 1_000_000);
        assert_eq!(responses[2], "=");
        let last: serde_json::Value = serde_json::from_str(&responses[4][2..]).unwrap();
        assert_eq!(last["stopped"], false, "{last}");
    }

    #[test]
    fn visits_and_time_are_bounded_by_the_tree_memory() {
        let mut s = session("mcts:16");
        let cap = s.visit_cap();
        let huge = err(&mut s, "visits 4294967295");
        assert!(huge.contains(&format!("1 to {cap}")), "{huge}");
        ok(&mut s, &format!("visits {cap}"));
        assert!(err(&mut s, &format!("visits {}", cap + 1)).contains("--tree-memory-mb"));
        // A smaller budget lowers the bound, and refuses visits already set above it.
        ok(&mut s, "visits 16");
        let per_visit = Search::<AnyGame>::bytes_per_visit(s.current().policy_len());
        s.set_tree_memory(100 * per_visit).unwrap();
        assert_eq!(s.visit_cap(), 100);
        assert!(s
            .set_tree_memory(10 * per_visit)
            .unwrap_err()
            .contains("16 visits"));
        assert!(err(&mut s, "time_per_move 3600").contains("600"));
        // A player whose own visits no tree can hold is refused at the start.
        let game = s.game.clone();
        let base = SearchConfig::default();
        let device = net::model::parse_device("cpu").unwrap();
        let p = Contestant::load("mcts:4294967295", &game, &base, 16, &device).unwrap();
        let refused = Session::new(game, p, 7).err().expect("refused");
        assert!(refused.contains("4294967295 visits"), "{refused}");
    }

    #[test]
    fn a_line_over_the_limit_is_refused_by_its_start_and_the_session_goes_on() {
        let mut s = session("random");
        let mut input = vec![b'x'; 3 * MAX_LINE];
        input.extend_from_slice(b"\nname\nplay c3\n");
        let responses = served(&mut s, input);
        assert_eq!(responses.len(), 3, "{responses:?}");
        assert!(
            responses[0].starts_with(&format!("? a line of over {MAX_LINE} bytes"))
                && responses[0].len() < 200,
            "{}",
            excerpt(&responses[0], 300)
        );
        assert_eq!(responses[1], "= lifeline-zero");
        assert_eq!(responses[2], "=");
        let unknown = err(&mut s, &"y".repeat(5000));
        assert!(unknown.len() < 200, "{unknown}");
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
