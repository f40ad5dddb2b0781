//! The media type of a published file, from its name: what reports list, and what an MCP client
//! is told a resource holds. One table, by extension; anything else is
//! `application/octet-stream`.

/// Extensions (lower case, without the dot) and their media types.
const TYPES: &[(&str, &str)] = &[
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("svg", "image/svg+xml"),
    ("pdf", "application/pdf"),
    ("html", "text/html"),
    ("htm", "text/html"),
    ("css", "text/css"),
    ("js", "text/javascript"),
    ("mjs", "text/javascript"),
    ("json", "application/json"),
    ("geojson", "application/geo+json"),
    ("csv", "text/csv"),
    ("tsv", "text/tab-separated-values"),
    ("txt", "text/plain"),
    ("log", "text/plain"),
    ("md", "text/markdown"),
    ("xml", "application/xml"),
    ("yaml", "application/yaml"),
    ("yml", "application/yaml"),
    ("parquet", "application/vnd.apache.parquet"),
    (
        "xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    ("zip", "application/zip"),
    ("gz", "application/gzip"),
    ("wasm", "application/wasm"),
];

/// What a file whose type is not known is served as.
pub const UNKNOWN: &str = "application/octet-stream";

/// The media type of the file at `path` (a `/`-separated name), by its extension.
pub fn mime_type(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some((_, extension)) = name.rsplit_once('.') else {
        return UNKNOWN;
    };
    let extension = extension.to_ascii_lowercase();
    TYPES
        .iter()
        .find(|(known, _)| *known == extension)
        .map_or(UNKNOWN, |(_, mime)| mime)
}

/// Whether a client may be shown a file of type `mime` as an image in a tool result (the
/// types MCP's image content is meant for).
pub fn is_inline_image(mime: &str) -> bool {
    matches!(mime, "image/png" | "image/jpeg" | "image/gif")
}

/// Whether a file of type `mime` is text, to be served as text when it is UTF-8.
pub fn is_text(mime: &str) -> bool {
    mime.starts_with("text/")
        || matches!(
            mime,
            "application/json"
                | "application/geo+json"
                | "application/xml"
                | "application/yaml"
                | "image/svg+xml"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_come_from_the_last_extension_of_the_name_in_any_case() {
        assert_eq!(mime_type("charts/sales.PNG"), "image/png");
        assert_eq!(mime_type("report.tar.gz"), "application/gzip");
        assert_eq!(mime_type("dash/index.html"), "text/html");
        assert_eq!(mime_type("README"), UNKNOWN);
        assert_eq!(mime_type("dir.d/noext"), UNKNOWN);
        assert!(is_inline_image(mime_type("a.jpeg")));
        assert!(!is_inline_image(mime_type("a.svg")));
        assert!(is_text(mime_type("a.svg")) && is_text(mime_type("a.csv")));
        assert!(!is_text(mime_type("a.png")));
    }
}
