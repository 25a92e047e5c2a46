//! The commands, one module each, and what they share.

pub(crate) mod assign;
pub(crate) mod io;
pub(crate) mod lead;
pub(crate) mod simulate;
pub(crate) mod wire;
