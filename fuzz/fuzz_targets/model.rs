//! A checkpoint (`meta.json`, then `weights.bpk`, parted by a `---` line), loaded as every role
//! loads one: a checkpoint whose metadata is wrong or whose weights do not fit it must be
//! refused with an error naming the file; a panic, or a network sized by the metadata far
//! beyond what the bounds allow, is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lifeline_zero_fuzz::{put, split_parts};

fuzz_target!(|data: &[u8]| {
    let (meta, weights) = split_parts(data);
    put("checkpoint/meta.json", meta);
    let dir = put("checkpoint/weights.bpk", weights)
        .parent()
        .expect("a folder")
        .to_path_buf();
    let device = net::model::parse_device("cpu").expect("the CPU");
    let _ = net::model::Model::load(&dir, &device);
});
