//! The run directory, and everything every role of a run does with it the same way: its layout
//! and paths (`rundir`), atomic writes (`atomic`), the roles and the locks that one process at
//! a time may hold (`role`) with their leases (`lease`), where a run lives (`location`), the one
//! door through which every role opens a run (`session`), a run that lives in a bucket through
//! a local mirror (`store`), stopping on a signal after the write in progress (`stop`), this
//! machine and process as locks and logs name them (`host`), the roles' logs (`logging`) and
//! TensorBoard event files (`tb`). It knows nothing of games, networks or search.

pub mod atomic;
pub mod error;
pub mod host;
mod inject;
pub mod lease;
pub mod location;
pub mod logging;
pub mod progress;
pub mod role;
pub mod rundir;
pub mod session;
pub mod stop;
pub mod store;
pub mod tb;

pub use atomic::{
    append_line, check_writable, temporary_name, write_atomic, write_atomic_with, write_dir_atomic,
};
pub use error::RunDirError;
pub use host::{env_seconds, host_name};
pub use location::{OpenRun, RunLocation};
pub use role::{Lock, Role};
pub use rundir::{
    check_format, format_v1, resolve_checkpoint, BestPointer, Checkpoint, RoleLock, RunDir,
    ShardPaths, ShardSource, FORMAT_VERSION, META_FILE, WEIGHTS_FILE,
};
pub use session::{Opening, Session, SessionError};
pub use stop::{install_stop_handler, stop_requested, Stop, StopGuard};
