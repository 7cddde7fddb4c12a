//! Whether the case a thread judges is a failing value sent again to confirm it: the property
//! runner marks it, and what a rule counts per value (the coverage table's cases) reads it, so
//! the count needs nothing of the runner.

std::thread_local! {
    /// Set while this thread sends a failing value again to confirm it.
    static RESENDING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the case this thread judges is a failing value sent again to confirm it: what a
/// rule counts per value (the coverage table's cases) it counts once, the first time.
pub fn resending() -> bool {
    RESENDING.with(std::cell::Cell::get)
}

/// Marks this thread as re-sending until dropped (a case that panics included).
pub struct Resending;

impl Resending {
    pub fn start() -> Resending {
        RESENDING.with(|flag| flag.set(true));
        Resending
    }
}

impl Drop for Resending {
    fn drop(&mut self) {
        RESENDING.with(|flag| flag.set(false));
    }
}
