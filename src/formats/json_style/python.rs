//! A reader of Python literals (`str(dict)`: what [`JsonStyle::Python`]
//! writes), for JSON embedded as Python text (Hermes v1 tool calls such as
//! `{'arguments': {...}, 'name': 'f'}`).
//!
//! [`JsonStyle::Python`]: super::JsonStyle::Python

use serde_json::{Map, Value};

/// How deep literals may nest before the text is refused.
const MAX_DEPTH: usize = 128;

/// Parses a Python literal (dicts, lists, tuples, strings, numbers, `True`,
/// `False`, `None`) as JSON. `None` if it is not one.
pub(super) fn parse(text: &str) -> Option<Value> {
    let chars: Vec<char> = text.chars().collect();
    let mut p = PyParser { s: &chars, i: 0 };
    let v = p.value(0)?;
    p.ws();
    (p.i == chars.len()).then_some(v)
}

struct PyParser<'a> {
    s: &'a [char],
    i: usize,
}

impl PyParser<'_> {
    fn ws(&mut self) {
        while self.s.get(self.i).is_some_and(|c| c.is_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        match *self.s.get(self.i)? {
            '{' => {
                self.i += 1;
                let mut map = Map::new();
                if self.eat('}') {
                    return Some(Value::Object(map));
                }
                loop {
                    let Value::String(k) = self.value(depth + 1)? else { return None };
                    if !self.eat(':') {
                        return None;
                    }
                    let v = self.value(depth + 1)?;
                    map.insert(k, v);
                    if self.eat('}') {
                        return Some(Value::Object(map));
                    }
                    if !self.eat(',') {
                        return None;
                    }
                }
            }
            c @ ('[' | '(') => {
                let close = if c == '[' { ']' } else { ')' };
                self.i += 1;
                let mut items = Vec::new();
                if self.eat(close) {
                    return Some(Value::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    if self.eat(close) {
                        return Some(Value::Array(items));
                    }
                    if !self.eat(',') {
                        return None;
                    }
                }
            }
            q @ ('\'' | '"') => self.string(q),
            _ => self.atom(),
        }
    }

    fn string(&mut self, q: char) -> Option<Value> {
        self.i += 1;
        let mut out = String::new();
        loop {
            let c = *self.s.get(self.i)?;
            self.i += 1;
            match c {
                c if c == q => return Some(Value::String(out)),
                '\\' => {
                    let e = *self.s.get(self.i)?;
                    self.i += 1;
                    match e {
                        'n' => out.push('\n'),
                        'r' => out.push('\r'),
                        't' => out.push('\t'),
                        '0' => out.push('\0'),
                        'x' => out.push(self.hex(2)?),
                        'u' => out.push(self.hex(4)?),
                        'U' => out.push(self.hex(8)?),
                        '\\' | '\'' | '"' => out.push(e),
                        other => {
                            out.push('\\');
                            out.push(other);
                        }
                    }
                }
                c => out.push(c),
            }
        }
    }

    fn hex(&mut self, n: usize) -> Option<char> {
        let digits: String = self.s.get(self.i..self.i + n)?.iter().collect();
        self.i += n;
        char::from_u32(u32::from_str_radix(&digits, 16).ok()?)
    }

    fn atom(&mut self) -> Option<Value> {
        let start = self.i;
        while self
            .s
            .get(self.i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.' | '_'))
        {
            self.i += 1;
        }
        let word: String = self.s[start..self.i].iter().collect();
        match word.as_str() {
            "True" => Some(Value::Bool(true)),
            "False" => Some(Value::Bool(false)),
            "None" => Some(Value::Null),
            w => serde_json::from_str::<serde_json::Number>(w).ok().map(Value::Number),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_python_literals_and_refuses_other_text() {
        assert_eq!(
            parse("{'a': [1, 'b\\'c', None, True], \"d\": (2, 3.5)}"),
            Some(json!({"a": [1, "b'c", null, true], "d": [2, 3.5]}))
        );
        assert_eq!(parse("{'a': }"), None);
        assert_eq!(parse("{'a': 1} extra"), None);
        assert_eq!(parse(&format!("{}1{}", "[".repeat(200), "]".repeat(200))), None);
    }
}
