//! A game's config (TOML), a position description and action strings, as a protocol client or
//! a config file gives them: `TOML \n---\n DESCRIPTION \n ACTION \n ACTION ...` (an empty
//! description: the start). Every refusal must be an error; a panic, a hang or an allocation
//! out of proportion to the input is a bug.
#![no_main]

use engine::{Game, GameConfig};
use libfuzzer_sys::fuzz_target;
use lifeline_zero_fuzz::split_parts;

fuzz_target!(|data: &[u8]| {
    let (config, rest) = split_parts(data);
    let Ok(config) = std::str::from_utf8(config) else {
        return;
    };
    let Ok(table) = toml::from_str::<toml::Table>(config) else {
        return;
    };
    let Ok(game) = GameConfig::from_toml(&table) else {
        return;
    };
    let mut lines = std::str::from_utf8(rest).unwrap_or("").lines();
    let position = match lines.next().map(str::trim) {
        None | Some("") => game.start(),
        Some(description) => game.setup(description),
    };
    let Ok(mut position) = position else {
        return;
    };
    let _ = position.describe();
    for text in lines {
        let Ok(action) = position.parse_action(text) else {
            continue;
        };
        // The parsed action prints back to a name that parses to it.
        let name = position.action_to_string(action);
        assert_eq!(
            position.parse_action(&name).ok(),
            Some(action),
            "{text:?} -> {name:?}"
        );
        if position.try_apply(action).is_err() || position.outcome().is_some() {
            break;
        }
    }
});
