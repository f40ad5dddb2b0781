//! A run's published files as MCP resources: each is `forge-host://runs/<run-id>/<path>`, listed
//! in the run's result as a `resource_link` (a folder with an `index.html` as one link to that
//! page), an image under `--max-inline-image` shown inline too, and read with
//! `resources/read`. What a URI can name is what [`files::published::read`] allows: a file the
//! run's journal record lists, in its folder of this data directory.

use base64::Engine as _;
use rmcp::model::{ContentBlock, ReadResourceResult, Resource, ResourceContents};

use crate::datadir::DataDir;
use crate::files::{self, mime, published};
use crate::journal::{Journal, PublishedFile};
use crate::kernel::RunReport;

/// What every resource URI of this server begins with.
pub const URI_PREFIX: &str = "forge-host://runs/";

/// Characters a path segment keeps as they are in a URI (RFC 3986's unreserved).
fn unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

/// The URI of `path` (`/`-separated) of run `id`.
pub fn uri(id: &str, path: &str) -> String {
    let mut text = format!("{URI_PREFIX}{id}");
    for segment in path.split('/') {
        text.push('/');
        for byte in segment.bytes() {
            if unreserved(byte) {
                text.push(byte as char);
            } else {
                text.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    text
}

/// The run id and path a URI of this server names; `None` for anything else.
pub fn parse(uri: &str) -> Option<(String, String)> {
    let rest = uri.strip_prefix(URI_PREFIX)?;
    let (id, encoded) = rest.split_once('/')?;
    let mut bytes = Vec::with_capacity(encoded.len());
    let mut at = encoded.bytes();
    while let Some(byte) = at.next() {
        if byte == b'%' {
            let high = (at.next()? as char).to_digit(16)?;
            let low = (at.next()? as char).to_digit(16)?;
            bytes.push(u8::try_from(high * 16 + low).ok()?);
        } else {
            bytes.push(byte);
        }
    }
    let path = String::from_utf8(bytes).ok()?;
    files::check_output_path(&path).ok()?;
    Some((id.to_string(), path))
}

/// The files a client is pointed at: each published file, except that a folder holding an
/// `index.html` (the top folder included) is that one page, whose other files it links to.
fn linked(outputs: &[PublishedFile]) -> Vec<&PublishedFile> {
    let pages: Vec<&str> = outputs
        .iter()
        .filter_map(|f| match f.path.rsplit_once('/') {
            Some((folder, "index.html")) => Some(folder),
            None if f.path == "index.html" => Some(""),
            _ => None,
        })
        .collect();
    outputs
        .iter()
        .filter(|file| {
            !pages.iter().any(|folder| {
                let inside = folder.is_empty() || file.path.starts_with(&format!("{folder}/"));
                let page = if folder.is_empty() {
                    "index.html".to_string()
                } else {
                    format!("{folder}/index.html")
                };
                inside && file.path != page
            })
        })
        .collect()
}

/// The content items of `report`'s published files, when it published them into its folder
/// here: a `resource_link` for each linked file, and before it the image itself when it is a
/// PNG, JPEG or GIF of at most `max_inline_image` bytes.
pub fn content(
    data: &DataDir,
    journal: &Journal,
    report: &RunReport,
    max_inline_image: u64,
) -> Vec<ContentBlock> {
    let folder = published::run_folder(data, &report.id);
    if report.out_dir.as_deref().map(std::path::Path::new) != Some(folder.as_path()) {
        return Vec::new();
    }
    let mut items = Vec::new();
    for file in linked(&report.outputs) {
        let mime_type = mime_of(file);
        if mime::is_inline_image(&mime_type)
            && file.size <= max_inline_image
            && let Ok((_, bytes)) = published::read(data, journal, &report.id, &file.path)
        {
            let data = base64::engine::general_purpose::STANDARD.encode(bytes);
            items.push(ContentBlock::image(data, mime_type));
        }
        items.push(ContentBlock::resource_link(link(&report.id, file)));
    }
    items
}

/// The resources of runs `ids` (the server's recent ones), newest last.
pub fn listed(data: &DataDir, journal: &Journal, ids: &[String]) -> Vec<Resource> {
    let mut listed = Vec::new();
    for id in ids {
        let Ok(record) = journal.get(id) else {
            continue;
        };
        let folder = published::run_folder(data, id);
        if record.out_dir.as_deref().map(std::path::Path::new) != Some(folder.as_path()) {
            continue;
        }
        listed.extend(
            linked(&record.outputs)
                .into_iter()
                .map(|file| link(id, file)),
        );
    }
    listed
}

/// The resource of `file` of run `id`.
fn link(id: &str, file: &PublishedFile) -> Resource {
    let name = file.path.rsplit('/').next().unwrap_or(&file.path);
    let mut link = Resource::new(uri(id, &file.path), name.to_string())
        .with_mime_type(mime_of(file))
        .with_size(file.size);
    if let Some(title) = &file.title {
        link = link.with_title(title.clone());
    }
    link
}

/// A published file's media type, from its record or (for a record made before it was kept)
/// its name.
fn mime_of(file: &PublishedFile) -> String {
    file.mime_type
        .clone()
        .unwrap_or_else(|| mime::mime_type(&file.path).to_string())
}

/// `resources/read` of `uri`.
pub fn read(
    data: &DataDir,
    journal: &Journal,
    uri: &str,
) -> Result<ReadResourceResult, rmcp::ErrorData> {
    let Some((id, path)) = parse(uri) else {
        return Err(rmcp::ErrorData::resource_not_found(
            format!("`{uri}` is not a resource of this server (they are {URI_PREFIX}RUN/PATH)"),
            None,
        ));
    };
    let (file, bytes) = published::read(data, journal, &id, &path).map_err(|error| {
        let message = crate::error::chain_text(&error);
        match error.code() {
            crate::error::ErrorCode::InvalidInput => {
                rmcp::ErrorData::resource_not_found(message, None)
            }
            _ => rmcp::ErrorData::internal_error(message, None),
        }
    })?;
    let mime_type = mime_of(&file);
    let contents = match String::from_utf8(bytes) {
        Ok(text) if mime::is_text(&mime_type) => ResourceContents::text(text, uri),
        Ok(text) => ResourceContents::blob(
            base64::engine::general_purpose::STANDARD.encode(text.into_bytes()),
            uri,
        ),
        Err(not_text) => ResourceContents::blob(
            base64::engine::general_purpose::STANDARD.encode(not_text.into_bytes()),
            uri,
        ),
    };
    Ok(ReadResourceResult::new(vec![
        contents.with_mime_type(mime_type),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str) -> PublishedFile {
        PublishedFile {
            path: path.into(),
            size: 1,
            sha256: String::new(),
            title: None,
            mime_type: None,
        }
    }

    #[test]
    fn a_uri_names_its_run_and_path_and_nothing_outside_them() {
        let text = uri("0a1b", "charts/q 1 (é).png");
        assert_eq!(
            text,
            "forge-host://runs/0a1b/charts/q%201%20%28%C3%A9%29.png"
        );
        assert_eq!(
            parse(&text),
            Some(("0a1b".into(), "charts/q 1 (é).png".into()))
        );
        for bad in [
            "forge-host://runs/0a1b/../x",
            "forge-host://runs/0a1b/%2E%2E/x",
            "forge-host://runs/0a1b/a//b",
            "forge-host://runs/0a1b/a%5Cb",
            "forge-host://runs/0a1b/%ZZ",
            "forge-host://runs/0a1b",
            "file:///etc/passwd",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_folder_with_an_index_page_is_one_link() {
        let outputs = [
            file("chart.png"),
            file("dash/index.html"),
            file("dash/app.js"),
            file("dash/data/points.json"),
            file("dashboard.csv"),
        ];
        let paths: Vec<&str> = linked(&outputs).iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["chart.png", "dash/index.html", "dashboard.csv"]);
        let whole = [file("index.html"), file("style.css"), file("img/a.png")];
        let paths: Vec<&str> = linked(&whole).iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["index.html"]);
    }
}
