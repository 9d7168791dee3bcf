//! The errors of the evaluation stage, below every module of the crate: each names the player
//! spec, file or field at fault.

/// Errors of the evaluation stage; each names the player spec, file or field at fault.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("player `{spec}`: {why}")]
    BadSpec { spec: String, why: String },
    #[error(transparent)]
    Model(#[from] net::model::ModelError),
    #[error("{}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Json {
        path: std::path::PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: no eval directory: play a match or a gate with --run first", dir.display())]
    NoEvalDir { dir: std::path::PathBuf },
    #[error("{path}, line {line}: {msg}")]
    Parse {
        path: String,
        line: usize,
        msg: String,
    },
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    RunDir(#[from] run::RunDirError),
    #[error("interrupted: the match was stopped before its end and nothing of it was written")]
    Interrupted,
    #[error("stopped: {what} was stopped before its end")]
    Stopped { what: String },
    /// A study stopped by a signal: its finished pieces are kept (`study::resume`).
    #[error(
        "stopped before its end: the study's finished pieces are kept in {}, and the same command goes on from them",
        pieces.display()
    )]
    StudyStopped { pieces: std::path::PathBuf },
    #[error("{player}: {source}")]
    Search {
        player: String,
        #[source]
        source: selfplay::search::SearchError,
    },
}
