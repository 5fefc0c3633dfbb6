//! `--policy FILE`: a [`PolicySpec`] read from TOML or JSON (docs/policies.md
//! gives the schema). The format is the file's extension (`.json`, else TOML);
//! an error names the file and the key. The file is read by the caller
//! (`cli/config`): the policy does no I/O.

use super::PolicySpec;
use std::path::Path;

/// The name a policy built by hand with an owned name reports under; a
/// loaded one keeps its own ([`parse`]).
pub const UNNAMED: &str = "custom";

/// Parses `text`, the content of `path`, as a policy spec and checks it. Its
/// name is kept for the rest of the run (leaked once per file read: report
/// rows name policies as `&'static str`).
pub fn parse(path: &Path, text: &str) -> Result<PolicySpec, String> {
    let shown = path.display();
    let json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let spec: PolicySpec = if json {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let (line, col) = (e.inner().line(), e.inner().column());
            format!("{shown}:{line}:{col}: key `{}`: {}", e.path(), e.inner())
        })?
    } else {
        let de = toml::Deserializer::parse(text).map_err(|e| format!("{shown}: {e}"))?;
        serde_path_to_error::deserialize(de).map_err(|e| {
            let line = e
                .inner()
                .span()
                .map(|s| format!(":{}", text[..s.start.min(text.len())].lines().count().max(1)))
                .unwrap_or_default();
            format!("{shown}{line}: key `{}`: {}", e.path(), e.inner().message())
        })?
    };
    spec.check().map_err(|e| format!("{shown}: key {e}"))?;
    let mut spec = spec;
    if let std::borrow::Cow::Owned(name) = std::mem::take(&mut spec.name) {
        spec.name = std::borrow::Cow::Borrowed(Box::leak(name.into_boxed_str()));
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::spec::builtin;

    #[test]
    fn every_built_in_round_trips_through_toml_and_json() {
        for s in builtin::BUILT_IN {
            let json = serde_json::to_string_pretty(s).unwrap();
            assert_eq!(&parse(Path::new("p.json"), &json).unwrap(), s, "{}", s.name);
            let toml = toml::to_string(s).unwrap();
            assert_eq!(&parse(Path::new("p.toml"), &toml).unwrap(), s, "{}\n{toml}", s.name);
        }
    }

    #[test]
    fn a_small_toml_file_reads() {
        let text = r#"
name = "mine"
trigger = { fraction = 0.8 }
summary = { ours = { headings = "codex", max_tokens = 4000 } }
[protect]
first = 2
last = { messages = 10 }
[tool_results.masked]
keep_newest = 4
placeholder = "[gone]"
exclude_tools = ["Edit"]
"#;
        let s = parse(Path::new("mine.toml"), text).unwrap();
        assert_eq!(s.name, "mine");
        assert_eq!(s.trigger, crate::policy::spec::Trigger::Fraction(0.8));
        assert_eq!(s.threshold(100_000, None), 80_000);
        assert_eq!(s.protect.first, 2);
        assert_eq!(s.measure, crate::policy::spec::Measure::Prompt, "the default");
        let codex_like = "name = \"c\"\ntrigger = { fraction = 0.9 }\nmeasure = \"last_total\"\n";
        let c = parse(Path::new("c.toml"), codex_like).unwrap();
        assert_eq!(c.measure, crate::policy::spec::Measure::LastTotal);
        let crate::policy::spec::ToolResults::Masked(m) = &s.tool_results else { panic!() };
        assert_eq!(
            (m.keep_newest, m.placeholder.as_ref(), m.exclude_tools.len()),
            (4, "[gone]", 1)
        );
    }

    #[test]
    fn errors_name_the_file_and_the_key() {
        let bad_key =
            "name = \"x\"\ntrigger = \"every_request\"\n[protect]\nfirst = 1\nlastt = 3\n";
        let e = parse(Path::new("p.toml"), bad_key).unwrap_err();
        assert!(e.starts_with("p.toml"), "{e}");
        assert!(e.contains("protect") && e.contains("lastt"), "{e}");
        let bad_value = r#"{"name": "x", "trigger": {"fraction": "high"}}"#;
        let e = parse(Path::new("p.json"), bad_value).unwrap_err();
        assert!(e.starts_with("p.json:1:"), "{e}");
        assert!(e.contains("key `trigger.fraction`"), "{e}");
        let out_of_range = "name = \"x\"\ntrigger = { fraction = 1.5 }\n";
        let e = parse(Path::new("p.toml"), out_of_range).unwrap_err();
        assert!(e.contains("trigger.fraction") && e.contains("1.5"), "{e}");
        let bad_measure = "name = \"x\"\ntrigger = \"never\"\nmeasure = \"total\"\n";
        let e = parse(Path::new("p.toml"), bad_measure).unwrap_err();
        assert!(e.starts_with("p.toml:3") && e.contains("key `measure`"), "{e}");
        let missing = "name = \"x\"\n";
        let e = parse(Path::new("p.toml"), missing).unwrap_err();
        assert!(e.contains("trigger"), "{e}");
    }
}
