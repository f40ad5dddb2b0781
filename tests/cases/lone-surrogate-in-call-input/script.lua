local ok, e = pcall(tools.echo, { s = "\u{D800}" })
return ok and "sent" or e.code
