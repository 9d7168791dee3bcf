//! Run configs: one TOML file per game and preset (`configs/*.toml`).
//!
//! ```toml
//! game = "lifeline"
//! [options]      # the game's options
//! [search]       # crate::search::SearchConfig
//! [selfplay]     # crate::worker::SelfPlayConfig
//! [network]      # net::network::NetConfig
//! ```
//! Tables used by later stages (`train`, `eval`, `loop`) are accepted and left to them; anything
//! else is refused with its name.

use crate::search::SearchConfig;
use crate::worker::SelfPlayConfig;
use engine::GameConfig;
use net::network::NetConfig;
use std::path::Path;

pub use crate::validate::{check_float, FloatRange};

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

impl RunConfig {
    /// The game at each board size self-play plays and training trains (`selfplay.sizes`, or
    /// the config's size alone).
    pub fn games(&self) -> Vec<GameConfig> {
        self.selfplay
            .sized_games(&self.game)
            .expect("sizes are checked when the config is read")
    }

    pub fn load(path: &Path) -> Result<RunConfig, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::parse_from(&text, path)
    }

    /// [`RunConfig::parse`] of `text`, read from `path`: its errors name the file.
    pub fn parse_from(text: &str, path: &Path) -> Result<RunConfig, String> {
        Self::parse(text).map_err(|e| format!("{}: {e}", path.display()))
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
        let game = GameConfig::from_toml(&table)?;
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
        selfplay.check_ranges(&game)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The error of a config whose `[table]` sets `field` to `value`.
    fn error_of(table: &str, field: &str, value: &str) -> String {
        let text = format!("game = \"lifeline\"\n[{table}]\n{field} = {value}\n");
        RunConfig::parse(&text).expect_err(&text)
    }

    #[test]
    fn non_finite_search_floats_are_refused_by_name() {
        let fields = [
            "c_puct",
            "fpu_reduction",
            "dirichlet_alpha",
            "dirichlet_fraction",
            "c_visit",
            "c_scale",
        ];
        for field in fields {
            for value in ["nan", "inf", "-inf"] {
                let e = error_of("search", field, value);
                assert!(e.contains(&format!("search.{field} must be")), "{e}");
            }
        }
        assert!(error_of("search", "c_visit", "0.0").contains("positive finite"));
        // A negative reduction (optimistic first-play urgency) is allowed.
        let optimistic = "game = \"lifeline\"\n[search]\nfpu_reduction = -0.5\n";
        let parsed = RunConfig::parse(optimistic).unwrap();
        assert_eq!(parsed.search.fpu_reduction, -0.5);
    }

    #[test]
    fn non_finite_selfplay_floats_are_refused_by_name() {
        let fields = [
            "temperature",
            "final_temperature",
            "full_search_share",
            "resign_threshold",
            "resign_playout_share",
        ];
        for field in fields {
            for value in ["nan", "inf", "-inf"] {
                let e = error_of("selfplay", field, value);
                assert!(e.contains(&format!("selfplay.{field} must be")), "{e}");
            }
        }
        let e = error_of("selfplay", "resign_threshold", "-1.5");
        assert!(e.contains("between -1 and 1 (got -1.5)"), "{e}");
    }

    #[test]
    fn a_mistyped_option_names_its_field() {
        let e = error_of("options", "size", "\"x\"");
        assert!(e.contains("options.size"), "{e}");
    }
}
