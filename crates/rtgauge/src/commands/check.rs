//! `rtgauge check`.

use crate::cli::CheckArgs;
use anyhow::Result;

pub fn check(_args: CheckArgs) -> Result<u8> {
    anyhow::bail!("check is not available in this build yet")
}
