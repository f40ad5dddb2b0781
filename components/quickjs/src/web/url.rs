//! The WHATWG URL parser for `URL` (the `url` crate, whose `quirks` module is the URL
//! Standard's API: each getter and setter as the spec defines it).

use rquickjs::{Ctx, Function, Object, Result, function::Opt};
use url::{Url, quirks};

/// A parsed URL's parts, in the order `url.js` reads them.
type Parts = [String; 11];

fn parts(url: &Url) -> Parts {
    [
        quirks::href(url).to_string(),
        origin(url),
        quirks::protocol(url).to_string(),
        quirks::username(url).to_string(),
        quirks::password(url).to_string(),
        quirks::host(url).to_string(),
        quirks::hostname(url).to_string(),
        quirks::port(url).to_string(),
        quirks::pathname(url).to_string(),
        quirks::search(url).to_string(),
        quirks::hash(url).to_string(),
    ]
}

/// The URL Standard's origin: a `blob:` URL has its inner URL's only when that is http(s)
/// (the `url` crate gives it any inner URL's).
fn origin(url: &Url) -> String {
    if url.scheme() == "blob"
        && Url::parse(url.path()).is_ok_and(|inner| !matches!(inner.scheme(), "http" | "https"))
    {
        return "null".into();
    }
    quirks::origin(url)
}

/// `input` parsed against `base`, or undefined when either fails to parse.
fn parse(input: String, base: Opt<String>) -> Option<Vec<String>> {
    let url = match base.0 {
        Some(base) => Url::parse(&base).ok()?.join(&input).ok()?,
        None => Url::parse(&input).ok()?,
    };
    Some(parts(&url).to_vec())
}

/// `href` with the part `field` set to `value` as the URL Standard's setter does (a value it
/// rejects leaves the URL unchanged), or undefined when `href` is `href` and its value does
/// not parse (the `href` setter throws then).
fn set(href: String, field: String, value: String) -> Option<Vec<String>> {
    let mut url = Url::parse(&href).ok()?;
    let result = match field.as_str() {
        "href" => quirks::set_href(&mut url, &value).map_err(|_| ()),
        "protocol" => quirks::set_protocol(&mut url, &value),
        "username" => quirks::set_username(&mut url, &value),
        "password" => quirks::set_password(&mut url, &value),
        "host" => quirks::set_host(&mut url, &value),
        "hostname" => quirks::set_hostname(&mut url, &value),
        "port" => quirks::set_port(&mut url, &value),
        "pathname" => {
            quirks::set_pathname(&mut url, &value);
            Ok(())
        }
        "search" => {
            quirks::set_search(&mut url, &value);
            Ok(())
        }
        "hash" => {
            quirks::set_hash(&mut url, &value);
            Ok(())
        }
        _ => Ok(()),
    };
    // Only the href setter throws; the others ignore a value they reject.
    if field == "href" && result.is_err() {
        return None;
    }
    Some(parts(&url).to_vec())
}

/// `native.urlParse` and `native.urlSet`.
pub fn install<'js>(ctx: &Ctx<'js>, native: &Object<'js>) -> Result<()> {
    native.set("urlParse", Function::new(ctx.clone(), parse)?)?;
    native.set("urlSet", Function::new(ctx.clone(), set)?)?;
    Ok(())
}
