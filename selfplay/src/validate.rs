//! Checks of config values shared by every table: each float finite and in its range, the
//! error naming the field. The ground floor of the config code: the tables' own modules
//! (search, self-play, training, evaluation) use it, and it uses none of them.

use std::fmt::Display;

/// Where a config float must lie besides being finite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FloatRange {
    /// Any finite value.
    Any,
    /// Greater than 0.
    Positive,
    /// 0 or more.
    NonNegative,
    /// In `[lo, hi]`.
    Closed(f64, f64),
    /// In `[lo, hi)`.
    HalfOpen(f64, f64),
}

/// Check one float of a config: finite and in `range`. The error names the field, e.g.
/// "search.c_visit must be a positive finite number (got NaN)". Checked apart from the range
/// because NaN fails every comparison and infinity passes some, and either would otherwise
/// reach the search or the optimizer and fail far from the config.
pub fn check_float<T: Copy + Into<f64> + Display>(
    field: &str,
    v: T,
    range: FloatRange,
) -> Result<(), String> {
    let x: f64 = v.into();
    let (inside, what) = match range {
        FloatRange::Any => (true, "a finite number".to_string()),
        FloatRange::Positive => (x > 0.0, "a positive finite number".into()),
        FloatRange::NonNegative => (x >= 0.0, "a finite number of at least 0".into()),
        FloatRange::Closed(lo, hi) => (lo <= x && x <= hi, format!("between {lo} and {hi}")),
        FloatRange::HalfOpen(lo, hi) => (lo <= x && x < hi, format!("in [{lo}, {hi})")),
    };
    if x.is_finite() && inside {
        Ok(())
    } else {
        Err(format!("{field} must be {what} (got {v})"))
    }
}
