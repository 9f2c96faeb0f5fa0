//! Renderers: everything rtgauge shows is produced from a result document here.

pub mod format;
pub mod table;
