//! Files of an execution (SPEC §7): the job folders given to every engine as WASI preopens
//! (`/input` read-only copies of the inputs, hashed as copied; `/output`; `/work`), the
//! publication of `/output` with validation, and the provenance written beside it.

mod job;
mod provenance;
mod publish;
mod time;

pub use job::{InputRecord, JobDir};
pub use provenance::Provenance;
pub use publish::{
    MANIFEST, OutputLimits, PROVENANCE, PublishError, PublishedFile, Staged, check_destination,
    publish, stage,
};
pub use time::utc_timestamp;
