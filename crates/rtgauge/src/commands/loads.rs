//! `rtgauge loads`.

use anyhow::Result;

pub fn list() -> Result<u8> {
    anyhow::bail!("loads are not available in this build yet")
}
