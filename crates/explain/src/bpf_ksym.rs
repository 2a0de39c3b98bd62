//! Kernel function addresses by name without reading `/proc/kallsyms`: one run of a tiny
//! `BPF_PROG_TYPE_SYSCALL` program that calls `bpf_kallsyms_lookup_name()` for each name
//! (Linux 5.16+; "BPF helpers", man 7 bpf-helpers; kernel/bpf/syscall.c). The kernel's
//! lookup is a binary search over its sorted symbol table (`kallsyms_lookup_name()`,
//! kernel/kallsyms.c), where the text file formats every line before the one wanted: on
//! this VM's kernel (122 000 symbols) the pass over `/proc/kallsyms` that finds the wait
//! timers' callbacks cost ≈ 21 ms of CPU, the program's load and run well under one.
//!
//! The program is a few instructions per name, built here (no compiler, no object):
//! `BPF_PROG_LOAD` it sleepable (syscall programs must be), `BPF_PROG_TEST_RUN` it once
//! with the names in its context, read the addresses the run wrote back into that context
//! (bpf(2); include/uapi/linux/bpf.h; `bpf_prog_test_run_syscall()`, net/bpf/test_run.c),
//! close it. Any refusal (an older kernel, no CAP_BPF) returns `None`: the caller reads
//! `/proc/kallsyms` as before. The helper answers as the file does: no address where the
//! caller may not see kernel addresses (`kallsyms_show_value()`, the same rule as the
//! file's zeros).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Bytes of a name's slot in the context: the name, NUL-padded, then its address (u64).
const SLOT: usize = 64;
/// Bytes of a slot the name may take, its terminating NUL included.
const NAME_MAX: usize = SLOT - 8;
/// Most names one call looks up (the program's size grows with them).
pub(crate) const MAX_NAMES: usize = 32;

/// `bpf_kallsyms_lookup_name` (`__BPF_FUNC_MAPPER`, include/uapi/linux/bpf.h).
const HELPER_KALLSYMS_LOOKUP_NAME: i32 = 179;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_PROG_TEST_RUN: libc::c_long = 10;
const BPF_PROG_TYPE_SYSCALL: u32 = 31;
const BPF_F_SLEEPABLE: u32 = 1 << 4;

/// One instruction (`struct bpf_insn`): opcode, dst | src << 4, offset, immediate.
#[repr(C)]
#[derive(Clone, Copy)]
struct Insn {
    code: u8,
    regs: u8,
    off: i16,
    imm: i32,
}

const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn {
        code,
        regs: dst | (src << 4),
        off,
        imm,
    }
}

// Opcodes (include/uapi/linux/bpf.h, bpf_common.h): 64-bit moves and adds, double-word
// loads and stores, call, exit.
const MOV64_REG: u8 = 0xbf;
const MOV64_IMM: u8 = 0xb7;
const ADD64_IMM: u8 = 0x07;
const LDX_DW: u8 = 0x79;
const STX_DW: u8 = 0x7b;
const ST_DW: u8 = 0x7a;
const CALL: u8 = 0x85;
const EXIT: u8 = 0x95;
const R0: u8 = 0;
const R1: u8 = 1;
const R2: u8 = 2;
const R3: u8 = 3;
const R4: u8 = 4;
const R6: u8 = 6;
const FP: u8 = 10;

/// The program for `n` slots: per slot, copy the name from the context to the stack (a
/// helper may not take a pointer into the context at an offset), look it up into a stack
/// word set to 0 first (it stays 0 where the lookup is refused), store that word into the
/// slot's last 8 bytes.
fn program(n: usize) -> Vec<Insn> {
    let mut p = vec![insn(MOV64_REG, R6, R1, 0, 0)];
    let name_at = -(NAME_MAX as i16) - 8; // fp - 64: the name's copy
    let addr_at = name_at - 8; // fp - 72: the address
    for slot in 0..n {
        let base = (slot * SLOT) as i16;
        for w in 0..(NAME_MAX / 8) as i16 {
            p.push(insn(LDX_DW, R0, R6, base + 8 * w, 0));
            p.push(insn(STX_DW, FP, R0, name_at + 8 * w, 0));
        }
        p.push(insn(ST_DW, FP, 0, addr_at, 0));
        p.push(insn(MOV64_REG, R1, FP, 0, 0));
        p.push(insn(ADD64_IMM, R1, 0, 0, name_at.into()));
        p.push(insn(MOV64_IMM, R2, 0, 0, NAME_MAX as i32));
        p.push(insn(MOV64_IMM, R3, 0, 0, 0));
        p.push(insn(MOV64_REG, R4, FP, 0, 0));
        p.push(insn(ADD64_IMM, R4, 0, 0, addr_at.into()));
        p.push(insn(CALL, 0, 0, 0, HELPER_KALLSYMS_LOOKUP_NAME));
        p.push(insn(LDX_DW, R0, FP, addr_at, 0));
        p.push(insn(STX_DW, R6, R0, base + NAME_MAX as i16, 0));
    }
    p.push(insn(MOV64_IMM, R0, 0, 0, 0));
    p.push(insn(EXIT, 0, 0, 0, 0));
    p
}

/// bpf(2) with `attr` (the command's member of `union bpf_attr`, as u64 words).
fn bpf(cmd: libc::c_long, attr: &mut [u64]) -> libc::c_long {
    // SAFETY: `attr` is a zero-padded `union bpf_attr` member of the given size; the pointers
    // inside it point to buffers that live across the call.
    unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr.as_mut_ptr(),
            std::mem::size_of_val(attr) as libc::c_uint,
        )
    }
}

/// The addresses of kernel functions `names` (`None` for a name absent, too long or
/// hidden), or `None` when the kernel would not run the lookup (then read
/// `/proc/kallsyms`). At most [`MAX_NAMES`] names.
pub(crate) fn lookup(names: &[&str]) -> Option<Vec<Option<u64>>> {
    if names.is_empty() || names.len() > MAX_NAMES {
        return None;
    }
    let insns = program(names.len());
    let license = c"GPL";
    // BPF_PROG_LOAD: prog_type, insn_cnt | insns | license | log_level, log_size | log_buf |
    // kern_version, prog_flags | prog_name[16] | the rest 0.
    let mut attr = [0u64; 16];
    attr[0] = u64::from(BPF_PROG_TYPE_SYSCALL) | (insns.len() as u64) << 32;
    attr[1] = insns.as_ptr() as u64;
    attr[2] = license.as_ptr() as u64;
    attr[5] = u64::from(BPF_F_SLEEPABLE) << 32;
    attr[6] = u64::from_le_bytes(*b"tickscop");
    attr[7] = u64::from_le_bytes(*b"e_ksym\0\0");
    let fd = bpf(BPF_PROG_LOAD, &mut attr);
    if fd < 0 {
        return None;
    }
    // SAFETY: a descriptor the kernel just returned, owned by nobody else.
    let prog = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    let mut ctx = vec![0u8; names.len() * SLOT];
    for (slot, name) in ctx.chunks_mut(SLOT).zip(names) {
        // A name that does not fit stays empty: the lookup refuses it (-EINVAL), 0.
        if name.len() < NAME_MAX && !name.as_bytes().contains(&0) {
            slot[..name.len()].copy_from_slice(name.as_bytes());
        }
    }
    // BPF_PROG_TEST_RUN: prog_fd, retval | sizes in/out | data_in | data_out | repeat,
    // duration | ctx_size_in, ctx_size_out | ctx_in | ctx_out | flags, cpu | batch_size.
    let mut attr = [0u64; 10];
    attr[0] = prog.as_raw_fd() as u32 as u64;
    attr[5] = ctx.len() as u64;
    attr[6] = ctx.as_mut_ptr() as u64;
    if bpf(BPF_PROG_TEST_RUN, &mut attr) < 0 {
        return None;
    }
    // The run wrote the context back into `ctx_in`.
    Some(
        ctx.chunks(SLOT)
            .map(|slot| {
                let mut w = [0u8; 8];
                w.copy_from_slice(&slot[NAME_MAX..]);
                Some(u64::from_le_bytes(w)).filter(|a| *a != 0)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_has_one_lookup_per_name_and_ends_in_exit() {
        let p = program(3);
        let calls = p.iter().filter(|i| i.code == CALL).count();
        assert_eq!(calls, 3);
        assert!(p.iter().all(|i| i.code != CALL || i.imm == 179));
        let last = p.last().map(|i| i.code);
        assert_eq!(last, Some(EXIT));
        // Every context access stays inside the slots.
        for i in &p {
            if (i.code == LDX_DW && i.regs >> 4 == R6) || (i.code == STX_DW && i.regs & 15 == R6) {
                assert!(i.off >= 0 && (i.off as usize) + 8 <= 3 * SLOT);
            }
        }
    }

    #[test]
    fn too_many_or_no_names_are_not_looked_up() {
        assert_eq!(lookup(&[]), None);
        assert_eq!(lookup(&["x"; MAX_NAMES + 1]), None);
    }

    /// Root only: the lookup agrees with `/proc/kallsyms` (where it runs at all).
    #[test]
    fn addresses_match_proc_kallsyms() {
        let names = ["hrtimer_wakeup", "schedule", "no_such_function_xyz"];
        let Some(found) = lookup(&names) else {
            eprintln!("skipping addresses_match_proc_kallsyms: the kernel refused the lookup program (needs CAP_BPF and Linux 5.16+)");
            return;
        };
        assert_eq!(found[2], None);
        let text = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
        for (name, addr) in names[..2].iter().zip(&found[..2]) {
            let in_file = text.lines().find_map(|l| {
                let mut f = l.split_whitespace();
                let (a, _, n) = (f.next()?, f.next()?, f.next()?);
                (n == *name).then(|| u64::from_str_radix(a, 16).ok())?
            });
            match in_file {
                Some(0) | None => assert_eq!(*addr, None, "{name}: hidden or absent"),
                Some(a) => assert_eq!(*addr, Some(a), "{name}"),
            }
        }
    }
}
