//! A deterministic corpus of broken result files, made from good ones: truncations, byte
//! flips, numbers swapped for extreme or negative ones, deleted keys and values of the wrong
//! type. Seeded, so every run tests the same files. Shared by the report crate's
//! library-level test and the CLI's end-to-end one.

#![allow(dead_code)]

use serde_json::Value;

/// A small deterministic generator (xorshift64*, S. Vigna, "An experimental exploration of
/// Marsaglia's xorshift generators, scrambled", 2016).
pub struct Rng(u64);

impl Rng {
    /// A generator with a fixed seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    /// The next number below `n` (> 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize
    }
}

/// Numbers that break assumptions: negative, zero, huge, beyond u64 and i64, fractions.
const NUMBERS: &[&str] = &[
    "-1",
    "0",
    "1e308",
    "-1e308",
    "18446744073709551615",
    "9223372036854775807",
    "-9223372036854775808",
    "4611686018427387904",
    "0.5",
    "3600000000001",
];

/// Values of the wrong type.
const WRONG: &[&str] = &["\"x\"", "[]", "{}", "null", "true", "[1,2]", "{\"a\":1}"];

/// Every JSON value in `v`, as paths of keys and indices.
fn paths(v: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                prefix.push(k.clone());
                out.push(prefix.clone());
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate().take(8) {
                prefix.push(i.to_string());
                out.push(prefix.clone());
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(v: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, k| match v {
        Value::Object(m) => m.get_mut(k),
        Value::Array(a) => a.get_mut(k.parse::<usize>().ok()?),
        _ => None,
    })
}

/// `n` mutants of `text` (the same for the same `seed`), each with what was done to it.
pub fn mutants(text: &str, seed: u64, n: usize) -> Vec<(String, String)> {
    let mut rng = Rng::new(seed);
    let json: Value = serde_json::from_str(text).expect("fixtures are valid JSON");
    let mut all = Vec::new();
    paths(&json, &mut Vec::new(), &mut all);
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let kind = k % 6;
        let mutant = match kind {
            0 => {
                let cut = rng.below(text.len().max(1));
                let cut = (0..=cut)
                    .rev()
                    .find(|&c| text.is_char_boundary(c))
                    .unwrap_or(0);
                (format!("truncated at {cut}"), text[..cut].to_string())
            }
            1 => {
                let mut bytes = text.as_bytes().to_vec();
                let i = rng.below(bytes.len().max(1));
                bytes[i] ^= 1 << rng.below(7);
                let t = String::from_utf8_lossy(&bytes).into_owned();
                (format!("byte {i} flipped"), t)
            }
            2..=4 => {
                let mut v = json.clone();
                let path = &all[rng.below(all.len())];
                let what = match kind {
                    2 => NUMBERS[rng.below(NUMBERS.len())],
                    3 => WRONG[rng.below(WRONG.len())],
                    _ => "",
                };
                if kind == 4 {
                    let (parent, key) = path.split_at(path.len() - 1);
                    if let Some(Value::Object(m)) = at(&mut v, parent) {
                        m.remove(&key[0]);
                    }
                } else if let Some(slot) = at(&mut v, path) {
                    *slot = serde_json::from_str(what).unwrap();
                }
                let how = if kind == 4 { "deleted" } else { what };
                (format!("{} = {how}", path.join(".")), v.to_string())
            }
            _ => {
                // Two numbers swapped (min and max, percentiles, counts).
                let mut v = json.clone();
                let numbers: Vec<&Vec<String>> = all
                    .iter()
                    .filter(|p| {
                        json.pointer(&format!("/{}", p.join("/")))
                            .is_some_and(Value::is_number)
                    })
                    .collect();
                if numbers.len() >= 2 {
                    let (a, b) = (
                        numbers[rng.below(numbers.len())],
                        numbers[rng.below(numbers.len())],
                    );
                    let va = at(&mut v.clone(), a).cloned();
                    let vb = at(&mut v.clone(), b).cloned();
                    if let (Some(va), Some(vb)) = (va, vb) {
                        *at(&mut v, a).unwrap() = vb;
                        *at(&mut v, b).unwrap() = va;
                    }
                    (
                        format!("{} <-> {}", a.join("."), b.join(".")),
                        v.to_string(),
                    )
                } else {
                    ("unchanged".into(), text.to_string())
                }
            }
        };
        out.push(mutant);
    }
    out
}
