//! The project's own rules: the source's floors, and docs that say what the code does.

mod circles;
mod layers;
mod readme;
