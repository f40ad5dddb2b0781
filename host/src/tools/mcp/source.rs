//! Which MCP servers to use, as a person names them: `--mcp NAME=COMMAND`, `--mcp NAME=URL`,
//! `--mcp-config FILE` in the `mcpServers` format agent apps share, and `--trust NAME=EFFECT`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::McpError;
use crate::permissions::Effect;

/// One MCP server to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// Its name: its tools are `NAME.TOOL`.
    pub name: String,
    /// How to reach it.
    pub endpoint: Endpoint,
    /// The effect every tool of it has, whatever its annotations say (`--trust`).
    pub trust: Option<Effect>,
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A program forge-host starts, speaking MCP on its stdin and stdout.
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the inherited environment.
        env: BTreeMap<String, String>,
        /// Its working directory (the current one by default).
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint (`http://127.0.0.1:PORT/mcp`).
    Url {
        /// Where.
        url: String,
        /// Headers sent with every request (a config file's `headers`: a bearer token, say).
        headers: Headers,
    },
}

/// HTTP headers from a config file, whose values may be secrets: `Debug` shows names only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Headers(pub BTreeMap<String, String>);

impl std::fmt::Debug for Headers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}

/// Longest server name, in bytes.
const MAX_NAME_BYTES: usize = 64;

/// Checks a server name: it becomes the first part of its tools' names, so it has no dot.
pub fn validate_name(name: &str) -> Result<(), McpError> {
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if valid {
        Ok(())
    } else {
        Err(McpError::Config(format!(
            "`{name}` is not a server name: use 1 to {MAX_NAME_BYTES} letters, digits, `_` or `-`"
        )))
    }
}

fn endpoint_of_url(name: &str, url: &str, headers: Headers) -> Result<Endpoint, McpError> {
    if url.starts_with("https://") {
        return Err(McpError::Config(format!(
            "server `{name}`: {url} is HTTPS; forge-host speaks plain HTTP to servers it is pointed at (run it on loopback, or through a local proxy)"
        )));
    }
    if !url.starts_with("http://") || url.len() <= "http://".len() {
        return Err(McpError::Config(format!(
            "server `{name}`: `{url}` is not an http:// URL"
        )));
    }
    for (header, value) in &headers.0 {
        let valid = reqwest::header::HeaderName::from_bytes(header.as_bytes()).is_ok()
            && reqwest::header::HeaderValue::from_str(value).is_ok();
        if !valid {
            return Err(McpError::Config(format!(
                "server `{name}`: header `{header}` is not a valid HTTP header name and value"
            )));
        }
    }
    Ok(Endpoint::Url {
        url: url.to_string(),
        headers,
    })
}

/// Parses `--mcp NAME=COMMAND` (split as a shell would) or `--mcp NAME=http://HOST:PORT/PATH`.
pub fn parse_flag(text: &str) -> Result<ServerSpec, McpError> {
    let Some((name, rest)) = text.split_once('=') else {
        return Err(McpError::Config(format!(
            "--mcp `{text}`: expected NAME=COMMAND or NAME=URL"
        )));
    };
    let name = name.trim();
    validate_name(name)?;
    let rest = rest.trim();
    let endpoint = if rest.starts_with("http://") || rest.starts_with("https://") {
        endpoint_of_url(name, rest, Headers::default())?
    } else {
        let words = shlex::split(rest).ok_or_else(|| {
            McpError::Config(format!(
                "--mcp {name}: cannot split `{rest}` into words (an unclosed quote?)"
            ))
        })?;
        let mut words = words.into_iter();
        let program = words
            .next()
            .ok_or_else(|| McpError::Config(format!("--mcp {name}: the command is empty")))?;
        Endpoint::Command {
            program,
            args: words.collect(),
            env: BTreeMap::new(),
            cwd: None,
        }
    };
    Ok(ServerSpec {
        name: name.to_string(),
        endpoint,
        trust: None,
    })
}

/// One entry of an `mcpServers` file; other keys agent apps put there are ignored.
#[derive(Deserialize)]
struct ConfigEntry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    disabled: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigFile {
    mcp_servers: BTreeMap<String, ConfigEntry>,
}

/// Largest config file read.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Reads `--mcp-config FILE`: `{"mcpServers": {NAME: {"command", "args", "env"} | {"url",
/// "headers"}}}`.
/// Entries marked `"disabled": true` are skipped; a relative `cwd` is relative to the file.
pub fn read_config(path: &Path) -> Result<Vec<ServerSpec>, McpError> {
    let failed = |why: String| McpError::Config(format!("--mcp-config {}: {why}", path.display()));
    let size = std::fs::metadata(path)
        .map_err(|e| failed(e.to_string()))?
        .len();
    if size > MAX_CONFIG_BYTES {
        return Err(failed(format!(
            "it is {size} bytes, over {MAX_CONFIG_BYTES}"
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| failed(e.to_string()))?;
    let file: ConfigFile = serde_json::from_str(&text).map_err(|e| {
        failed(format!(
            "{e} (expected {{\"mcpServers\": {{NAME: {{\"command\", \"args\", \"env\"}} | {{\"url\"}}}}}})"
        ))
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut specs = Vec::new();
    for (name, entry) in file.mcp_servers {
        if entry.disabled {
            continue;
        }
        validate_name(&name).map_err(|e| failed(e.to_string()))?;
        let endpoint = match (entry.command, entry.url) {
            (Some(program), None) => Endpoint::Command {
                program,
                args: entry.args,
                env: entry.env,
                cwd: entry.cwd.map(|cwd| base.join(cwd)),
            },
            (None, Some(url)) => endpoint_of_url(&name, &url, Headers(entry.headers))
                .map_err(|e| failed(e.to_string()))?,
            _ => {
                return Err(failed(format!(
                    "server `{name}` needs exactly one of \"command\" and \"url\""
                )));
            }
        };
        specs.push(ServerSpec {
            name,
            endpoint,
            trust: None,
        });
    }
    Ok(specs)
}

/// Parses `--trust NAME=read|write|external` (`process` and `internal` are accepted too).
pub fn parse_trust(text: &str) -> Result<(String, Effect), McpError> {
    let (name, effect) = text.split_once('=').ok_or_else(|| {
        McpError::Config(format!(
            "--trust `{text}`: expected NAME=read|write|external"
        ))
    })?;
    let effect = match effect.trim() {
        "read" => Effect::Read,
        "write" => Effect::Write,
        "external" => Effect::External,
        "process" => Effect::Process,
        "internal" => Effect::Internal,
        other => {
            return Err(McpError::Config(format!(
                "--trust {name}: `{other}` is not an effect (read, write, external, process or internal)"
            )));
        }
    };
    Ok((name.trim().to_string(), effect))
}

/// Every server named by `--mcp` flags and `--mcp-config` files, with `--trust` applied. A name
/// used twice, or a `--trust` naming no server, is an error.
pub fn collect(
    flags: &[String],
    configs: &[PathBuf],
    trust: &[String],
) -> Result<Vec<ServerSpec>, McpError> {
    let mut specs = Vec::new();
    for path in configs {
        specs.extend(read_config(path)?);
    }
    for flag in flags {
        specs.push(parse_flag(flag)?);
    }
    let mut seen = std::collections::BTreeSet::new();
    for spec in &specs {
        if !seen.insert(spec.name.as_str()) {
            return Err(McpError::Config(format!(
                "two MCP servers are called `{}`",
                spec.name
            )));
        }
    }
    for text in trust {
        let (name, effect) = parse_trust(text)?;
        let spec = specs
            .iter_mut()
            .find(|spec| spec.name == name)
            .ok_or_else(|| {
                McpError::Config(format!("--trust {name}: no MCP server is called `{name}`"))
            })?;
        spec.trust = Some(effect);
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_names_a_command_split_like_a_shell_or_a_url() {
        let spec = parse_flag("fs=npx -y '@scope/server x' ./data").expect("valid");
        assert_eq!(spec.name, "fs");
        assert_eq!(
            spec.endpoint,
            Endpoint::Command {
                program: "npx".into(),
                args: vec!["-y".into(), "@scope/server x".into(), "./data".into()],
                env: BTreeMap::new(),
                cwd: None,
            }
        );
        let spec = parse_flag("web=http://127.0.0.1:8080/mcp").expect("valid");
        assert_eq!(
            spec.endpoint,
            Endpoint::Url {
                url: "http://127.0.0.1:8080/mcp".into(),
                headers: Headers::default(),
            }
        );
        for bad in [
            "fs",
            "=cmd",
            "a.b=cmd",
            "fs=",
            "fs=echo 'open",
            "x=https://h/mcp",
        ] {
            assert!(parse_flag(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn a_config_file_in_the_mcp_servers_format_is_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("mcp.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "server"], "env": {"A": "1"}, "alwaysAllow": []},
                "web": {"url": "http://127.0.0.1:1/mcp"},
                "off": {"command": "nothing", "disabled": true}
            }}"#,
        )
        .expect("write");
        let specs = collect(&[], std::slice::from_ref(&path), &["web=read".into()]).expect("valid");
        let names: Vec<_> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["fs", "web"]);
        assert_eq!(specs[1].trust, Some(Effect::Read));
        let Endpoint::Command { env, .. } = &specs[0].endpoint else {
            panic!("fs is a command");
        };
        assert_eq!(env.get("A").map(String::as_str), Some("1"));

        assert!(collect(&["fs=other".into()], std::slice::from_ref(&path), &[]).is_err());
        assert!(collect(&[], std::slice::from_ref(&path), &["nope=read".into()]).is_err());
        assert!(collect(&[], &[path], &["fs=everything".into()]).is_err());
        std::fs::write(dir.path().join("bad.json"), r#"{"servers": {}}"#).expect("write");
        assert!(read_config(&dir.path().join("bad.json")).is_err());
    }
}
