//! The serving wing: a trained player answering other programs, through a line protocol on
//! stdin and stdout (`protocol`) and a small local page over HTTP (`http`, `page.html`).

pub mod http;
pub mod protocol;
