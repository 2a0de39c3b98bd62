//! The built-in scenarios, one per source document, embedded from `scenarios/*.toml`.

/// (name, TOML text) of every built-in scenario.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "hrtimers-2007",
        include_str!("../../../../scenarios/hrtimers-2007.toml"),
    ),
    (
        "ols-2006",
        include_str!("../../../../scenarios/ols-2006.toml"),
    ),
    (
        "rt-2013",
        include_str!("../../../../scenarios/rt-2013.toml"),
    ),
    (
        "periodic-task",
        include_str!("../../../../scenarios/periodic-task.toml"),
    ),
    (
        "clock-gettime-2010",
        include_str!("../../../../scenarios/clock-gettime-2010.toml"),
    ),
];

/// The text of the built-in scenario `name`.
pub fn find(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::format::Scenario;

    #[test]
    fn every_builtin_parses_and_is_named_as_listed() {
        for (name, text) in BUILTIN {
            let s = Scenario::parse(text, name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(&s.name, name);
        }
    }
}
