//! The report files.

mod attestation;
mod formats;
mod html;
mod snapshots;
