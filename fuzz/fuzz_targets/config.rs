//! A run's config file (TOML: the game, `[network]`, `[search]`, `[selfplay]`, `[train]`,
//! `[eval]`, `[loop]`), read as every role reads it: a config the tables refuse must be one
//! error naming the field; a panic is a bug. A config that is accepted starts its game.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(config) = train::config::FullConfig::parse(text.to_string(), "fuzz.toml") else {
        return;
    };
    let _ = config.run.game.start();
});
