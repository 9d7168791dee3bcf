//! A self-play shard (`.npz`: a zip of `.npy` arrays and a JSON `meta`), read as the trainer's
//! window reads one, every sample then checked: a shard that is damaged or disagrees with its
//! metadata must be refused with an error naming it; a panic, or an allocation sized by a
//! header rather than by the file, is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = lifeline_zero_fuzz::put("shard.npz", data);
    let _ = selfplay::shard::read_shard_meta(&path);
    let Ok(shard) = selfplay::shard::read_shard(&path) else {
        return;
    };
    for i in 0..shard.meta.samples {
        let _ = selfplay::shard::check_sample(&shard, i);
    }
});
