//! Arguments and paths that are not UTF-8 (Linux file names are bytes): they are used as
//! given, and the result document records the command line losslessly — UTF-8 arguments as
//! they are, the others escaped and listed in `command_line_escaped`
//! (docs/result-schema.md).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::common::tickscope;

fn os(bytes: &[u8]) -> &OsStr {
    OsStr::from_bytes(bytes)
}

/// Every argument of the recorded command line, back as bytes.
fn recorded(doc: &serde_json::Value) -> Vec<Vec<u8>> {
    let args = doc["command_line"].as_array().expect("command_line");
    let escaped: Vec<usize> = doc["command_line_escaped"]
        .as_array()
        .map(|v| v.iter().map(|i| i.as_u64().unwrap() as usize).collect())
        .unwrap_or_default();
    args.iter()
        .enumerate()
        .map(|(i, a)| {
            let text = a.as_str().unwrap();
            match escaped.contains(&i) {
                true => tickscope_report::command_line::unescape(text).expect("valid escapes"),
                false => text.as_bytes().to_vec(),
            }
        })
        .collect()
}

fn read_doc(path: &Path) -> serde_json::Value {
    crate::common::result_json(&std::fs::read_to_string(path).unwrap())
}

#[test]
fn a_non_utf8_output_name_is_written_and_recorded_losslessly() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join(os(b"\xff.json"));
    let mut csv_spec = b"csv=".to_vec();
    csv_spec.extend_from_slice(dir.path().as_os_str().as_bytes());
    csv_spec.extend_from_slice(b"/\xfe\\x41.csv");
    // A UTF-8 directory whose name looks like an escape: recorded as it is.
    let label_dir = dir.path().join(["\\", "xFF"].concat()); // the 4 characters \xFF
    std::fs::create_dir(&label_dir).unwrap();
    let samples = label_dir.join("s.csv");
    let out = tickscope()
        .args(["run", "--debug-mock", "20us,30us", "-D", "1s", "-q"])
        .arg("--json")
        .arg(&json)
        .arg("--export")
        .arg(os(&csv_spec))
        .arg("--samples")
        .arg(&samples)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = dir.path().join(os(b"\xfe\\x41.csv"));
    assert!(csv.is_file(), "the CSV has the byte name asked for");
    assert!(samples.is_file());
    let doc = read_doc(&json);
    let args = recorded(&doc);
    let wanted: Vec<&[u8]> = vec![
        b"--json",
        json.as_os_str().as_bytes(),
        b"--export",
        &csv_spec,
        b"--samples",
        samples.as_os_str().as_bytes(),
    ];
    assert_eq!(&args[args.len() - 6..], &wanted[..]);
    // Only the two arguments that are not UTF-8 are escaped; the one with "\xFF" in it
    // (a UTF-8 directory name) is recorded as it is.
    let n = args.len();
    assert_eq!(
        doc["command_line_escaped"],
        serde_json::json!([n - 5, n - 3])
    );
    assert_eq!(
        doc["command_line"][n - 1].as_str().unwrap(),
        samples.to_str().unwrap()
    );
}

#[test]
fn a_scenario_file_and_result_with_non_utf8_names() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(os(b"s\xff.toml"));
    std::fs::write(
        &file,
        r#"name = "bytes"
about = "a mock step"
[source]
title = "t"
author = "a"
year = 2026
[[steps]]
name = "mock"
args = ["--debug-mock", "20us,30us", "-D", "1s", "-q"]
[table]
title = "t"
rows = [{label = "max", metric = "latency.max"}]
columns = ["mock"]
"#,
    )
    .unwrap();
    let json = dir.path().join(os(b"r\xfe.json"));
    let out = tickscope()
        .args(["scenario", "run"])
        .arg(&file)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let from = doc["from"].as_str().unwrap();
    assert_eq!(
        tickscope_report::command_line::unescape(from).unwrap(),
        file.as_os_str().as_bytes()
    );
    let step = &doc["steps"][0]["run"];
    let args = recorded(step);
    assert_eq!(args[args.len() - 1], json.as_os_str().as_bytes());
    assert_eq!(args[args.len() - 3], file.as_os_str().as_bytes());
}
