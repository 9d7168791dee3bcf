//! Certificates of solved positions, and the checker that verifies them without search.
//!
//! A certificate names a position (a game config and the actions that reach it from the start),
//! its winner, and the winner's strategy: one action for every position of the winner's that
//! the strategy reaches, keyed by the position's [`Game::hash`]. The checker plays that
//! strategy against every legal reply of the loser until every line ends in a win for the
//! winner; a position met again on a line, a missing or illegal move, or an ending that is not
//! the winner's refuses the certificate. It shares only the rules ([`Game`]) with the solvers,
//! so no bug of a solver can make it accept a wrong result.
//!
//! **What it trusts.** The checker recognises a position it has verified already by its 64-bit
//! hash (without that, transpositions would make a proof tree exponentially larger than the
//! proof). Two different positions with one hash could let one stand for the other: with N
//! positions the chance is about N²/2⁶⁵, 3·10⁻⁶ for ten million. The moves of the file are not
//! trusted at all: each is checked for legality and followed.
//!
//! **File.** One line of JSON ([`Header`]), then 10 bytes per strategy move, sorted by hash:
//! the position's hash (u64, little-endian) and the action's policy index (u16, little-endian).

use crate::game::{Action, Game, Player};
use crate::games::{AnyGame, GameConfig};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The format tag of the header's first field.
pub const FORMAT: &str = "lifeline-zero-proof/1";
const RECORD: usize = 10;

/// How the solver found a proof (for reports; the checker ignores it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Search {
    pub nodes: u64,
    pub seconds: f64,
    pub repetitions: u64,
    /// Positions proved again while the strategy was extracted.
    pub reproved: u64,
}

/// The first line of a certificate file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub game: GameConfig,
    /// The actions from the start of the game to the position proved, in its notation.
    pub setup: Vec<String>,
    pub winner: Player,
    /// Number of strategy moves that follow the header.
    pub moves: u64,
    #[serde(default)]
    pub search: Search,
}

/// A certificate in memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Certificate {
    pub header: Header,
    pub moves: HashMap<u64, Action>,
}

/// What a successful check saw.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checked {
    /// Distinct positions verified (both players').
    pub positions: u64,
    /// Strategy moves the check used; the file may hold more (moves never reached).
    pub moves_used: u64,
    pub seconds: f64,
}

/// Why a certificate was refused, or could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ProofError {
    #[error("cannot read or write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a certificate: {why}")]
    Format { path: PathBuf, why: String },
    #[error("the certificate's position cannot be set up: {0}")]
    Setup(String),
    #[error("no move for the winner after {line}")]
    MissingMove { line: String },
    #[error("the move {action} after {line} is not legal there")]
    IllegalMove { line: String, action: String },
    #[error("the strategy repeats the position after {line}")]
    Repeats { line: String },
    #[error("the line {line} ends without a win for {winner}")]
    NotAWin { line: String, winner: Player },
}

/// The position a header names: its game's start with the setup actions applied.
pub fn position_of(header: &Header) -> Result<AnyGame, ProofError> {
    let setup = |e: String| ProofError::Setup(e);
    let mut g = header.game.start().map_err(|e| setup(e.to_string()))?;
    for text in &header.setup {
        let a = g.parse_action(text).map_err(|e| setup(e.to_string()))?;
        g.try_apply(a).map_err(|e| setup(format!("{text}: {e}")))?;
    }
    Ok(g)
}

/// Verify that `winner` wins `root` by playing `moves` against every reply.
pub fn check<G: Game>(
    root: &G,
    winner: Player,
    moves: &HashMap<u64, Action>,
) -> Result<Checked, ProofError> {
    let start = Instant::now();
    let mut checker = Checker {
        root,
        winner,
        moves,
        verified: HashSet::new(),
        used: HashSet::new(),
        line: Vec::new(),
        on_line: Vec::new(),
    };
    checker.visit(root)?;
    Ok(Checked {
        positions: checker.verified.len() as u64,
        moves_used: checker.used.len() as u64,
        seconds: start.elapsed().as_secs_f64(),
    })
}

struct Checker<'a, G> {
    root: &'a G,
    winner: Player,
    moves: &'a HashMap<u64, Action>,
    verified: HashSet<u64>,
    used: HashSet<u64>,
    /// The actions from the root to the position being verified, for error messages.
    line: Vec<Action>,
    /// Hashes of the positions on that line.
    on_line: Vec<u64>,
}

impl<G: Game> Checker<'_, G> {
    fn visit(&mut self, g: &G) -> Result<(), ProofError> {
        if let Some(o) = g.outcome() {
            return match o.winner == Some(self.winner) {
                true => Ok(()),
                false => Err(ProofError::NotAWin {
                    line: self.line_text(),
                    winner: self.winner,
                }),
            };
        }
        let key = g.hash();
        if self.verified.contains(&key) {
            return Ok(());
        }
        if self.on_line.contains(&key) {
            return Err(ProofError::Repeats {
                line: self.line_text(),
            });
        }
        self.on_line.push(key);
        let result = if g.to_move() == self.winner {
            self.winner_moves(g, key)
        } else {
            let mut legal = Vec::new();
            g.legal_actions(&mut legal);
            legal.into_iter().try_for_each(|a| self.follow(g, a))
        };
        self.on_line.pop();
        result?;
        self.verified.insert(key);
        Ok(())
    }

    fn winner_moves(&mut self, g: &G, key: u64) -> Result<(), ProofError> {
        let Some(&a) = self.moves.get(&key) else {
            return Err(ProofError::MissingMove {
                line: self.line_text(),
            });
        };
        if !g.is_legal(a) {
            return Err(ProofError::IllegalMove {
                line: self.line_text(),
                action: g.action_to_string(a),
            });
        }
        self.used.insert(key);
        self.follow(g, a)
    }

    fn follow(&mut self, g: &G, a: Action) -> Result<(), ProofError> {
        let mut child = g.clone();
        child.apply(a);
        self.line.push(a);
        let result = self.visit(&child);
        self.line.pop();
        result
    }

    fn line_text(&self) -> String {
        if self.line.is_empty() {
            return "the certificate's position".into();
        }
        let words: Vec<String> = self
            .line
            .iter()
            .map(|&a| self.root.action_to_string(a))
            .collect();
        words.join(" ")
    }
}

impl Certificate {
    /// The file's bytes: the header line, then the moves sorted by hash.
    pub fn to_bytes(&self, game: &impl Game) -> Vec<u8> {
        let mut header = self.header.clone();
        header.moves = self.moves.len() as u64;
        let mut out = serde_json::to_vec(&header).expect("headers serialise");
        out.push(b'\n');
        let mut moves: Vec<(u64, Action)> = self.moves.iter().map(|(&k, &a)| (k, a)).collect();
        moves.sort_unstable_by_key(|m| m.0);
        for (key, a) in moves {
            out.extend_from_slice(&key.to_le_bytes());
            out.extend_from_slice(&(game.policy_index(a) as u16).to_le_bytes());
        }
        out
    }

    /// Write to `path` through a temporary file and a rename, so that a killed solve never
    /// leaves half a certificate under the final name.
    pub fn write(&self, path: &Path, game: &impl Game) -> Result<u64, ProofError> {
        let io = |source| ProofError::Io {
            path: path.to_path_buf(),
            source,
        };
        let bytes = self.to_bytes(game);
        let tmp = path.with_extension("proof.tmp");
        std::fs::write(&tmp, &bytes).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)?;
        Ok(bytes.len() as u64)
    }

    /// Read a certificate file (its header and moves; nothing is checked yet).
    pub fn read(path: &Path) -> Result<(Certificate, AnyGame), ProofError> {
        let bytes = std::fs::read(path).map_err(|source| ProofError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Certificate::from_bytes(&bytes, path)
    }

    /// A certificate from its file's `bytes`, `path` naming it in errors (nothing is checked
    /// yet).
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<(Certificate, AnyGame), ProofError> {
        let bad = |why: String| ProofError::Format {
            path: path.to_path_buf(),
            why,
        };
        let header = read_header(bytes).map_err(bad)?;
        let body = &bytes[bytes.iter().position(|&b| b == b'\n').unwrap_or(0) + 1..];
        if body.len() as u64 != header.moves.saturating_mul(RECORD as u64) {
            return Err(bad(format!(
                "the header announces {} moves ({} bytes) but {} bytes follow it",
                header.moves,
                header.moves.saturating_mul(RECORD as u64),
                body.len()
            )));
        }
        let game = position_of(&header)?;
        let mut moves = HashMap::with_capacity(header.moves as usize);
        for record in body.chunks_exact(RECORD) {
            let key = u64::from_le_bytes(record[..8].try_into().expect("8 bytes"));
            let index = u16::from_le_bytes([record[8], record[9]]) as usize;
            let action = game
                .action_of_policy_index(index)
                .ok_or_else(|| bad(format!("action index {index} is not an action of the game")))?;
            moves.insert(key, action);
        }
        Ok((Certificate { header, moves }, game))
    }
}

/// The header of a certificate's bytes.
fn read_header(bytes: &[u8]) -> Result<Header, String> {
    let end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .ok_or("no header line")?;
    let header: Header = serde_json::from_slice(&bytes[..end])
        .map_err(|e| format!("the header line is not a certificate header: {e}"))?;
    if header.format != FORMAT {
        return Err(format!("format {:?}, expected {FORMAT:?}", header.format));
    }
    Ok(header)
}

/// The header of a certificate file, without reading its moves.
pub fn read_header_of(path: &Path) -> Result<Header, ProofError> {
    use std::io::BufRead;
    let io = |source| ProofError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut line = Vec::new();
    std::io::BufReader::new(file)
        .read_until(b'\n', &mut line)
        .map_err(io)?;
    read_header(&line).map_err(|why| ProofError::Format {
        path: path.to_path_buf(),
        why,
    })
}

/// Read and verify a certificate file.
pub fn check_file(path: &Path) -> Result<(Header, Checked), ProofError> {
    let (cert, game) = Certificate::read(path)?;
    let checked = check(&game, cert.header.winner, &cert.moves)?;
    Ok((cert.header, checked))
}
