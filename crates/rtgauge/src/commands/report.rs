//! `rtgauge report`.

use crate::cli::ReportArgs;
use anyhow::Result;

pub fn report(_args: ReportArgs) -> Result<u8> {
    anyhow::bail!("report is not available in this build yet")
}
