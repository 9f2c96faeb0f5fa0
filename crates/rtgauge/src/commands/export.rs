//! `rtgauge export`.

use crate::cli::ExportArgs;
use anyhow::Result;

pub fn export(_args: ExportArgs) -> Result<u8> {
    anyhow::bail!("export is not available in this build yet")
}
