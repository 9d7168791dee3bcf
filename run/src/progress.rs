//! One look for every progress bar of the workspace's roles: the bar, the count and what is
//! counted, the time so far, then the caller's running figures (`set_message`). Drawn on
//! stderr. When stderr is no terminal (a log file, a pipe, a Slurm or Kubernetes job's output),
//! indicatif would draw nothing, and a study of an hour would say nothing for that hour; there
//! the bar becomes a plain line (the count, what is counted, the time so far, the figures) at
//! most once a minute, the first a minute after the bar starts, so short runs and the tests'
//! captured stderr get the roles' printed lines only.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use std::fmt;
use std::io::{IsTerminal, Write};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How often a bar drawn into a log writes its line.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// A bar of `len` steps counting `what` ("games", "steps", "positions proved"), or a hidden
/// one when `shown` is false (a role's `--quiet`, or a part of a role that reports otherwise).
pub fn bar(len: u64, what: &str, shown: bool) -> ProgressBar {
    if !shown {
        return ProgressBar::hidden();
    }
    if std::io::stderr().is_terminal() {
        drawn(len, what, ProgressDrawTarget::stderr(), "{bar:30} ")
    } else {
        drawn(len, what, logged(std::io::stderr(), LOG_EVERY), "")
    }
}

/// A bar drawn on `target`, its template led by `lead` (the bar itself on a terminal, nothing
/// in a log, where a line of blocks says less than the count beside it).
fn drawn(len: u64, what: &str, target: ProgressDrawTarget, lead: &str) -> ProgressBar {
    let template = format!("{lead}{{pos}}/{{len}} {{prefix}} [{{elapsed_precise}}] {{msg}}");
    let style = ProgressStyle::with_template(&template).expect("a valid template");
    let bar = ProgressBar::with_draw_target(Some(len), target).with_style(style);
    bar.set_prefix(what.to_string());
    bar
}

/// A draw target writing the bar's text to `sink` as one line, at most once every `every`
/// (indicatif itself draws at most once a second here).
fn logged<W: Write + Send + 'static>(sink: W, every: Duration) -> ProgressDrawTarget {
    let lines = LogLines {
        every,
        state: Mutex::new(Pending {
            sink,
            text: String::new(),
            last: Instant::now(),
        }),
    };
    ProgressDrawTarget::term_like_with_hz(Box::new(lines), 1)
}

/// A terminal for indicatif that has no cursor: what one drawing writes is gathered, and on
/// its flush written as a line if `every` has passed since the last one, or else dropped.
struct LogLines<W> {
    every: Duration,
    state: Mutex<Pending<W>>,
}

struct Pending<W> {
    sink: W,
    /// The drawing in progress: its lines, the carriage returns and padding a terminal needs.
    text: String,
    /// When the last line was written (the bar's start before the first).
    last: Instant,
}

impl<W> LogLines<W> {
    /// The drawing in progress; a panic elsewhere while it was held leaves text, not harm.
    fn pending(&self) -> MutexGuard<'_, Pending<W>> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<W> fmt::Debug for LogLines<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogLines")
            .field("every", &self.every)
            .finish_non_exhaustive()
    }
}

impl<W: Write + Send> TermLike for LogLines<W> {
    fn width(&self) -> u16 {
        // Wide enough that indicatif never wraps or cuts a line: a log has no edge.
        u16::MAX
    }

    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn write_line(&self, s: &str) -> std::io::Result<()> {
        let mut state = self.pending();
        state.text.push_str(s);
        state.text.push(' ');
        Ok(())
    }

    fn write_str(&self, s: &str) -> std::io::Result<()> {
        let mut state = self.pending();
        state.text.push_str(s);
        Ok(())
    }

    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }

    fn flush(&self) -> std::io::Result<()> {
        let mut state = self.pending();
        let text = std::mem::take(&mut state.text);
        let line = text.replace('\r', "");
        let line = line.trim();
        if line.is_empty() || state.last.elapsed() < self.every {
            return Ok(());
        }
        state.last = Instant::now();
        writeln!(state.sink, "{line}")?;
        state.sink.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A sink the test can read after the bar has written into it.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    /// Fails if a logged bar writes nothing once its interval has passed, writes a terminal's
    /// carriage returns or padding, or loses the count, what is counted or the message.
    #[test]
    fn a_logged_bar_writes_its_count_as_a_plain_line() {
        let sink = Shared::default();
        let bar = drawn(1600, "games", logged(sink.clone(), Duration::ZERO), "");
        bar.set_message("b2 0.556");
        bar.set_position(37);
        let text = sink.text();
        let last = text.lines().last().expect("a line written");
        assert!(last.starts_with("37/1600 games [00:00:0"), "{text:?}");
        assert!(last.ends_with("b2 0.556"), "{text:?}");
        assert!(!text.contains('\r') && text.ends_with('\n'), "{text:?}");
    }

    /// Fails if a logged bar writes before its interval has passed (a test's or a short run's
    /// stderr would fill with lines) or writes once per drawing instead of once per interval.
    #[test]
    fn a_logged_bar_keeps_quiet_within_its_interval() {
        let sink = Shared::default();
        let bar = drawn(
            100,
            "games",
            logged(sink.clone(), Duration::from_secs(3600)),
            "",
        );
        for done in 1..=10 {
            bar.set_position(done);
        }
        bar.finish();
        assert_eq!(sink.text(), "");
    }
}
