//! The API key in no byte written: reports, logs, curl lines, the terminal.

mod command_line;
mod spellings;
