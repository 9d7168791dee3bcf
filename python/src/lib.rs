//! `lifeline_zero._engine`: the engine's games for Python, and a checkpoint's network. A game is chosen by the same JSON
//! the binaries' configs hold (`{"game":"lifeline","options":{"size":5,"balance":"strong"}}`);
//! actions are policy indices (`0..policy_len`, the network's action space, the ids OpenSpiel
//! games need) or their names in the engine's notation (`e5`, `swap`). Errors are Python
//! `ValueError`s with the binaries' messages. `lifeline_zero/__init__.py` wraps this module
//! with numpy arrays and docstrings.

use engine::record::GameRecord;
use engine::{Action, AnyGame, Game, GameConfig, Player};
use net::model::{Model, NetEvaluator};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use selfplay::search::Evaluator;

// Python allocates a class's object with 16-byte alignment and pyo3 0.23 places the Rust value
// inside it without aligning further: a class whose fields need more would sit misaligned
// (undefined behaviour; the dev profile aborts on it at random, as CI's wheel once did). Boxing
// the over-aligned field keeps a class within 16; this fails to compile when one is not.
const _: () = {
    assert!(std::mem::align_of::<GameSpec>() <= 16);
    assert!(std::mem::align_of::<State>() <= 16);
    assert!(std::mem::align_of::<Network>() <= 16);
};

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A game and its options.
#[pyclass(module = "lifeline_zero._engine", frozen)]
struct GameSpec {
    config: GameConfig,
    start: AnyGame,
}

#[pymethods]
impl GameSpec {
    #[new]
    fn new(json: &str) -> PyResult<GameSpec> {
        let config: GameConfig = serde_json::from_str(json).map_err(|e| {
            value_error(format!(
                "expected a game such as {{\"game\":\"lifeline\",\"options\":{{\"size\":5}}}}: {e}"
            ))
        })?;
        let start = config.start().map_err(value_error)?;
        Ok(GameSpec { config, start })
    }

    /// The game's options as JSON (every option, defaults filled in).
    fn to_json(&self) -> String {
        serde_json::to_string(&self.config).expect("game configs serialise")
    }

    /// `lifeline-5-strong`.
    fn label(&self) -> String {
        self.config.label()
    }

    /// The number of distinct actions (policy indices).
    fn policy_len(&self) -> usize {
        self.start.policy_len()
    }

    /// (planes, height, width) of an encoded position.
    fn input_shape(&self) -> (usize, usize, usize) {
        let b = self.start.board();
        (self.start.num_planes(), b.height(), b.width())
    }

    /// The board's cells by name, in the order of their grid index.
    fn cells(&self) -> Vec<(String, usize)> {
        let b = self.start.board();
        b.cells()
            .iter()
            .map(|&c| (b.cell_name(c), b.grid_index(c)))
            .collect()
    }

    /// A bound on the plies of a game: every game has a turn cap (by default ten turns per
    /// cell) and a turn takes a few actions at most.
    fn max_game_length(&self) -> usize {
        50 * self.start.board().cells().len() + 64
    }

    fn new_initial_state(&self) -> State {
        State {
            config: self.config.clone(),
            game: self.start.clone(),
            history: Vec::new(),
        }
    }

    /// A state set up from a position description (as `State.describe()` writes it).
    fn setup(&self, description: &str) -> PyResult<State> {
        Ok(State {
            config: self.config.clone(),
            game: self.config.setup(description).map_err(value_error)?,
            history: Vec::new(),
        })
    }

    /// The state a game record (one JSON line, as `State.record()` writes it) ends in, its
    /// actions replayed and checked.
    #[staticmethod]
    fn replay(record: &str) -> PyResult<State> {
        let r: GameRecord = serde_json::from_str(record).map_err(value_error)?;
        let mut state = GameSpec::new(&serde_json::to_string(&r.config).map_err(value_error)?)?
            .new_initial_state();
        for name in &r.actions {
            state.apply_name(name)?;
        }
        r.replay().map_err(value_error)?;
        Ok(state)
    }
}

/// A position and the actions that led to it from the start (or the set-up position).
#[pyclass(module = "lifeline_zero._engine")]
#[derive(Clone)]
struct State {
    config: GameConfig,
    game: AnyGame,
    /// Policy indices of the actions applied.
    history: Vec<usize>,
}

impl State {
    fn action(&self, index: usize) -> PyResult<Action> {
        self.game.action_of_policy_index(index).ok_or_else(|| {
            value_error(format!(
                "action {index} is not a policy index of {} (0 to {})",
                self.config.label(),
                self.game.policy_len() - 1
            ))
        })
    }
}

#[pymethods]
impl State {
    /// Legal actions as policy indices, ascending; none once the game is over.
    fn legal_actions(&self) -> Vec<usize> {
        if self.game.outcome().is_some() {
            return Vec::new();
        }
        let mut legal = Vec::new();
        self.game.legal_actions(&mut legal);
        let mut out: Vec<usize> = legal.iter().map(|&a| self.game.policy_index(a)).collect();
        out.sort_unstable();
        out
    }

    /// Apply a legal action given by its policy index.
    fn apply(&mut self, action: usize) -> PyResult<()> {
        if self.game.outcome().is_some() {
            return Err(value_error("the game is over"));
        }
        let a = self.action(action)?;
        self.game.try_apply(a).map_err(value_error)?;
        self.history.push(action);
        Ok(())
    }

    /// Apply a legal action given by its name (`e5`, `swap`).
    fn apply_name(&mut self, name: &str) -> PyResult<()> {
        let a = self.game.parse_action(name).map_err(value_error)?;
        self.apply(self.game.policy_index(a))
    }

    fn action_to_string(&self, action: usize) -> PyResult<String> {
        Ok(self.game.action_to_string(self.action(action)?))
    }

    fn string_to_action(&self, name: &str) -> PyResult<usize> {
        let a = self.game.parse_action(name).map_err(value_error)?;
        Ok(self.game.policy_index(a))
    }

    fn is_terminal(&self) -> bool {
        self.game.outcome().is_some()
    }

    /// 0 for Black, 1 for White; None once the game is over.
    fn current_player(&self) -> Option<usize> {
        (self.game.outcome().is_none()).then(|| self.game.to_move().index())
    }

    /// (Black's, White's) result: 1 a win, -1 a loss, 0 a draw or a game not over.
    fn returns(&self) -> (f64, f64) {
        match self.game.outcome() {
            Some(o) => (
                o.value_for(Player::Black) as f64,
                o.value_for(Player::White) as f64,
            ),
            None => (0.0, 0.0),
        }
    }

    /// `black wins (no legal action)`, `draw (turn cap)`, or None.
    fn result(&self) -> Option<String> {
        self.game.outcome().map(|o| o.to_string())
    }

    fn ply(&self) -> u32 {
        self.game.ply()
    }

    /// The policy indices applied so far.
    fn history(&self) -> Vec<usize> {
        self.history.clone()
    }

    /// The position's Zobrist hash.
    fn hash(&self) -> u64 {
        self.game.hash()
    }

    /// The position as `GameSpec.setup` reads it back.
    fn describe(&self) -> String {
        self.game.describe().to_string()
    }

    /// The game from its start as one JSON line of the engine's game records (the format
    /// of `selfplay/records-*.jsonl`); `GameSpec.replay` reads it back. Only for states
    /// played from the start.
    fn record(&self) -> PyResult<String> {
        let start = self.config.start().map_err(value_error)?;
        let actions = self
            .history
            .iter()
            .map(|&i| {
                start
                    .action_of_policy_index(i)
                    .expect("applied indices are actions")
            })
            .collect::<Vec<_>>();
        Ok(GameRecord::new(self.config.clone(), &start, &actions, &self.game).to_json_line())
    }

    /// The network's input planes, flattened (planes × height × width, row-major, float32
    /// as bytes), from the player to move's point of view.
    fn encode_bytes(&self) -> Vec<u8> {
        let b = self.game.board();
        let mut planes =
            ndarray::Array3::<f32>::zeros((self.game.num_planes(), b.height(), b.width()));
        self.game.encode(planes.view_mut());
        planes.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// The images of a policy vector (one value per policy index) under each symmetry of the
    /// board, in the order `encode_symmetric` gives the planes.
    fn policy_symmetries(&self, policy: Vec<f32>) -> PyResult<Vec<Vec<f32>>> {
        if policy.len() != self.game.policy_len() {
            return Err(value_error(format!(
                "a policy of {} values for {} actions",
                policy.len(),
                self.game.policy_len()
            )));
        }
        let b = self.game.board();
        Ok(b.symmetries()
            .iter()
            .map(|s| engine::encode::transform_policy(b, s, &policy))
            .collect())
    }

    /// The encoded planes under each symmetry of the board (bytes as `encode_bytes`).
    fn encode_symmetric_bytes(&self) -> Vec<Vec<u8>> {
        let b = self.game.board();
        let mut planes =
            ndarray::Array3::<f32>::zeros((self.game.num_planes(), b.height(), b.width()));
        self.game.encode(planes.view_mut());
        b.symmetries()
            .iter()
            .map(|s| {
                engine::encode::transform_planes(b, s, planes.view())
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect()
            })
            .collect()
    }

    /// The value of this position for the player to move by the engine's exact solver
    /// (alpha-beta over the rules, with a transposition table): 1 a win, 0 a draw, -1 a loss;
    /// None when `max_nodes` positions were not enough.
    #[pyo3(signature = (max_nodes = 10_000_000))]
    fn solve(&self, py: Python<'_>, max_nodes: u64) -> Option<i32> {
        if let Some(o) = self.game.outcome() {
            return Some(o.value_for(self.game.to_move()) as i32);
        }
        let game = self.game.clone();
        // The GIL is released: other Python threads run while the solver searches.
        py.allow_threads(move || {
            let limits = engine::solve::Limits {
                nodes: Some(max_nodes),
                time: None,
            };
            let mut solver = engine::solve::Solver::new(1 << 20).with_limits(limits);
            solver.solve(&game).value.map(|v| v.score() as i32)
        })
    }

    fn clone(&self) -> State {
        Clone::clone(self)
    }

    fn __copy__(&self) -> State {
        Clone::clone(self)
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> State {
        Clone::clone(self)
    }

    /// The board as text, with the player to move and the result.
    fn __str__(&self) -> String {
        let g = &self.game;
        let board = engine::display::render(g.board(), |c| {
            if g.stones(Player::Black).contains(c as usize) {
                'X'
            } else if g.stones(Player::White).contains(c as usize) {
                'O'
            } else {
                '.'
            }
        });
        let status = match g.outcome() {
            Some(o) => o.to_string(),
            None => format!("{} to move", g.to_move()),
        };
        format!("{board}\nply {}, {status}", g.ply())
    }

    fn __repr__(&self) -> String {
        format!(
            "<State of {} at ply {}>",
            self.config.label(),
            self.game.ply()
        )
    }
}

/// A checkpoint's network on the CPU, through the folded inference self-play and matches use.
#[pyclass(module = "lifeline_zero._engine", frozen)]
struct Network {
    /// Boxed: the model needs 64-byte alignment, more than a class may (see the check above).
    model: Box<Model>,
    /// The checkpoint directory, for messages.
    dir: String,
}

/// What the network says of one position: the priors (one per policy index, zero off the
/// legal actions), the value for the player to move, and the ownership per grid cell.
type NetworkOutput = (Vec<f32>, f32, Vec<f32>);

#[pymethods]
impl Network {
    /// Load the checkpoint at `path`: a checkpoint directory, or `RUN/models/best`. Refused,
    /// with the binaries' message, when it is not a checkpoint or its outputs are not finite.
    #[new]
    fn new(path: &str) -> PyResult<Network> {
        let dir = run::resolve_checkpoint(std::path::Path::new(path)).map_err(value_error)?;
        let device = net::model::parse_device("cpu").map_err(value_error)?;
        let model = Model::load(&dir, &device).map_err(value_error)?;
        let game = model.meta.game.clone();
        model.check_finite(&game, &dir).map_err(value_error)?;
        Ok(Network {
            model: Box::new(model.for_inference()),
            dir: dir.display().to_string(),
        })
    }

    /// The game the network was trained for, as the configs' JSON.
    fn game_json(&self) -> String {
        serde_json::to_string(&self.model.meta.game).unwrap_or_default()
    }

    /// The training step of the checkpoint.
    fn step(&self) -> u64 {
        self.model.meta.step
    }

    /// Evaluate `states` in one batch, the GIL released while the network runs: per state its
    /// priors, value and ownership. A state of a game the network does not play, or a finished
    /// one, is refused before anything runs.
    fn evaluate(
        &self,
        py: Python<'_>,
        states: Vec<PyRef<'_, State>>,
    ) -> PyResult<Vec<NetworkOutput>> {
        let mut games = Vec::with_capacity(states.len());
        let mut legal = Vec::with_capacity(states.len());
        for s in &states {
            self.model
                .meta
                .plays(&s.config)
                .map_err(|why| value_error(format!("{}: {why}", self.dir)))?;
            if s.game.outcome().is_some() {
                return Err(value_error("a finished game has no evaluation"));
            }
            let mut actions = Vec::new();
            s.game.legal_actions(&mut actions);
            games.push(s.game.clone());
            legal.push(actions);
        }
        let model = &self.model;
        Ok(py.allow_threads(|| {
            let mut out = Vec::new();
            NetEvaluator::new(model).evaluate(&games, &legal, &mut out);
            games
                .iter()
                .zip(&legal)
                .zip(out)
                .map(|((game, actions), e)| {
                    let mut priors = vec![0.0; game.policy_len()];
                    for (&a, &p) in actions.iter().zip(&e.priors) {
                        priors[game.policy_index(a)] = p;
                    }
                    (priors, e.value, model.ownership(game))
                })
                .collect()
        }))
    }
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<GameSpec>()?;
    m.add_class::<State>()?;
    m.add_class::<Network>()?;
    Ok(())
}
