//! The two text formats of a Kafka client configuration: a Java `.properties` file
//! ([`parse_properties`]) and the JAAS configuration of `sasl.jaas.config` ([`parse_jaas`]).
//!
//! ```
//! use kstreams_assignor::client::net::properties::{parse_jaas, parse_properties};
//!
//! let props = parse_properties("# a comment\nsecurity.protocol = SASL_SSL\nsasl.jaas.config=a.B required \\\n  user=\"x\";\n").unwrap();
//! assert_eq!(props[0], ("security.protocol".to_owned(), "SASL_SSL".to_owned(), 2));
//! let jaas = parse_jaas(&props[1].1).unwrap();
//! assert_eq!((jaas.module.as_str(), jaas.flag.as_str()), ("a.B", "required"));
//! assert_eq!(jaas.options, [("user".to_owned(), "x".to_owned())]);
//! assert!(parse_jaas("a.B required user=\"x\"").is_err()); // no `;`
//! ```

/// Why a properties file or a JAAS configuration does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SyntaxError {
    /// A `\u` escape without four hex digits.
    #[error("line {line}: `\\u` must be followed by four hex digits")]
    Unicode {
        /// The line (1-based).
        line: usize,
    },
    /// The JAAS configuration is not `Module flag key=value ...;`.
    #[error("sasl.jaas.config: {0}")]
    Jaas(String),
}

/// The `key=value` pairs of a Java properties file, in order, each with the line it starts on:
/// `#` and `!` comments, `=`, `:` or white space between key and value, a `\` at the end of a
/// line continues it, and the escapes `\t`, `\n`, `\r`, `\f`, `\uXXXX` and `\` before any other
/// character (that character).
pub fn parse_properties(text: &str) -> Result<Vec<(String, String, usize)>, SyntaxError> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((index, line)) = lines.next() {
        let start = index + 1;
        let mut logical = line.trim_start().to_owned();
        if logical.is_empty() || logical.starts_with('#') || logical.starts_with('!') {
            continue;
        }
        // A line that ends in an odd number of backslashes goes on with the next one.
        while logical.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1 {
            logical.pop();
            match lines.next() {
                Some((_, next)) => logical.push_str(next.trim_start()),
                None => break,
            }
        }
        let (key, value) = split_key(&logical);
        out.push((unescape(key, start)?, unescape(value, start)?, start));
    }
    Ok(out)
}

/// The key (up to the first unescaped `=`, `:` or white space) and the raw value.
fn split_key(line: &str) -> (&str, &str) {
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '=' || c == ':' || c.is_whitespace() {
            let rest = line[i..].trim_start();
            let rest = if c.is_whitespace() { rest.strip_prefix(['=', ':']).unwrap_or(rest) } else { &rest[1..] };
            return (&line[..i], rest.trim_start());
        }
    }
    (line, "")
}

fn unescape(text: &str, line: usize) -> Result<String, SyntaxError> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = (hex.len() == 4).then(|| u32::from_str_radix(&hex, 16).ok()).flatten().and_then(char::from_u32);
                out.push(code.ok_or(SyntaxError::Unicode { line })?);
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}

/// One JAAS login module entry: `org.apache.kafka.common.security.plain.PlainLoginModule
/// required username="alice" password="alice-secret";`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JaasEntry {
    /// The login module's class name.
    pub module: String,
    /// The control flag (`required`, `requisite`, `sufficient` or `optional`).
    pub flag: String,
    /// The options, in order; quoted values have their `\` escapes removed.
    pub options: Vec<(String, String)>,
}

/// Parses a `sasl.jaas.config` value: one login module, its control flag, `key=value` options
/// (values quoted with `"` and `\` escapes, or bare words) and a closing `;`. Kafka accepts one
/// module in a client's `sasl.jaas.config`, so a second one is refused.
pub fn parse_jaas(text: &str) -> Result<JaasEntry, SyntaxError> {
    let err = |m: &str| SyntaxError::Jaas(m.to_owned());
    let mut rest = text.trim();
    let word = |rest: &mut &str| -> String {
        let end = rest.find(|c: char| c.is_whitespace() || c == '=' || c == ';' || c == '"').unwrap_or(rest.len());
        let w = rest[..end].to_owned();
        *rest = rest[end..].trim_start();
        w
    };
    let module = word(&mut rest);
    if module.is_empty() {
        return Err(err("expected a login module class name"));
    }
    let flag = word(&mut rest);
    if !["required", "requisite", "sufficient", "optional"].contains(&flag.as_str()) {
        return Err(SyntaxError::Jaas(format!("expected a control flag (required, requisite, sufficient, optional) after {module}, found `{flag}`")));
    }
    let mut options = Vec::new();
    loop {
        if let Some(after) = rest.strip_prefix(';') {
            if !after.trim().is_empty() {
                return Err(err("one login module only: text after the `;`"));
            }
            return Ok(JaasEntry { module, flag, options });
        }
        if rest.is_empty() {
            return Err(err("the entry must end with `;`"));
        }
        let key = word(&mut rest);
        if key.is_empty() {
            return Err(SyntaxError::Jaas(format!("expected an option name at `{}`", rest.chars().take(20).collect::<String>())));
        }
        rest = rest.strip_prefix('=').ok_or_else(|| SyntaxError::Jaas(format!("option `{key}` has no `=`")))?.trim_start();
        let value = if let Some(quoted) = rest.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let end = loop {
                match chars.next() {
                    Some((i, '"')) => break i,
                    Some((_, '\\')) => match chars.next() {
                        Some((_, c)) => value.push(c),
                        None => return Err(SyntaxError::Jaas(format!("option `{key}`: the quoted value does not end"))),
                    },
                    Some((_, c)) => value.push(c),
                    None => return Err(SyntaxError::Jaas(format!("option `{key}`: the quoted value does not end"))),
                }
            };
            rest = quoted[end + 1..].trim_start();
            value
        } else {
            word(&mut rest)
        };
        options.push((key, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_java_properties_forms() {
        let text = "a=1\nb : 2\nc 3\n  ! comment\nd=\\u0041\\tx\ne=one \\\n   two\nf=\\\\\ng\n";
        let got: Vec<(String, String)> = parse_properties(text).unwrap().into_iter().map(|(k, v, _)| (k, v)).collect();
        let want = [("a", "1"), ("b", "2"), ("c", "3"), ("d", "A\tx"), ("e", "one two"), ("f", "\\"), ("g", "")];
        assert_eq!(got, want.map(|(k, v)| (k.to_owned(), v.to_owned())));
        assert_eq!(parse_properties("x=\\u00g1"), Err(SyntaxError::Unicode { line: 1 }));
    }

    #[test]
    fn jaas_values_keep_escaped_quotes() {
        let e = parse_jaas(r#"org.apache.kafka.common.security.scram.ScramLoginModule required username="al\"ice" password="p;w=d\\" tokenauth=true ;"#).unwrap();
        assert_eq!(e.options, [("username", "al\"ice"), ("password", "p;w=d\\"), ("tokenauth", "true")].map(|(k, v)| (k.to_owned(), v.to_owned())));
    }

    #[test]
    fn refuses_broken_jaas() {
        for bad in ["", "m", "m maybe;", "m required user;", "m required user=\"x;", "m required user=x", "m required;n required;"] {
            assert!(parse_jaas(bad).is_err(), "{bad}");
        }
    }
}
