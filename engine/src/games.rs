//! Configuration-driven dispatch: an enum over every game, for code that picks the game from a
//! config file. Hot paths stay generic over [`Game`]; this enum costs one match per call.

use crate::bitset::CellSet;
use crate::board::{Board, Symmetry};
use crate::game::{Action, Game, GameError, Outcome, Player};
use crate::leblin::{Leblin, LeblinOptions};
use crate::lifeline::{Lifeline, LifelineOptions};
use crate::square::{SquareLifeline, SquareOptions};
use crate::vigilance::{Vigilance, VigilanceOptions};
use ndarray::ArrayViewMut3;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// A game and its options, as written in configs and game records:
/// `{"game": "lifeline", "options": {"size": 7, "balance": "strong"}}` in JSON, or
/// `game = "lifeline"` with an `[options]` table in TOML.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "game", content = "options", rename_all = "snake_case")]
pub enum GameConfig {
    Lifeline(LifelineOptions),
    /// `{"game": "vigilance", "options": {"board": "Hex M (72)", "captures": true}}`.
    Vigilance(VigilanceOptions),
    /// `{"game": "square_lifeline", "options": {"size": 9, "komi": 0, "incursions": "allowed"}}`;
    /// `"incursions": "forbidden"` is Basic Square Lifeline.
    SquareLifeline(SquareOptions),
    /// `{"game": "leblin", "options": {"size": 13, "komi": 0, "handicap": 0}}`.
    Leblin(LeblinOptions),
}

/// One game's options from an `[options]` table. Read under an `options` key so that toml's
/// error carries the whole path (`options.size`); its trailing newline is dropped.
fn options_from_toml<T: DeserializeOwned>(options: toml::Value) -> Result<T, String> {
    #[derive(Deserialize)]
    struct Options<T> {
        options: T,
    }
    let table = toml::Table::from_iter([("options".to_string(), options)]);
    toml::Value::Table(table)
        .try_into::<Options<T>>()
        .map(|o| o.options)
        .map_err(|e| e.to_string().trim_end().replace('\n', " "))
}

impl GameConfig {
    /// The game of the command line: a config file's (`--config`), else the JSON (`--game`).
    pub fn load(config: Option<&std::path::Path>, json: &str) -> anyhow::Result<GameConfig> {
        use anyhow::Context as _;
        let Some(p) = config else {
            return serde_json::from_str(json).context("--game is not a valid game description");
        };
        let text =
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
        let table: toml::Table =
            toml::from_str(&text).with_context(|| format!("{} is not valid TOML", p.display()))?;
        let game =
            GameConfig::from_toml(&table).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
        game.start()
            .with_context(|| format!("{}: [options]", p.display()))?;
        Ok(game)
    }

    /// The game of a config file: its `game` field and `[options]` table (absent: defaults).
    /// Each game's options are read directly instead of through the tagged enum, which buffers
    /// them and loses the field of an error, so a type error names it:
    /// "invalid type: string \"x\", expected usize in `options.size`".
    pub fn from_toml(config: &toml::Table) -> Result<GameConfig, String> {
        let game = config.get("game").ok_or("no `game` field")?;
        let name = game
            .as_str()
            .ok_or_else(|| format!("`game` must be a string (got {game})"))?;
        let options = config
            .get("options")
            .cloned()
            .unwrap_or(toml::Value::Table(Default::default()));
        // The names are serde's (snake_case of the variants); a test checks that they agree.
        match name {
            "lifeline" => options_from_toml(options).map(GameConfig::Lifeline),
            "vigilance" => options_from_toml(options).map(GameConfig::Vigilance),
            "square_lifeline" => options_from_toml(options).map(GameConfig::SquareLifeline),
            "leblin" => options_from_toml(options).map(GameConfig::Leblin),
            _ => Err(format!(
                "unknown game `{name}` (expected one of lifeline, vigilance, square_lifeline, leblin)"
            )),
        }
    }

    /// Check the options and build the starting position.
    pub fn start(&self) -> Result<AnyGame, GameError> {
        Ok(match self {
            GameConfig::Lifeline(o) => AnyGame::Lifeline(Lifeline::new(o.clone())?),
            GameConfig::Vigilance(o) => AnyGame::Vigilance(Vigilance::new(o.clone())?),
            GameConfig::SquareLifeline(o) => {
                AnyGame::SquareLifeline(SquareLifeline::new(o.clone())?)
            }
            GameConfig::Leblin(o) => AnyGame::Leblin(Leblin::new(o.clone())?),
        })
    }

    /// Set up a position of this game from its description, the JSON of the game's position
    /// type ([`crate::lifeline::LifelinePosition`], [`crate::square::SquarePosition`],
    /// [`crate::leblin::LeblinPosition`], [`crate::vigilance::VigilancePosition`]), as
    /// [`AnyGame::describe`] writes it. Text that is not such a description, or a description
    /// the game refuses, is an error (never a panic).
    pub fn setup(&self, description: &str) -> Result<AnyGame, GameError> {
        fn parse<T: DeserializeOwned>(game: &str, text: &str) -> Result<T, GameError> {
            serde_json::from_str(text).map_err(|e| {
                GameError::BadPosition(format!("not a position description of {game}: {e}"))
            })
        }
        let game = self.label();
        Ok(match self {
            GameConfig::Lifeline(o) => AnyGame::Lifeline(Lifeline::from_position(
                o.clone(),
                &parse(&game, description)?,
            )?),
            GameConfig::Vigilance(o) => AnyGame::Vigilance(Vigilance::from_position(
                o.clone(),
                &parse(&game, description)?,
            )?),
            GameConfig::SquareLifeline(o) => AnyGame::SquareLifeline(
                SquareLifeline::from_position(o.clone(), &parse(&game, description)?)?,
            ),
            GameConfig::Leblin(o) => AnyGame::Leblin(Leblin::from_position(
                o.clone(),
                &parse(&game, description)?,
            )?),
        })
    }

    /// The komi of a game that has one: Lifeline's komi points (with `balance = "komi"`),
    /// the black prisoners of Square Lifeline and Leblin.
    pub fn komi(&self) -> Option<u32> {
        match self {
            GameConfig::Lifeline(o) if o.balance == crate::lifeline::Balance::Komi => {
                Some(o.komi as u32)
            }
            GameConfig::SquareLifeline(o) => Some(o.komi),
            GameConfig::Leblin(o) => Some(o.komi),
            _ => None,
        }
    }

    /// The same game with komi `komi` (checked like any config); an error for a game without
    /// komi or a komi out of its range.
    pub fn with_komi(&self, komi: u32) -> Result<GameConfig, String> {
        let mut g = self.clone();
        match &mut g {
            GameConfig::Lifeline(o) if o.balance == crate::lifeline::Balance::Komi => {
                o.komi = u8::try_from(komi).map_err(|_| format!("komi {komi} is out of range"))?;
            }
            GameConfig::SquareLifeline(o) => o.komi = komi,
            GameConfig::Leblin(o) => o.komi = komi,
            _ => {
                return Err(format!(
                    "{} has no komi (Lifeline needs balance = \"komi\"; Square Lifeline and Leblin have black prisoners)",
                    self.label()
                ))
            }
        }
        g.start().map_err(|e| format!("komi {komi}: {e}"))?;
        Ok(g)
    }

    /// The same game on a board of `size` (Lifeline, Square Lifeline, Leblin; Vigilance boards
    /// are chosen by name, not by size).
    pub fn with_size(&self, size: usize) -> Result<GameConfig, String> {
        let mut g = self.clone();
        match &mut g {
            GameConfig::Lifeline(o) => o.size = size,
            GameConfig::SquareLifeline(o) => o.size = size,
            GameConfig::Leblin(o) => o.size = size,
            GameConfig::Vigilance(_) => {
                return Err(format!(
                    "{} has no board size to vary (its board is chosen by name)",
                    self.label()
                ))
            }
        }
        g.start().map_err(|e| format!("size {size}: {e}"))?;
        Ok(g)
    }

    /// The board size (Vigilance: the number of cells of its board).
    pub fn size(&self) -> usize {
        match self {
            GameConfig::Lifeline(o) => o.size,
            GameConfig::SquareLifeline(o) => o.size,
            GameConfig::Leblin(o) => o.size,
            GameConfig::Vigilance(_) => self.start().map_or(0, |g| g.board().num_cells()),
        }
    }

    /// Short name for file names and tables, e.g. `lifeline-7-strong`.
    pub fn label(&self) -> String {
        match self {
            GameConfig::Lifeline(o) => {
                let b = format!("{:?}", o.balance).to_lowercase();
                if o.komi > 0 {
                    format!("lifeline-{}-{}{}", o.size, b, o.komi)
                } else {
                    format!("lifeline-{}-{}", o.size, b)
                }
            }
            GameConfig::Vigilance(o) => o.label(),
            GameConfig::SquareLifeline(o) => o.label(),
            GameConfig::Leblin(o) => o.label(),
        }
    }
}

/// Any game state.
#[derive(Clone, Debug)]
pub enum AnyGame {
    Lifeline(Lifeline),
    Vigilance(Vigilance),
    SquareLifeline(SquareLifeline),
    Leblin(Leblin),
}

macro_rules! dispatch {
    ($self:expr, $g:ident => $e:expr) => {
        match $self {
            AnyGame::Lifeline($g) => $e,
            AnyGame::Vigilance($g) => $e,
            AnyGame::SquareLifeline($g) => $e,
            AnyGame::Leblin($g) => $e,
        }
    };
}

impl AnyGame {
    /// The stones of `player` on the board.
    pub fn stones(&self, player: Player) -> CellSet {
        dispatch!(self, g => g.stones(player))
    }

    /// The description of this position, the JSON that [`GameConfig::setup`] reads back
    /// (Square Lifeline's repetition history is not part of it).
    pub fn describe(&self) -> serde_json::Value {
        let value = match self {
            AnyGame::Lifeline(g) => serde_json::to_value(g.position()),
            AnyGame::Vigilance(g) => serde_json::to_value(g.position()),
            AnyGame::SquareLifeline(g) => serde_json::to_value(g.position()),
            AnyGame::Leblin(g) => serde_json::to_value(g.position()),
        };
        value.expect("position descriptions serialise")
    }
}

impl Game for AnyGame {
    fn board(&self) -> &Board {
        dispatch!(self, g => g.board())
    }
    fn to_move(&self) -> Player {
        dispatch!(self, g => g.to_move())
    }
    fn outcome(&self) -> Option<Outcome> {
        dispatch!(self, g => g.outcome())
    }
    fn legal_actions(&self, out: &mut Vec<Action>) {
        dispatch!(self, g => g.legal_actions(out))
    }
    fn is_legal(&self, action: Action) -> bool {
        dispatch!(self, g => g.is_legal(action))
    }
    fn apply(&mut self, action: Action) {
        dispatch!(self, g => g.apply(action))
    }
    fn hash(&self) -> u64 {
        dispatch!(self, g => g.hash())
    }
    fn recompute_hash(&self) -> u64 {
        dispatch!(self, g => g.recompute_hash())
    }
    fn symmetric_hash(&self) -> u64 {
        dispatch!(self, g => g.symmetric_hash())
    }
    fn ply(&self) -> u32 {
        dispatch!(self, g => g.ply())
    }
    fn num_planes(&self) -> usize {
        dispatch!(self, g => g.num_planes())
    }
    fn encode(&self, out: ArrayViewMut3<'_, f32>) {
        dispatch!(self, g => g.encode(out))
    }
    fn transformed(&self, sym: &Symmetry) -> Self {
        match self {
            AnyGame::Lifeline(g) => AnyGame::Lifeline(g.transformed(sym)),
            AnyGame::Vigilance(g) => AnyGame::Vigilance(g.transformed(sym)),
            AnyGame::SquareLifeline(g) => AnyGame::SquareLifeline(g.transformed(sym)),
            AnyGame::Leblin(g) => AnyGame::Leblin(g.transformed(sym)),
        }
    }
    fn global_tokens(&self) -> &'static str {
        dispatch!(self, g => g.global_tokens())
    }
    fn komi(&self) -> f32 {
        dispatch!(self, g => g.komi())
    }
    fn final_owner(&self, cell: crate::board::Cell) -> Option<Player> {
        dispatch!(self, g => g.final_owner(cell))
    }
    fn action_to_string(&self, action: Action) -> String {
        dispatch!(self, g => g.action_to_string(action))
    }
    fn parse_action(&self, text: &str) -> Result<Action, GameError> {
        dispatch!(self, g => g.parse_action(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_toml(text: &str) -> Result<GameConfig, String> {
        GameConfig::from_toml(&toml::from_str(text).unwrap())
    }

    #[test]
    fn toml_configs_read_as_the_tagged_enum_reads_them() {
        for (game, options) in [
            ("lifeline", "size = 5\nbalance = \"komi\"\nkomi = 3\n"),
            ("vigilance", "board = \"hex_xs_39\"\ncaptures = \"off\"\n"),
            ("square_lifeline", "size = 6\nincursions = \"forbidden\"\n"),
            ("leblin", "size = 5\nhandicap = 2\n"),
            ("leblin", ""),
        ] {
            let text = format!("game = \"{game}\"\n[options]\n{options}");
            let table: toml::Table = toml::from_str(&text).unwrap();
            let json = serde_json::to_value(&table).unwrap();
            let tagged: GameConfig = serde_json::from_value(json).unwrap();
            assert_eq!(GameConfig::from_toml(&table).unwrap(), tagged, "{text}");
        }
        let defaults = GameConfig::Lifeline(Default::default());
        assert_eq!(from_toml("game = \"lifeline\"\n").unwrap(), defaults);
    }

    #[test]
    fn a_mistyped_option_is_named() {
        let e = from_toml("game = \"lifeline\"\n[options]\nsize = \"x\"\n").unwrap_err();
        assert!(e.contains("options.size"), "{e}");
        assert!(e.contains("invalid type"), "{e}");
        let e = from_toml("game = \"square_lifeline\"\n[options]\nkomi = -1\n").unwrap_err();
        assert!(e.contains("options.komi"), "{e}");
        let e = from_toml("game = \"leblin\"\n[options]\nsise = 5\n").unwrap_err();
        assert!(e.contains("sise"), "{e}");
        assert!(from_toml("game = \"go\"\n").unwrap_err().contains("`go`"));
        let e = from_toml("[options]\nsize = 5\n").unwrap_err();
        assert!(e.contains("game"), "{e}");
    }
}
