//! The peak resident memory of a process, as Linux counts it: what the memory tests bound and
//! the bench (`benches/figures`, which takes this file by path) reports.

/// The peak RSS (VmHWM) of process `pid` so far, in kB; 0 where /proc is not there.
pub fn vm_hwm_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}
