//! Following symbolic links the way the kernel's `fs.protected_symlinks` rule allows.
//!
//! An output path may lead through symbolic links (docs/run.md, "Output files": a link to a
//! regular file is written through). In a sticky world-writable directory — `/tmp`,
//! `/var/tmp`, `/dev/shm` — anybody can plant a link, and a link planted by another user
//! can make a privileged run overwrite the link's target. Linux refuses to follow such a
//! link when `fs.protected_symlinks` is 1 (the default of most distributions, but it can be
//! 0). tickscope applies the same rule itself, whatever the setting, to every link on the
//! way to an output (final or intermediate): a link in a directory that is sticky
//! (`S_ISVTX`) and world-writable (`S_IWOTH`) is followed only when the link is owned by
//! the caller (effective uid) or by the directory's owner.
//!
//! Source: the Linux kernel's Documentation/admin-guide/sysctl/fs.rst, "protected_symlinks":
//! "When set to "1" symlinks are permitted to be followed only when outside a sticky
//! world-writable directory, or when the uid of the symlink and follower match, or when the
//! directory owner matches the symlink's owner." (fs/namei.c, `may_follow_link`;
//! <https://docs.kernel.org/admin-guide/sysctl/fs.html>).
//!
//! [`resolve`] walks the path component by component as path resolution does, so the path
//! it returns is the one that was checked: the caller writes there, not through the links
//! again.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// Links followed before giving up, as the kernel's `MAXSYMLINKS` (40, path_resolution(7)).
const MAX_LINKS: usize = 40;

/// A link the rule forbids following.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forbidden {
    /// The link.
    pub link: PathBuf,
    /// Its owner's uid.
    pub link_owner: u32,
    /// The sticky world-writable directory holding it.
    pub dir: PathBuf,
    /// The directory's owner's uid.
    pub dir_owner: u32,
}

/// Why a path could not be resolved.
#[derive(Debug)]
pub enum Unresolved {
    /// A link the rule forbids.
    Forbidden(Forbidden),
    /// An I/O error: a link that cannot be read, a directory that cannot be examined, or
    /// more than `MAX_LINKS` (40) links (`ELOOP`).
    Io(io::Error),
}

/// Whether a link owned by `link_owner` in a directory of mode `dir_mode` owned by
/// `dir_owner` may be followed by `follower` (an effective uid): the kernel's rule.
pub fn may_follow(dir_mode: u32, dir_owner: u32, link_owner: u32, follower: u32) -> bool {
    let sticky_world_writable = dir_mode & libc::S_ISVTX != 0 && dir_mode & libc::S_IWOTH != 0;
    !sticky_world_writable || link_owner == follower || link_owner == dir_owner
}

/// `path` with every symbolic link followed and `.` and `..` resolved, each link checked
/// by [`may_follow`] for the calling process's effective uid. Components from the first one
/// that does not exist on are appended as they are (a new file's name).
///
/// # Errors
/// [`Unresolved::Forbidden`] for the first link the rule forbids; [`Unresolved::Io`] as
/// described there.
pub fn resolve(path: &Path) -> Result<PathBuf, Unresolved> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    let mut todo: VecDeque<OsString> = VecDeque::new();
    let mut cur = if path.is_absolute() {
        PathBuf::from("/")
    } else {
        std::env::current_dir().map_err(Unresolved::Io)?
    };
    push_front(&mut todo, path);
    let mut links = 0;
    while let Some(name) = todo.pop_front() {
        match name.to_str() {
            Some("/") => cur = PathBuf::from("/"),
            Some(".") => {}
            Some("..") => {
                cur.pop();
            }
            _ => {
                let next = cur.join(&name);
                let meta = match std::fs::symlink_metadata(&next) {
                    Ok(m) => m,
                    Err(_) => {
                        // Nothing more to follow: the rest is a name to be created (or an
                        // error the caller's open reports).
                        cur = next;
                        cur.extend(todo.drain(..));
                        return Ok(cur);
                    }
                };
                if !meta.file_type().is_symlink() {
                    cur = next;
                    continue;
                }
                let dir = std::fs::metadata(&cur).map_err(Unresolved::Io)?;
                if !may_follow(dir.mode(), dir.uid(), meta.uid(), euid) {
                    return Err(Unresolved::Forbidden(Forbidden {
                        link: next,
                        link_owner: meta.uid(),
                        dir: cur,
                        dir_owner: dir.uid(),
                    }));
                }
                links += 1;
                if links > MAX_LINKS {
                    return Err(Unresolved::Io(io::Error::from_raw_os_error(libc::ELOOP)));
                }
                let target = std::fs::read_link(&next).map_err(Unresolved::Io)?;
                push_front(&mut todo, &target);
            }
        }
    }
    Ok(cur)
}

/// Puts `path`'s components before what is still to be resolved (the root as `/`).
fn push_front(todo: &mut VecDeque<OsString>, path: &Path) {
    for c in path.components().rev() {
        let name = match c {
            Component::RootDir | Component::Prefix(_) => OsString::from("/"),
            Component::CurDir => OsString::from("."),
            Component::ParentDir => OsString::from(".."),
            Component::Normal(n) => n.to_os_string(),
        };
        todo.push_front(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn the_kernel_rule() {
        let sticky_tmp = 0o41777;
        let plain_777 = 0o40777;
        let sticky_not_world = 0o41770;
        // follower 0, directory owner 0
        assert!(
            !may_follow(sticky_tmp, 0, 65534, 0),
            "another user's link in /tmp"
        );
        assert!(may_follow(sticky_tmp, 0, 0, 0), "the caller's own link");
        assert!(
            may_follow(sticky_tmp, 65534, 65534, 0),
            "the directory owner's link"
        );
        assert!(may_follow(plain_777, 0, 65534, 0), "not sticky");
        assert!(
            may_follow(sticky_not_world, 0, 65534, 0),
            "not world-writable"
        );
        assert!(!may_follow(sticky_tmp, 0, 1000, 65534), "any follower");
    }

    #[test]
    fn resolves_links_dots_and_new_names_like_the_kernel() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir(root.join("a")).unwrap();
        std::fs::create_dir(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/f"), "x").unwrap();
        symlink("a/b", root.join("l")).unwrap();
        symlink(root.join("l/f"), root.join("abs")).unwrap();
        // `..` after a link is taken in the link's target (physical, as the kernel does).
        assert_eq!(resolve(&root.join("l/../b/f")).unwrap(), root.join("a/b/f"));
        assert_eq!(resolve(&root.join("abs")).unwrap(), root.join("a/b/f"));
        assert_eq!(
            resolve(&root.join("l/./new/name")).unwrap(),
            root.join("a/b/new/name")
        );
        symlink("loop", root.join("loop")).unwrap();
        assert!(matches!(
            resolve(&root.join("loop")),
            Err(Unresolved::Io(_))
        ));
    }
}
