//! `rtgauge doctor`.

use crate::cli::DoctorArgs;
use anyhow::Result;

pub fn doctor(_args: DoctorArgs) -> Result<u8> {
    anyhow::bail!("doctor is not available in this build yet")
}
