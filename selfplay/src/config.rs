//! Run configs: one TOML file per game and preset (`configs/*.toml`).
//!
//! ```toml
//! game = "lifeline"
//! [options]      # the game's options
//! [search]       # crate::search::SearchConfig
//! [selfplay]     # crate::worker::SelfPlayConfig
//! [network]      # crate::net::NetConfig
//! ```
//! Tables used by later stages (`train`, `eval`, `loop`) are accepted and left to them; anything
//! else is refused with its name.

use crate::net::NetConfig;
use crate::search::SearchConfig;
use crate::worker::SelfPlayConfig;
use engine::GameConfig;
use serde::Deserialize;
use std::path::Path;

/// The sections of a config the self-play stage reads.
#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    pub game: GameConfig,
    pub search: SearchConfig,
    pub selfplay: SelfPlayConfig,
    pub network: NetConfig,
    /// The whole file, for the stages that read other tables.
    pub table: toml::Table,
}

const KNOWN: [&str; 8] = [
    "game", "options", "search", "selfplay", "network", "train", "eval", "loop",
];

#[derive(Deserialize)]
struct GameOnly {
    #[serde(flatten)]
    game: GameConfig,
}

impl RunConfig {
    pub fn load(path: &Path) -> Result<RunConfig, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<RunConfig, String> {
        let table: toml::Table =
            toml::from_str(text).map_err(|e| format!("not valid TOML: {e}"))?;
        if let Some(k) = table.keys().find(|k| !KNOWN.contains(&k.as_str())) {
            return Err(format!(
                "unknown table or field `{k}` (expected one of {})",
                KNOWN.join(", ")
            ));
        }
        let mut g = toml::Table::new();
        g.insert(
            "game".into(),
            table.get("game").cloned().ok_or("no `game` field")?,
        );
        g.insert(
            "options".into(),
            table
                .get("options")
                .cloned()
                .unwrap_or(toml::Value::Table(Default::default())),
        );
        let game = g
            .try_into::<GameOnly>()
            .map_err(|e| format!("[options]: {e}"))?
            .game;
        game.start().map_err(|e| format!("[options]: {e}"))?;
        let section = |name: &str| {
            table
                .get(name)
                .cloned()
                .unwrap_or(toml::Value::Table(Default::default()))
        };
        let search: SearchConfig = section("search")
            .try_into()
            .map_err(|e| format!("[search]: {e}"))?;
        search.validate()?;
        let selfplay: SelfPlayConfig = section("selfplay")
            .try_into()
            .map_err(|e| format!("[selfplay]: {e}"))?;
        selfplay.validate()?;
        let network: NetConfig = section("network")
            .try_into()
            .map_err(|e| format!("[network]: {e}"))?;
        network.validate()?;
        Ok(RunConfig {
            game,
            search,
            selfplay,
            network,
            table,
        })
    }
}
