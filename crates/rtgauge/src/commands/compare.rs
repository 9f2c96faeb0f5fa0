//! `rtgauge compare`.

use crate::cli::CompareArgs;
use anyhow::Result;

pub fn compare(_args: CompareArgs) -> Result<u8> {
    anyhow::bail!("compare is not available in this build yet")
}
