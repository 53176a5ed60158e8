//! A small RFC 4180 CSV reader and writer.

mod reader;
mod writer;

pub use reader::{Error, Reader, Record};
pub use writer::{write_record, Writer};
