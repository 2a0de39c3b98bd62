//! Sets of CPUs as the kernel writes them: lists (`0-3,8`) and hexadecimal masks.

/// A CPU list (`0-3,8`) as in `Documentation/admin-guide/kernel-parameters.rst` "cpu lists";
/// an empty string is the empty set.
///
/// # Errors
/// The text, quoted, when it is not a CPU list.
pub fn cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(Vec::new());
    }
    tickscope_engine::setup::parse_cpu_list(s).map_err(|_| format!("not a CPU list: {s:?}"))
}

/// A hexadecimal CPU mask as in `/proc/irq/*/smp_affinity` (`ff,ffffffff`): the CPUs set.
///
/// # Errors
/// The text, quoted, when it is not a mask.
pub fn cpu_mask(s: &str) -> Result<Vec<usize>, String> {
    let hex: String = s.trim().chars().filter(|&c| c != ',').collect();
    if hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("not a CPU mask: {s:?}"));
    }
    let mut cpus = Vec::new();
    for (k, c) in hex.chars().rev().enumerate() {
        let nibble = c.to_digit(16).unwrap_or(0);
        for bit in 0..4 {
            if nibble & (1 << bit) != 0 {
                cpus.push(k * 4 + bit);
            }
        }
    }
    Ok(cpus)
}
