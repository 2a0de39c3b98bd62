//! A capture bundle (`--on-late …:capture`): one directory per late wake-up with its
//! breakdown, the decoded trace window around it, the latest window's `/proc` context and
//! the run's settings. Written by the collector into a temporary directory beside the
//! destination and renamed into place, so a reader never sees half a bundle; the temporary
//! directory is listed with the temporary files ([`crate::output::pending`]), so an
//! immediate exit removes it too.

use std::io;
use std::path::{Path, PathBuf};
use tickscope_explain::bundle::Bundle;

/// Writes `bundle` as `dir/name/` (`capture.json`, `trace.jsonl`, `context.json`,
/// `settings.json`); returns the directory.
///
/// # Errors
/// The OS error of creating, writing or renaming; a `name` that exists already.
pub fn write(dir: &Path, name: &str, bundle: &Bundle) -> io::Result<PathBuf> {
    let dest = dir.join(name);
    if dest.exists() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists", crate::quoted(&dest)),
        ));
    }
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempdir_in(dir)?;
    // Listed until renamed, so that an immediate exit (a second Ctrl-C) removes it.
    let _listed = crate::output::pending::Listed::new(tmp.path());
    let json =
        |v: &dyn erased::Ser| serde_json::to_vec_pretty(&erased::Wrap(v)).map_err(io::Error::other);
    std::fs::write(
        tmp.path().join("capture.json"),
        json(&(&bundle.sample, &bundle.breakdown, &bundle.trace_note))?,
    )?;
    let mut lines = Vec::new();
    for e in &bundle.events {
        lines.extend(serde_json::to_vec(e).map_err(io::Error::other)?);
        lines.push(b'\n');
    }
    std::fs::write(tmp.path().join("trace.jsonl"), lines)?;
    std::fs::write(tmp.path().join("context.json"), json(&bundle.context)?)?;
    std::fs::write(tmp.path().join("settings.json"), json(&bundle.settings)?)?;
    let kept = tmp.keep();
    std::fs::rename(&kept, &dest).inspect_err(|_| {
        let _ = std::fs::remove_dir_all(&kept);
    })?;
    Ok(dest)
}

/// Serialising through a trait object without a dependency.
mod erased {
    /// Anything serialisable to JSON.
    pub trait Ser {
        fn value(&self) -> serde_json::Result<serde_json::Value>;
    }
    impl<T: serde::Serialize> Ser for T {
        fn value(&self) -> serde_json::Result<serde_json::Value> {
            serde_json::to_value(self)
        }
    }
    /// A wrapper that serialises the inner value.
    pub struct Wrap<'a>(pub &'a dyn Ser);
    impl serde::Serialize for Wrap<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            self.0
                .value()
                .map_err(serde::ser::Error::custom)?
                .serialize(s)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickscope_explain::LateSample;

    #[test]
    fn a_bundle_appears_whole_and_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let b = Bundle {
            sample: LateSample {
                thread: 0,
                tid: 1,
                seq: 2,
                expiry: 10,
                woke: 20,
            },
            breakdown: None,
            events: Vec::new(),
            trace_note: Some("context mode".into()),
            context: None,
            settings: serde_json::json!({"a": 1}),
        };
        let p = write(dir.path(), "capture-0001", &b).unwrap();
        for f in [
            "capture.json",
            "trace.jsonl",
            "context.json",
            "settings.json",
        ] {
            assert!(p.join(f).is_file(), "{f}");
        }
        assert!(write(dir.path(), "capture-0001", &b).is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "no temporary directory left: {names:?}");
    }
}
