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
//!
//! The other way, a name for an address ([`names_of`]), is a run of a second such program
//! that prints each address with `bpf_snprintf()` and `%ps` (Linux 5.14+, the program
//! type's; the kernel's `sprint_symbol_no_offset()` through `vsnprintf()`, lib/vsprintf.c,
//! Documentation/core-api/printk-formats.rst). That names a function without showing any
//! address, so it needs no `CAP_SYSLOG` — only what the BPF backend holds anyway
//! (`CAP_BPF`, and `CAP_PERFMON` for the helper: `bpf_base_func_proto()`,
//! kernel/bpf/helpers.c) — and no pass over the file, whose lines the kernel formats one
//! by one (≈ 30 ms of system time for this VM's 122 000). Its format string must be a
//! constant the verifier can read: a one-element array map made read-only for programs
//! (`BPF_F_RDONLY_PROG`) and frozen (`BPF_MAP_FREEZE`), referenced by a `BPF_PSEUDO_MAP_VALUE`
//! load (`ARG_PTR_TO_CONST_STR`, kernel/bpf/verifier.c).
//!
//! And an address without `CAP_SYSLOG` ([`addresses_by_name_in_btf`]), in two runs: one
//! program asks the kernel for each function's BTF id (`bpf_btf_find_by_name_kind()`,
//! kernel/bpf/btf.c, `BTF_KIND_FUNC` in the kernel's own BTF), a second loads each
//! function's address by that id (`BPF_PSEUDO_BTF_ID` in a 64-bit immediate load:
//! `check_pseudo_btf_id()`, kernel/bpf/verifier.c, resolves it with `kallsyms_lookup_name()`)
//! and stores it into its context — a pointer leak, which the kernel allows to
//! `CAP_PERFMON` (`bpf_allow_ptr_leaks()`, include/linux/bpf.h).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Bytes of a name's slot in the context: the name, NUL-padded, then its address (u64).
const SLOT: usize = 64;
/// Bytes of a slot the name may take, its terminating NUL included.
const NAME_MAX: usize = SLOT - 8;
/// Most names (or addresses, [`names_of`]) one call takes (the program's size grows with them).
pub(crate) const MAX_NAMES: usize = 32;

/// `bpf_kallsyms_lookup_name` (`__BPF_FUNC_MAPPER`, include/uapi/linux/bpf.h).
const HELPER_KALLSYMS_LOOKUP_NAME: i32 = 179;
/// `bpf_snprintf` (the same list).
const HELPER_SNPRINTF: i32 = 165;
/// `bpf_btf_find_by_name_kind` (the same list).
const HELPER_BTF_FIND_BY_NAME_KIND: i32 = 167;
/// `BTF_KIND_FUNC` (include/uapi/linux/btf.h).
const BTF_KIND_FUNC: i32 = 12;
const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_MAP_FREEZE: libc::c_long = 22;
const BPF_MAP_TYPE_ARRAY: u32 = 2;
const BPF_F_RDONLY_PROG: u32 = 1 << 7;
/// `src_reg` of a 64-bit immediate load that takes a map value's address (map fd in the
/// first `imm`, offset in the second).
const BPF_PSEUDO_MAP_VALUE: u8 = 2;
/// `src_reg` of a 64-bit immediate load that takes a kernel symbol's address by BTF id (id
/// in the first `imm`, the BTF's descriptor in the second: 0 for the kernel's own).
const BPF_PSEUDO_BTF_ID: u8 = 3;
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
const LD_IMM64: u8 = 0x18;
const CALL: u8 = 0x85;
const EXIT: u8 = 0x95;
const R0: u8 = 0;
const R1: u8 = 1;
const R2: u8 = 2;
const R3: u8 = 3;
const R4: u8 = 4;
const R5: u8 = 5;
const R6: u8 = 6;
const FP: u8 = 10;

/// Appends to `p` the copy of a slot's name, the context's [`NAME_MAX`] bytes at `base`
/// (`r6` holds the context), to the stack at `fp + name_at`: a helper may not take a pointer
/// into the context at an offset.
fn copy_name(p: &mut Vec<Insn>, base: i16, name_at: i16) {
    for w in 0..(NAME_MAX / 8) as i16 {
        p.push(insn(LDX_DW, R0, R6, base + 8 * w, 0));
        p.push(insn(STX_DW, FP, R0, name_at + 8 * w, 0));
    }
}

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
        copy_name(&mut p, base, name_at);
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

/// Loads `insns` as a sleepable `BPF_PROG_TYPE_SYSCALL` program named `name` (at most 15
/// bytes) and runs it once on `ctx`, which the run writes back; `None` where the kernel
/// refuses either step.
fn run_once(insns: &[Insn], name: &[u8], ctx: &mut [u8]) -> Option<()> {
    let license = c"GPL";
    // BPF_PROG_LOAD: prog_type, insn_cnt | insns | license | log_level, log_size | log_buf |
    // kern_version, prog_flags | prog_name[16] | the rest 0.
    let mut attr = [0u64; 16];
    attr[0] = u64::from(BPF_PROG_TYPE_SYSCALL) | (insns.len() as u64) << 32;
    attr[1] = insns.as_ptr() as u64;
    attr[2] = license.as_ptr() as u64;
    attr[5] = u64::from(BPF_F_SLEEPABLE) << 32;
    let mut prog_name = [0u8; 16];
    let n = name.len().min(15);
    prog_name[..n].copy_from_slice(&name[..n]);
    attr[6] = u64::from_le_bytes(prog_name[..8].try_into().ok()?);
    attr[7] = u64::from_le_bytes(prog_name[8..].try_into().ok()?);
    let fd = bpf(BPF_PROG_LOAD, &mut attr);
    if fd < 0 {
        return None;
    }
    // SAFETY: a descriptor the kernel just returned, owned by nobody else.
    let prog = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    // BPF_PROG_TEST_RUN: prog_fd, retval | sizes in/out | data_in | data_out | repeat,
    // duration | ctx_size_in, ctx_size_out | ctx_in | ctx_out | flags, cpu | batch_size.
    let mut attr = [0u64; 10];
    attr[0] = prog.as_raw_fd() as u32 as u64;
    attr[5] = ctx.len() as u64;
    attr[6] = ctx.as_mut_ptr() as u64;
    // The run writes the context back into `ctx_in`.
    (bpf(BPF_PROG_TEST_RUN, &mut attr) >= 0).then_some(())
}

/// The addresses of kernel functions `names` (`None` for a name absent, too long or
/// hidden), or `None` when the kernel would not run the lookup (then read
/// `/proc/kallsyms`). At most [`MAX_NAMES`] names.
pub(crate) fn lookup(names: &[&str]) -> Option<Vec<Option<u64>>> {
    if names.is_empty() || names.len() > MAX_NAMES {
        return None;
    }
    let mut ctx = vec![0u8; names.len() * SLOT];
    for (slot, name) in ctx.chunks_mut(SLOT).zip(names) {
        // A name that does not fit stays empty: the lookup refuses it (-EINVAL), 0.
        if name.len() < NAME_MAX && !name.as_bytes().contains(&0) {
            slot[..name.len()].copy_from_slice(name.as_bytes());
        }
    }
    run_once(&program(names.len()), b"tickscope_ksym", &mut ctx)?;
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

/// Bytes of an address's slot in [`names_of`]' context: the address (u64), what
/// `bpf_snprintf` returned (i64: the name's length with its NUL, or a negative error),
/// then the name.
const NAMED_SLOT: usize = 128;
/// Bytes of a [`NAMED_SLOT`] the name may take, its NUL included.
const PRINTED_MAX: usize = NAMED_SLOT - 16;

/// The program for `n` slots of [`names_of`]: per slot, copy the address to the stack (the
/// helper's argument array), print it with the format at `fmt_map`'s value into a stack
/// buffer, store the helper's return and the buffer into the slot.
fn naming_program(n: usize, fmt_map: i32) -> Vec<Insn> {
    let mut p = vec![insn(MOV64_REG, R6, R1, 0, 0)];
    let arg_at: i16 = -8; // fp - 8: the address, as the helper's one argument
    let out_at = arg_at - PRINTED_MAX as i16; // fp - 120: the printed name
    for slot in 0..n {
        let base = (slot * NAMED_SLOT) as i16;
        p.push(insn(LDX_DW, R0, R6, base, 0));
        p.push(insn(STX_DW, FP, R0, arg_at, 0));
        p.push(insn(MOV64_REG, R1, FP, 0, 0));
        p.push(insn(ADD64_IMM, R1, 0, 0, out_at.into()));
        p.push(insn(MOV64_IMM, R2, 0, 0, PRINTED_MAX as i32));
        p.push(insn(LD_IMM64, R3, BPF_PSEUDO_MAP_VALUE, 0, fmt_map));
        p.push(insn(0, 0, 0, 0, 0)); // the value's offset: 0
        p.push(insn(MOV64_REG, R4, FP, 0, 0));
        p.push(insn(ADD64_IMM, R4, 0, 0, arg_at.into()));
        p.push(insn(MOV64_IMM, R5, 0, 0, 8));
        p.push(insn(CALL, 0, 0, 0, HELPER_SNPRINTF));
        p.push(insn(STX_DW, R6, R0, base + 8, 0));
        for w in 0..(PRINTED_MAX / 8) as i16 {
            p.push(insn(LDX_DW, R0, FP, out_at + 8 * w, 0));
            p.push(insn(STX_DW, R6, R0, base + 16 + 8 * w, 0));
        }
    }
    p.push(insn(MOV64_IMM, R0, 0, 0, 0));
    p.push(insn(EXIT, 0, 0, 0, 0));
    p
}

/// A one-element array map holding `value`, read-only for programs and frozen: a constant
/// the verifier accepts where a helper wants a constant string.
fn constant(value: &[u8; 8]) -> Option<OwnedFd> {
    // BPF_MAP_CREATE: map_type, key_size | value_size, max_entries | map_flags, ... 0.
    let mut attr = [0u64; 16];
    attr[0] = u64::from(BPF_MAP_TYPE_ARRAY) | 4 << 32;
    attr[1] = 8 | 1 << 32;
    attr[2] = u64::from(BPF_F_RDONLY_PROG);
    let fd = bpf(BPF_MAP_CREATE, &mut attr);
    if fd < 0 {
        return None;
    }
    // SAFETY: a descriptor the kernel just returned, owned by nobody else.
    let map = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    let key = 0u32;
    // BPF_MAP_UPDATE_ELEM: map_fd | key | value | flags.
    let mut attr = [0u64; 4];
    attr[0] = map.as_raw_fd() as u32 as u64;
    attr[1] = &key as *const u32 as u64;
    attr[2] = value.as_ptr() as u64;
    if bpf(BPF_MAP_UPDATE_ELEM, &mut attr) < 0 {
        return None;
    }
    // BPF_MAP_FREEZE: map_fd.
    let mut attr = [map.as_raw_fd() as u32 as u64];
    (bpf(BPF_MAP_FREEZE, &mut attr) >= 0).then_some(map)
}

/// The names of the kernel functions at `addresses` (`None` for an address that is no
/// symbol's or whose name is longer than 111 bytes), as the kernel's `%ps` prints them, a
/// module's without its `[module]`; or `None` when the kernel would not run the program
/// (then read `/proc/kallsyms`). At most [`MAX_NAMES`] addresses.
pub(crate) fn names_of(addresses: &[u64]) -> Option<Vec<Option<String>>> {
    if addresses.is_empty() || addresses.len() > MAX_NAMES {
        return None;
    }
    let fmt = constant(b"%ps\0\0\0\0\0")?;
    let mut ctx = vec![0u8; addresses.len() * NAMED_SLOT];
    for (slot, a) in ctx.chunks_mut(NAMED_SLOT).zip(addresses) {
        slot[..8].copy_from_slice(&a.to_le_bytes());
    }
    let insns = naming_program(addresses.len(), fmt.as_raw_fd());
    run_once(&insns, b"tickscope_kname", &mut ctx)?;
    Some(ctx.chunks(NAMED_SLOT).map(printed_name).collect())
}

/// The name in a slot [`names_of`]' program filled: `None` where the helper failed or
/// truncated, or printed no symbol (`%ps` prints an address that is none as `0x…`).
fn printed_name(slot: &[u8]) -> Option<String> {
    let ret = i64::from_le_bytes(slot[8..16].try_into().ok()?);
    if ret <= 1 || ret as usize > PRINTED_MAX {
        return None;
    }
    let text = &slot[16..16 + ret as usize - 1];
    let name = text.split(|b| *b == b' ').next()?;
    let name = std::str::from_utf8(name).ok()?;
    (!name.is_empty() && !name.starts_with("0x")).then(|| name.to_string())
}

/// The program for [`btf_func_ids`]: per slot of [`SLOT`] bytes (a name, then a word), copy
/// the name to the stack ([`copy_name`]), ask its `BTF_KIND_FUNC` id with the name's length `lens[slot]` (its NUL included), store
/// the answer (an id, the BTF's descriptor in the high half, or a negative error) into the
/// slot's word.
fn id_program(lens: &[usize]) -> Vec<Insn> {
    let mut p = vec![insn(MOV64_REG, R6, R1, 0, 0)];
    let name_at = -(NAME_MAX as i16) - 8; // fp - 64: the name's copy
    for (slot, len) in lens.iter().enumerate() {
        let base = (slot * SLOT) as i16;
        copy_name(&mut p, base, name_at);
        p.push(insn(MOV64_REG, R1, FP, 0, 0));
        p.push(insn(ADD64_IMM, R1, 0, 0, name_at.into()));
        p.push(insn(MOV64_IMM, R2, 0, 0, *len as i32));
        p.push(insn(MOV64_IMM, R3, 0, 0, BTF_KIND_FUNC));
        p.push(insn(MOV64_IMM, R4, 0, 0, 0));
        p.push(insn(CALL, 0, 0, 0, HELPER_BTF_FIND_BY_NAME_KIND));
        p.push(insn(STX_DW, R6, R0, base + NAME_MAX as i16, 0));
    }
    p.push(insn(MOV64_IMM, R0, 0, 0, 0));
    p.push(insn(EXIT, 0, 0, 0, 0));
    p
}

/// The `BTF_KIND_FUNC` ids of kernel functions `names` in the kernel's own BTF (`None` for a
/// name absent, too long, or found only in a module's BTF), or `None` when the kernel would
/// not run the program (no `CAP_BPF`, Linux before 5.14). At most [`MAX_NAMES`] names.
fn btf_func_ids(names: &[&str]) -> Option<Vec<Option<u32>>> {
    if names.is_empty() || names.len() > MAX_NAMES {
        return None;
    }
    let mut ctx = vec![0u8; names.len() * SLOT];
    let mut lens = Vec::with_capacity(names.len());
    for (slot, name) in ctx.chunks_mut(SLOT).zip(names) {
        // A name that does not fit stays empty, with length 1: the helper refuses it.
        let fits = name.len() < NAME_MAX && !name.as_bytes().contains(&0);
        if fits {
            slot[..name.len()].copy_from_slice(name.as_bytes());
        }
        lens.push(if fits { name.len() + 1 } else { 1 });
    }
    run_once(&id_program(&lens), b"tickscope_btfid", &mut ctx)?;
    Some(
        ctx.chunks(SLOT)
            .map(|slot| {
                let answer = i64::from_le_bytes(slot[NAME_MAX..].try_into().ok()?);
                let fd = (answer >> 32) as i32;
                if answer > 0 && fd > 0 {
                    // A module's BTF: the kernel opened a descriptor for it in this process.
                    // SAFETY: the helper's answer names a descriptor it just installed here.
                    drop(unsafe { OwnedFd::from_raw_fd(fd) });
                    return None;
                }
                u32::try_from(answer).ok().filter(|id| *id > 0)
            })
            .collect(),
    )
}

/// The addresses of kernel functions `names` found through the kernel's BTF — ids by
/// [`btf_func_ids`], addresses by [`addresses_by_btf_id`] — where the kernel shows no
/// address by name (neither root nor `CAP_SYSLOG`): `None` for a name not found or refused.
/// At most [`MAX_NAMES`] names.
pub(crate) fn addresses_by_name_in_btf(names: &[&str]) -> Vec<Option<u64>> {
    let Some(ids) = btf_func_ids(names) else {
        return vec![None; names.len()];
    };
    let known: Vec<u32> = ids.iter().flatten().copied().collect();
    let mut addresses = addresses_by_btf_id(&known).into_iter();
    ids.iter()
        .map(|id| id.and_then(|_| addresses.next().flatten()))
        .collect()
}

/// The program for [`addresses_by_btf_id`]: per id, load the function's address and store it
/// into the context's next word.
fn btf_address_program(ids: &[u32]) -> Vec<Insn> {
    let mut p = vec![insn(MOV64_REG, R6, R1, 0, 0)];
    for (i, id) in ids.iter().enumerate() {
        p.push(insn(LD_IMM64, R1, BPF_PSEUDO_BTF_ID, 0, *id as i32));
        p.push(insn(0, 0, 0, 0, 0)); // the kernel's own BTF
        p.push(insn(STX_DW, R6, R1, (8 * i) as i16, 0));
    }
    p.push(insn(MOV64_IMM, R0, 0, 0, 0));
    p.push(insn(EXIT, 0, 0, 0, 0));
    p
}

/// The addresses of the kernel functions whose BTF ids (`BTF_KIND_FUNC` in
/// `/sys/kernel/btf/vmlinux`) are `ids`, in that order; `None` when the kernel refuses the
/// program — without `CAP_PERFMON`, or for an id that is no function with an address. Where
/// one program for all is refused, each id is asked alone (`None` for those refused). At most
/// [`MAX_NAMES`] ids.
fn addresses_by_btf_id(ids: &[u32]) -> Vec<Option<u64>> {
    let ask = |ids: &[u32]| -> Option<Vec<u64>> {
        if ids.is_empty() || ids.len() > MAX_NAMES {
            return None;
        }
        let mut ctx = vec![0u8; 8 * ids.len()];
        run_once(&btf_address_program(ids), b"tickscope_kaddr", &mut ctx)?;
        Some(
            ctx.chunks(8)
                .map(|w| u64::from_le_bytes(w.try_into().unwrap_or_default()))
                .collect(),
        )
    };
    match ask(ids) {
        Some(all) => all
            .into_iter()
            .map(|a| Some(a).filter(|a| *a != 0))
            .collect(),
        None if ids.len() > 1 => ids
            .iter()
            .map(|id| {
                ask(&[*id])
                    .and_then(|a| a.first().copied())
                    .filter(|a| *a != 0)
            })
            .collect(),
        None => vec![None; ids.len()],
    }
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

    #[test]
    fn the_naming_program_prints_each_address_and_stays_inside_its_slots() {
        let p = naming_program(3, 7);
        let calls: Vec<_> = p.iter().filter(|i| i.code == CALL).collect();
        assert_eq!(calls.len(), 3);
        assert!(calls.iter().all(|i| i.imm == HELPER_SNPRINTF));
        // The format's address: a map value load of map fd 7, offset 0, per slot.
        let loads: Vec<_> = p
            .iter()
            .enumerate()
            .filter(|(_, i)| i.code == LD_IMM64)
            .collect();
        assert_eq!(loads.len(), 3);
        for (at, i) in loads {
            assert_eq!((i.regs, i.imm), (R3 | BPF_PSEUDO_MAP_VALUE << 4, 7));
            assert_eq!((p[at + 1].code, p[at + 1].imm), (0, 0));
        }
        assert_eq!(p.last().map(|i| i.code), Some(EXIT));
        for i in &p {
            let ctx_access =
                (i.code == LDX_DW && i.regs >> 4 == R6) || (i.code == STX_DW && i.regs & 15 == R6);
            if ctx_access {
                assert!(i.off >= 0 && (i.off as usize) + 8 <= 3 * NAMED_SLOT);
            }
            let stack_access =
                (i.code == LDX_DW && i.regs >> 4 == FP) || (i.code == STX_DW && i.regs & 15 == FP);
            if stack_access {
                assert!((-512..=-8).contains(&i.off));
            }
        }
    }

    #[test]
    fn a_printed_name_is_cut_at_its_module_and_refused_when_no_symbol() {
        let slot = |ret: i64, text: &str| {
            let mut s = vec![0u8; NAMED_SLOT];
            s[8..16].copy_from_slice(&ret.to_le_bytes());
            s[16..16 + text.len()].copy_from_slice(text.as_bytes());
            s
        };
        let named = |ret: i64, text: &str| printed_name(&slot(ret, text));
        assert_eq!(named(15, "hrtimer_wakeup"), Some("hrtimer_wakeup".into()));
        assert_eq!(
            named(27, "nf_timer_fn [nf_conntrack]"),
            Some("nf_timer_fn".into())
        );
        // An address that is no symbol prints as hex; errors and truncation are no name.
        assert_eq!(named(19, "0xffffffff81000001"), None);
        assert_eq!(named(-22, ""), None);
        assert_eq!(named(1, ""), None);
        assert_eq!(named(PRINTED_MAX as i64 + 1, "x"), None);
        assert_eq!(names_of(&[]), None);
        assert_eq!(names_of(&[1; MAX_NAMES + 1]), None);
    }

    /// Root only: each address found by name is named back by the printing program (where
    /// the kernel runs both).
    #[test]
    fn names_of_the_looked_up_addresses_are_their_names() {
        let names = ["hrtimer_wakeup", "schedule", "tick_nohz_handler"];
        let Some(found) = lookup(&names) else {
            eprintln!("skipping names_of_the_looked_up_addresses_are_their_names: the kernel refused the lookup program (needs CAP_BPF and Linux 5.16+)");
            return;
        };
        let known: Vec<(&str, u64)> = names
            .iter()
            .zip(found)
            .filter_map(|(n, a)| Some((*n, a?)))
            .collect();
        if known.is_empty() {
            eprintln!("skipping names_of_the_looked_up_addresses_are_their_names: addresses hidden (no CAP_SYSLOG)");
            return;
        }
        let mut addresses: Vec<u64> = known.iter().map(|(_, a)| *a).collect();
        // One byte into the first function: its name, the offset dropped.
        addresses.push(known[0].1 + 1);
        let Some(printed) = names_of(&addresses) else {
            panic!("the lookup program ran but the naming one was refused");
        };
        for ((name, _), got) in known.iter().zip(&printed) {
            assert_eq!(got.as_deref(), Some(*name));
        }
        assert_eq!(
            printed.last().cloned().flatten().as_deref(),
            Some(known[0].0)
        );
    }

    #[test]
    fn the_id_program_asks_each_name_with_its_length_for_a_function() {
        let p = id_program(&[15, 1]);
        let calls: Vec<_> = p.iter().filter(|i| i.code == CALL).collect();
        assert_eq!(calls.len(), 2);
        assert!(calls.iter().all(|i| i.imm == HELPER_BTF_FIND_BY_NAME_KIND));
        let imm = |reg: u8| -> Vec<i32> {
            p.iter()
                .filter(|i| i.code == MOV64_IMM && i.regs == reg)
                .map(|i| i.imm)
                .collect()
        };
        assert_eq!(imm(R2), [15, 1]);
        assert_eq!(imm(R3), [BTF_KIND_FUNC, BTF_KIND_FUNC]);
        for i in &p {
            if (i.code == LDX_DW && i.regs >> 4 == R6) || (i.code == STX_DW && i.regs & 15 == R6) {
                assert!(i.off >= 0 && (i.off as usize) + 8 <= 2 * SLOT);
            }
        }
        assert_eq!(p.last().map(|i| i.code), Some(EXIT));
        assert_eq!(btf_func_ids(&[]), None);
    }

    #[test]
    fn the_address_program_loads_each_id_into_its_word() {
        let p = btf_address_program(&[11, 22]);
        let loads: Vec<_> = p.iter().filter(|i| i.code == LD_IMM64).collect();
        assert_eq!(loads.len(), 2);
        assert!(loads.iter().all(|i| i.regs == R1 | BPF_PSEUDO_BTF_ID << 4));
        assert_eq!((loads[0].imm, loads[1].imm), (11, 22));
        let stores: Vec<i16> = p
            .iter()
            .filter(|i| i.code == STX_DW && i.regs & 15 == R6)
            .map(|i| i.off)
            .collect();
        assert_eq!(stores, [0, 8]);
        assert_eq!(p.last().map(|i| i.code), Some(EXIT));
        assert_eq!(addresses_by_btf_id(&[]), Vec::<Option<u64>>::new());
    }

    /// Root only: the address of a function found through the BTF is the one asked by name.
    #[test]
    fn an_address_through_the_btf_is_the_address_by_name() {
        let names = ["hrtimer_wakeup", "schedule"];
        let by_name = lookup(&names).unwrap_or_default();
        if by_name.len() != 2 || by_name.iter().any(Option::is_none) {
            eprintln!("skipping an_address_through_the_btf_is_the_address_by_name: no address by name here (needs CAP_BPF, CAP_SYSLOG, Linux 5.16+)");
            return;
        }
        if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
            eprintln!("skipping an_address_through_the_btf_is_the_address_by_name: no kernel BTF");
            return;
        }
        let ids = btf_func_ids(&["hrtimer_wakeup", "no_such_function_xyz", "schedule"]).unwrap();
        assert!(ids[0].is_some() && ids[2].is_some(), "{ids:?}");
        assert_eq!(ids[1], None);
        let through_btf =
            addresses_by_name_in_btf(&["hrtimer_wakeup", "no_such_function_xyz", "schedule"]);
        assert_eq!(through_btf, [by_name[0], None, by_name[1]]);
        // An id that is no function (BTF id 1: a base type): that one refused, the other
        // still answered.
        let id = ids[0].unwrap();
        assert_eq!(addresses_by_btf_id(&[1, id]), [None, by_name[0]]);
    }
}
